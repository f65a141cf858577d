package sim

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var t0 = time.Date(2026, time.January, 5, 0, 0, 0, 0, time.UTC)

func TestPageFetch(t *testing.T) {
	h := time.Hour
	tests := []struct {
		name     string
		cfg      PageConfig
		postings []time.Duration
		polls    []time.Duration
		// per poll: changed, notModified, published offset (-1 = none), missed, seen
		want []fetchWant
	}{
		{
			name:     "all items, 304",
			cfg:      PageConfig{},
			postings: []time.Duration{1 * h, 2 * h, 5 * h},
			polls:    []time.Duration{0, 3 * h, 4 * h, 6 * h},
			want: []fetchWant{
				{changed: true, pub: -1}, // the first fetch of an empty page stores a version
				{changed: true, pub: -1, seen: 2, newItems: 2},
				{notModified: true, pub: -1},
				{changed: true, pub: -1, seen: 1, newItems: 1},
			},
		},
		{
			name:     "K=2 with dates drops the oldest",
			cfg:      PageConfig{K: 2, Dates: true},
			postings: []time.Duration{1 * h, 2 * h, 3 * h, 5 * h},
			polls:    []time.Duration{4 * h, 6 * h},
			want: []fetchWant{
				// The first fetch has no previous version: ids unknown, every date.
				{changed: true, pub: 3 * h, missed: 1, seen: 2, dates: []time.Duration{2 * h, 3 * h}},
				{changed: true, pub: 5 * h, seen: 1, newItems: 1, dates: []time.Duration{5 * h}},
			},
		},
		{
			name:     "K=2: a page turned over shows only its last 2 new items",
			cfg:      PageConfig{K: 2, Dates: true},
			postings: []time.Duration{1 * h, 2 * h, 3 * h, 4 * h, 5 * h},
			polls:    []time.Duration{1 * h, 6 * h},
			want: []fetchWant{
				{changed: true, pub: 1 * h, seen: 1, dates: []time.Duration{1 * h}},
				{changed: true, pub: 5 * h, missed: 2, seen: 2, newItems: 2, dates: []time.Duration{4 * h, 5 * h}},
			},
		},
		{
			name:     "no conditional GET: 200 unchanged keeps dates",
			cfg:      PageConfig{Dates: true, NoConditional: true},
			postings: []time.Duration{1 * h},
			polls:    []time.Duration{2 * h, 3 * h},
			want: []fetchWant{
				{changed: true, pub: 1 * h, seen: 1, dates: []time.Duration{1 * h}},
				{pub: 1 * h}, // same page: no new id, no newer date
			},
		},
		{
			name:     "posting at the poll instant is seen",
			postings: []time.Duration{2 * h},
			polls:    []time.Duration{2 * h},
			want:     []fetchWant{{changed: true, pub: -1, seen: 1}}, // a first fetch: ids unknown
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := page{cfg: tt.cfg, start: t0, postings: tt.postings}
			for i, at := range tt.polls {
				obs, missLo, seenLo, seenHi := p.fetch(at)
				w := tt.want[i]
				if obs.Changed != w.changed || obs.NotModified != w.notModified {
					t.Errorf("poll %d: changed=%v notModified=%v, want %v %v", i, obs.Changed, obs.NotModified, w.changed, w.notModified)
				}
				if !obs.Time.Equal(t0.Add(at)) {
					t.Errorf("poll %d: time %v, want %v", i, obs.Time, t0.Add(at))
				}
				wantPub := time.Time{}
				if w.pub >= 0 {
					wantPub = t0.Add(w.pub)
				}
				if !obs.Published.Equal(wantPub) {
					t.Errorf("poll %d: published %v, want %v", i, obs.Published, wantPub)
				}
				if seenLo-missLo != w.missed || seenHi-seenLo != w.seen {
					t.Errorf("poll %d: missed %d seen %d, want %d %d", i, seenLo-missLo, seenHi-seenLo, w.missed, w.seen)
				}
				var dates []time.Duration
				for _, d := range obs.Dates {
					dates = append(dates, d.Sub(t0))
				}
				if obs.NewItems != w.newItems || !slices.Equal(dates, w.dates) {
					t.Errorf("poll %d: new items %d dates %v, want %d %v", i, obs.NewItems, dates, w.newItems, w.dates)
				}
			}
		})
	}
}

type fetchWant struct {
	changed, notModified bool
	pub                  time.Duration
	missed, seen         int
	newItems             int             // Observation.NewItems
	dates                []time.Duration // Observation.Dates, as offsets
}

