package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dynamo-rss/dynamo/poller/sim"
)

const simulateSynopsis = `[flags]

Compares polling policies on a posting trace at equal budgets (the freshness
benchmark): flat, smart α=0.5, smart α=auto, a Miniflux-style rate reference
(its clamps scaled with its waits), Sia–Cho's √rate allocation, and the
budget policy (polls_per_day = feeds × 24 h ÷ Ī, max_interval max(28 h, 2·Ī)). The first 2 weeks learn, the rest is measured.
Without --trace, a seeded synthetic trace of --feeds feeds over 13 weeks is used.`

// cmdSimulate runs the freshness benchmark: see poller/sim.
func cmdSimulate(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("simulate", simulateSynopsis, stdout)
	feeds := fs.Int("feeds", 1000, "number of synthetic feeds")
	seed := fs.Uint64("seed", 1, "seed of the synthetic trace")
	tracePath := fs.String("trace", "", "replay a recorded trace: CSV `FILE` of feed_id,RFC3339 time ('-' for stdin)")
	start := fs.String("start", "", "with --trace: first instant of the trace, RFC 3339 (default: midnight UTC before the first posting)")
	end := fs.String("end", "", "with --trace: end of the trace, RFC 3339 (default: just after the last posting)")
	writeTrace := fs.String("write-trace", "", "also write the trace used as CSV to `FILE`")
	k := fs.Int("k", 0, "items a page shows (0: all of them)")
	dates := fs.Bool("dates", false, "items on the page carry their publication dates")
	no304 := fs.Bool("no304", false, "the origin answers 200 with the same page instead of 304")
	intervals := fs.String("intervals", "6h,8h,12h,24h", "comma-separated `LIST` of budgets, as mean poll intervals per page")
	learn := fs.Duration("learn", 2*sim.Week, "learning period at the start of the trace (not measured)")
	equal := fs.Bool("equal-delay", true, "also search the polls each policy needs to match flat's mean delay")
	csvPath := fs.String("csv", "", "write the results as CSV to `FILE`")
	plots := fs.String("plots", "", "write PNG plots into `DIR`")
	watch := fs.String("watch", "", "feed `ID` to plot under smart α=0.5 (default: the one nearest 3 postings a day)")
	watchInterval := fs.Duration("watch-interval", 8*time.Hour, "budget at which the watched page is plotted")
	workers := fs.Int("workers", 0, "concurrent simulations (default GOMAXPROCS)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &exitError{code: 2, err: fmt.Errorf("simulate: unexpected argument %q", fs.Arg(0))}
	}
	ivs, err := simParseIntervals(*intervals)
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("simulate: --intervals: %w", err)}
	}
	if *k < 0 || *feeds < 1 {
		return &exitError{code: 2, err: errors.New("simulate: --k must be ≥ 0 and --feeds ≥ 1")}
	}

	var tr *sim.Trace
	if *tracePath != "" {
		var from, to time.Time
		for _, f := range []struct {
			name, v string
			t       *time.Time
		}{{"start", *start, &from}, {"end", *end, &to}} {
			if f.v == "" {
				continue
			}
			if *f.t, err = time.Parse(time.RFC3339, f.v); err != nil {
				return &exitError{code: 2, err: fmt.Errorf("simulate: --%s: %w", f.name, err)}
			}
		}
		if tr, err = simReadTrace(*tracePath, stdin, from, to); err != nil {
			return err
		}
	} else {
		tr, _ = sim.Generate(sim.GenConfig{Feeds: *feeds, Seed: *seed})
	}
	if *writeTrace != "" {
		if err := simWriteFile(*writeTrace, func(w io.Writer) error { return sim.WriteCSV(w, tr) }); err != nil {
			return err
		}
	}
	if !slices.Contains(ivs, *watchInterval) {
		*watchInterval = ivs[min(1, len(ivs)-1)] // plot a budget that is simulated
	}
	watchFeed := -1
	if *plots != "" {
		if watchFeed, err = simPickWatch(tr, *watch); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("simulate: %w", err)}
		}
	}
	smart := sim.Smart(0.5, false)
	opts := sim.Options{
		Config: sim.Config{
			Page:  sim.PageConfig{K: *k, Dates: *dates, NoConditional: *no304},
			Learn: *learn,
		},
		Intervals:     ivs,
		EqualDelay:    *equal,
		Watch:         watchFeed,
		WatchPolicy:   smart.Name,
		WatchInterval: *watchInterval,
		Workers:       *workers,
	}
	rep, err := sim.Benchmark(ctx, tr, opts)
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	if err := sim.WriteTable(stdout, rep); err != nil {
		return err
	}
	if *csvPath != "" {
		if err := simWriteFile(*csvPath, func(w io.Writer) error { return sim.WriteReportCSV(w, rep) }); err != nil {
			return err
		}
	}
	if *plots == "" {
		return nil
	}
	tag := "all"
	if *k > 0 {
		tag = fmt.Sprintf("k%d", *k)
	}
	if *dates {
		tag += "-dates"
	}
	delayPath := filepath.Join(*plots, "freshness-delay-"+tag+".png")
	if err := simWriteFile(delayPath, func(w io.Writer) error { return sim.PlotDelay(w, rep) }); err != nil {
		return err
	}
	from := tr.Start.Add(*learn)
	pagePath := filepath.Join(*plots, "freshness-page-"+tag+".png")
	if err := simWriteFile(pagePath, func(w io.Writer) error {
		return sim.PlotWatch(w, tr, rep.Watch, fmt.Sprintf("%s at Ī = %v", smart.Name, *watchInterval), from, from.Add(sim.Week))
	}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nplots: %s %s\n", delayPath, pagePath)
	return nil
}

func simParseIntervals(s string) ([]time.Duration, error) {
	var out []time.Duration
	for f := range strings.SplitSeq(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		if d <= 0 {
			return nil, fmt.Errorf("interval %v is not positive", d)
		}
		out = append(out, d)
	}
	return out, nil
}

func simReadTrace(path string, stdin io.Reader, start, end time.Time) (*sim.Trace, error) {
	if path == "-" {
		tr, err := sim.ReadCSV(bufio.NewReader(stdin), start, end)
		if err != nil {
			return nil, fmt.Errorf("simulate: stdin: %w", err)
		}
		return tr, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	defer f.Close() //nolint:errcheck // read-only file: Close has nothing to report
	tr, err := sim.ReadCSV(bufio.NewReader(f), start, end)
	if err != nil {
		return nil, fmt.Errorf("simulate: %s: %w", path, err)
	}
	return tr, nil
}

// pickWatch returns the feed named id, or the one whose posting count is
// nearest three a day.
func simPickWatch(tr *sim.Trace, id string) (int, error) {
	if id != "" {
		for i, x := range tr.IDs {
			if x == id {
				return i, nil
			}
		}
		return -1, fmt.Errorf("--watch: no feed %q in the trace", id)
	}
	want := 3 * tr.End.Sub(tr.Start).Hours() / 24
	best, bestD := 0, -1.0
	for i, ps := range tr.Postings {
		d := float64(len(ps)) - want
		if d < 0 {
			d = -d
		}
		if bestD < 0 || d < bestD {
			best, bestD = i, d
		}
	}
	return best, nil
}

func simWriteFile(path string, write func(io.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("simulate: %w", cerr)
		}
	}()
	w := bufio.NewWriter(f)
	if err := write(w); err != nil {
		return fmt.Errorf("simulate: %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("simulate: %s: %w", path, err)
	}
	return nil
}