func TestSimulateFlatExactDelays(t *testing.T) {
	// One feed polled every 6 h from t0 (phase 0 for feed 0): postings at
	// 14d+1h and 14d+5h are seen at 14d+6h (delays 5 h and 1 h); one at
	// 20d+17h is seen at 20d+18h (1 h); one in the learning weeks is not
	// measured; one at 20d+23h is still unseen when the trace ends at 21d,
	// and seen by the poll scheduled at 21d (1 h, not counted as a poll).
	day := 24 * time.Hour
	tr := &Trace{
		Start: t0, End: t0.Add(3 * Week), IDs: []string{"a"},
		Postings: [][]time.Duration{{3 * time.Hour, 14*day + time.Hour, 14*day + 5*time.Hour, 20*day + 17*time.Hour, 20*day + 23*time.Hour}},
	}
	r, err := Simulate(context.Background(), tr, Config{}, Flat(), 6*time.Hour, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Budget != 28 || r.Polls != 28 {
		t.Errorf("budget %d polls %d, want 28 28", r.Budget, r.Polls)
	}
	if r.Postings != 4 || r.Seen != 3 || r.Missed != 0 || r.Unseen != 1 {
		t.Errorf("postings %d seen %d missed %d unseen %d, want 4 3 0 1", r.Postings, r.Seen, r.Missed, r.Unseen)
	}
	if want := 2 * time.Hour; r.Mean != want {
		t.Errorf("mean %v, want %v", r.Mean, want)
	}
	if r.Max != 5*time.Hour || r.P50 != time.Hour {
		t.Errorf("max %v p50 %v, want 5h 1h", r.Max, r.P50)
	}
	if r.Empty != 26 {
		t.Errorf("empty polls %d, want 26", r.Empty)
	}
}

func TestSimulateCancelled(t *testing.T) {
	tr, _ := Generate(GenConfig{Feeds: 5, Seed: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Simulate(ctx, tr, Config{}, Flat(), 6*time.Hour, 1); err == nil {
		t.Fatal("Simulate with a cancelled context succeeded")
	}
}

// TestBenchmarkProperties is the CI smoke test: 100 feeds (30 under the
// race detector), all contenders, all budgets.
func TestBenchmarkProperties(t *testing.T) {
	feeds := 100
	if raceEnabled {
		feeds = 30
	}
	tr, _ := Generate(GenConfig{Feeds: feeds, Seed: 1})
	for _, pc := range []PageConfig{{}, {K: 10, Dates: true}} {
		rep, err := Benchmark(context.Background(), tr, Options{Config: Config{Page: pc}, Watch: -1})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Budgets) != 4 || len(rep.Budgets[0].Rows) != len(Standard()) {
			t.Fatalf("report has %d budgets × %d rows", len(rep.Budgets), len(rep.Budgets[0].Rows))
		}
		prevFlat := time.Duration(0)
		for _, b := range rep.Budgets { // ascending Ī: less budget each time
			flat := b.Rows[0]
			if flat.Mean < prevFlat {
				t.Errorf("%+v: flat's delay %v at Ī=%v is below %v at a larger budget", pc, flat.Mean, b.Interval, prevFlat)
			}
			prevFlat = flat.Mean
			for _, r := range b.Rows {
				name := r.Policy + " at " + b.Interval.String()
				if dev := math.Abs(float64(r.Polls)/float64(b.Budget) - 1); dev > 0.005 {
					t.Errorf("%+v %s: %d polls vs budget %d (%.2f %%)", pc, name, r.Polls, b.Budget, 100*dev)
				}
				if r.Seen+r.Missed+r.Unseen != r.Postings || r.Postings == 0 {
					t.Errorf("%+v %s: seen %d + missed %d + unseen %d != postings %d", pc, name, r.Seen, r.Missed, r.Unseen, r.Postings)
				}
				if len(r.delays) != r.Seen+r.Unseen {
					t.Errorf("%+v %s: %d delays for %d seen + %d unseen postings", pc, name, len(r.delays), r.Seen, r.Unseen)
				}
				if len(r.delays) > 0 && r.delays[0] < 0 { // sorted
					t.Errorf("%+v %s: negative delay %v s", pc, name, r.delays[0])
				}
				if r.Mean <= 0 || r.P50 > r.P95 || r.P95 > r.Max {
					t.Errorf("%+v %s: mean %v p50 %v p95 %v max %v", pc, name, r.Mean, r.P50, r.P95, r.Max)
				}
				var polls, delivered, feeds int
				for _, cs := range r.Classes {
					polls, delivered, feeds = polls+cs.Polls, delivered+cs.Delivered, feeds+cs.Feeds
				}
				if polls != r.Polls || delivered != r.Seen+r.Unseen || feeds != tr.Len() {
					t.Errorf("%+v %s: classes add up to %d polls, %d delivered, %d feeds", pc, name, polls, delivered, feeds)
				}
				if pc.K == 0 && r.Missed != 0 {
					t.Errorf("%+v %s: %d missed with every item on the page", pc, name, r.Missed)
				}
			}
		}
	}
}

func TestBenchmarkEqualDelay(t *testing.T) {
	tr, _ := Generate(GenConfig{Feeds: 40, Seed: 2})
	rep, err := Benchmark(context.Background(), tr, Options{
		Intervals:  []time.Duration{12 * time.Hour},
		Contenders: []Contender{Flat(), SqrtReference()},
		EqualDelay: true,
		Watch:      0, WatchPolicy: "flat", WatchInterval: 12 * time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	b := rep.Budgets[0]
	flat, sq := b.Rows[0], b.Rows[1]
	if sq.EqualDelayPolls == 0 {
		t.Fatal("no equal-delay search")
	}
	// Re-run at the found scale: its delay matches flat's within tolerance.
	r, err := Simulate(context.Background(), tr, Config{}, SqrtReference(), 12*time.Hour, sq.EqualDelayScale)
	if err != nil {
		t.Fatal(err)
	}
	if r.Polls != sq.EqualDelayPolls {
		t.Errorf("re-run made %d polls, search said %d", r.Polls, sq.EqualDelayPolls)
	}
	if dev := math.Abs(float64(r.Mean)/float64(flat.Mean) - 1); dev > 0.005 {
		t.Errorf("equal-delay run: mean %v vs flat %v (%.2f %%)", r.Mean, flat.Mean, 100*dev)
	}
	if rep.Watch == nil || rep.Watch.Feed != 0 || len(rep.Watch.Polls) != flat.Budget/tr.Len()*13/11 {
		t.Errorf("watch track: %+v", rep.Watch)
	}
}

func TestFindScale(t *testing.T) {
	tests := []struct {
		name  string
		root  float64
		slope float64
		f     func(s, root float64) float64
	}{
		{"inverse", 7.3, -1, func(s, r float64) float64 { return math.Log(r / s) }},
		{"steep", 0.02, 1, func(s, r float64) float64 { return 3 * math.Log(s/r) }},
		{"step", 3, -1, func(s, r float64) float64 { return math.Log(math.Round(100*r/s) / 100) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			s, err := findScale(func(s float64) (float64, error) { calls++; return tt.f(s, tt.root), nil }, 1, tt.slope, 0.005)
			if err != nil {
				t.Fatal(err)
			}
			if g := tt.f(s, tt.root); math.Abs(math.Expm1(g)) > 0.005 {
				t.Errorf("scale %v: g = %v after %d calls", s, g, calls)
			}
		})
	}
}

func TestReferencePolicies(t *testing.T) {
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	items := func(n int, ts time.Time) []time.Time {
		out := make([]time.Time, n)
		for i := range out {
			out[i] = ts
		}
		return out
	}
	tests := []struct {
		name   string
		pol    PagePolicy
		fetch  []Fetch
		expect time.Duration // wait after the last fetch
	}{
		{"rate: nothing seen", &ratePolicy{}, []Fetch{{}}, 24 * time.Hour},
		{"rate: 14 in a week", &ratePolicy{}, []Fetch{{Items: items(14, at(0))}}, 12 * time.Hour},
		{"rate: clamped at 5 min", &ratePolicy{}, []Fetch{{Items: items(10000, at(0))}}, 5 * time.Minute},
		{"rate: old items leave the window", &ratePolicy{}, []Fetch{
			{Items: items(14, at(0))},
			{Items: items(7, at(200))},
		}, 24 * time.Hour},
		{"sqrt: 4 a day over 2 days → √6 h", &sqrtPolicy{}, []Fetch{
			{Items: items(0, at(0))},
			{Items: items(8, at(48))},
		}, time.Duration(math.Sqrt(6) * float64(time.Hour))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got time.Duration
			for i, f := range tt.fetch {
				if f.Time.IsZero() {
					f.Time = at(0)
					if len(f.Items) > 0 {
						f.Time = f.Items[0]
					} else if i > 0 {
						f.Time = at(48 * i)
					}
				}
				got = tt.pol.Observe(f)
			}
			if d := got - tt.expect; d < -time.Second || d > time.Second {
				t.Errorf("wait %v, want %v", got, tt.expect)
			}
		})
	}
}

func TestOutputs(t *testing.T) {
	tr, _ := Generate(GenConfig{Feeds: 20, Seed: 3})
	rep, err := Benchmark(context.Background(), tr, Options{
		Intervals: []time.Duration{8 * time.Hour, 24 * time.Hour},
		Watch:     1, WatchPolicy: "smart α=0.5", WatchInterval: 8 * time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	var tab, csv, png1, png2 bytes.Buffer
	if err := WriteTable(&tab, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"budget Ī = 8h", "smart α=auto", "sqrt-rate (Sia-Cho)", "mean delay"} {
		if !strings.Contains(tab.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tab.String())
		}
	}
	if err := WriteReportCSV(&csv, rep); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(csv.String(), "\n"); lines != 1+2*len(Standard()) {
		t.Errorf("csv has %d lines:\n%s", lines, csv.String())
	}
	if err := PlotDelay(&png1, rep); err != nil {
		t.Fatal(err)
	}
	from := tr.Start.Add(2 * Week)
	if err := PlotWatch(&png2, tr, rep.Watch, "smart", from, from.Add(Week)); err != nil {
		t.Fatal(err)
	}
	for i, b := range []*bytes.Buffer{&png1, &png2} {
		if !bytes.HasPrefix(b.Bytes(), []byte("\x89PNG")) {
			t.Errorf("plot %d is not a PNG", i)
		}
	}
}
