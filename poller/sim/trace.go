package sim

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// Trace is a posting trace: for each feed, the sorted times at which it
// published a new item. A Trace is read-only once built and safe for
// concurrent use by any number of simulations.
type Trace struct {
	// Start and End bound the trace; postings lie in [Start, End).
	Start, End time.Time
	// IDs names the feeds (CSV feed_id, or "f0001" for generated traces).
	IDs []string
	// Postings[i] holds feed i's posting times as offsets from Start, sorted.
	Postings [][]time.Duration
}

// Len returns the number of feeds.
func (t *Trace) Len() int { return len(t.Postings) }

// Count returns the total number of postings.
func (t *Trace) Count() int {
	n := 0
	for _, p := range t.Postings {
		n += len(p)
	}
	return n
}

// Week is seven days.
const Week = 7 * 24 * time.Hour

// GenConfig parameterises [Generate]. Its zero value, after [GenConfig.withDefaults],
// reproduces what Sia, Cho & Cho (2007) report for ~9,600 real feeds over 13 weeks.
type GenConfig struct {
	Feeds int    // number of feeds; default 1000
	Seed  uint64 // the same seed gives the same trace
	// Start is the first instant of the trace (default Monday 2026-01-05 00:00 UTC);
	// Duration its length (default 13 weeks).
	Start    time.Time
	Duration time.Duration
	// Postings per feed over 13 weeks follow count ∝ x^-Exponent on [1, MaxCount]
	// (defaults 0.78 and 4900), scaled linearly when Duration differs.
	Exponent float64
	MaxCount float64
	// Each feed's daily cycle peaks at PeakHour ± PeakSpread (normal; defaults
	// 13 and 2.5 h) with a width drawn uniformly in [WidthMin, WidthMax]
	// (default 1.5–4 h standard deviation) over a night floor of Floor (default
	// 0.1 of the mean daily rate).
	PeakHour, PeakSpread float64
	WidthMin, WidthMax   float64
	Floor                float64
	// Weekend days post at a feed-specific factor in [WeekendMin, WeekendMax]
	// (default 0.4–0.9) of weekdays.
	WeekendMin, WeekendMax float64
	// Every posting triggers on average Burst follow-ups (default 0.3), each
	// after an exponential delay of mean BurstDelay (default 30 min); follow-ups
	// may trigger their own, so a feed's expected total stays its drawn count.
	Burst      float64
	BurstDelay time.Duration
	// Homogeneous drops the daily and weekly cycles and the bursts: each feed
	// is a homogeneous Poisson process, the textbook case in which
	// rate-proportional polling exactly matches flat polling.
	Homogeneous bool
}

func (c GenConfig) withDefaults() GenConfig {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	if c.Feeds == 0 {
		c.Feeds = 1000
	}
	if c.Start.IsZero() {
		c.Start = time.Date(2026, time.January, 5, 0, 0, 0, 0, time.UTC)
	}
	if c.Duration == 0 {
		c.Duration = 13 * Week
	}
	def(&c.Exponent, 0.78)
	def(&c.MaxCount, 4900)
	def(&c.PeakHour, 13)
	def(&c.PeakSpread, 2.5)
	def(&c.WidthMin, 1.5)
	def(&c.WidthMax, 4)
	def(&c.Floor, 0.1)
	def(&c.WeekendMin, 0.4)
	def(&c.WeekendMax, 0.9)
	def(&c.Burst, 0.3)
	if c.BurstDelay == 0 {
		c.BurstDelay = 30 * time.Minute
	}
	return c
}

// FeedModel is the hidden posting model of one generated feed, kept so tests
// and plots can compare what a policy learned with the truth.
type FeedModel struct {
	Count   float64 // expected postings over the trace
	Peak    float64 // hour of day (UTC) of the daily peak
	Width   float64 // standard deviation of the daily peak, hours
	Weekend float64 // weekend rate relative to weekdays
}

// Generate builds a seeded synthetic trace: a periodic inhomogeneous Poisson
// process per feed (daily cycle × weekly cycle) with self-exciting bursts.
// Feed i's postings depend only on (Seed, i), so traces of different sizes
// share their first feeds.
func Generate(cfg GenConfig) (*Trace, []FeedModel) {
	cfg = cfg.withDefaults()
	tr := &Trace{
		Start:    cfg.Start,
		End:      cfg.Start.Add(cfg.Duration),
		IDs:      make([]string, cfg.Feeds),
		Postings: make([][]time.Duration, cfg.Feeds),
	}
	models := make([]FeedModel, cfg.Feeds)
	for i := range cfg.Feeds {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
		tr.IDs[i] = fmt.Sprintf("f%04d", i)
		models[i], tr.Postings[i] = genFeed(cfg, rng)
	}
	return tr, models
}

func genFeed(cfg GenConfig, rng *rand.Rand) (FeedModel, []time.Duration) {
	// Inverse CDF of the density ∝ x^-a on [1, max].
	b := 1 - cfg.Exponent
	x := math.Pow(1+rng.Float64()*(math.Pow(cfg.MaxCount, b)-1), 1/b)
	m := FeedModel{
		Count:   x * float64(cfg.Duration) / float64(13*Week),
		Peak:    cfg.PeakHour + rng.NormFloat64()*cfg.PeakSpread,
		Width:   cfg.WidthMin + rng.Float64()*(cfg.WidthMax-cfg.WidthMin),
		Weekend: cfg.WeekendMin + rng.Float64()*(cfg.WeekendMax-cfg.WeekendMin),
	}
	if cfg.Homogeneous {
		m.Peak, m.Width, m.Weekend = 0, 0, 1
		n := int(distuv.Poisson{Lambda: m.Count, Src: rng}.Rand())
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = time.Duration(rng.Int64N(int64(cfg.Duration)))
		}
		slices.Sort(out)
		return m, out
	}
	// Base (immigrant) postings: expected total / (1 - branching ratio).
	pois := distuv.Poisson{Lambda: m.Count * (1 - cfg.Burst), Src: rng}
	nBase := int(pois.Rand())
	days := int(cfg.Duration / (24 * time.Hour))
	if days < 1 {
		days = 1
	}
	// Day weights: weekdays 1, weekends m.Weekend (relative to Start's weekday).
	cum := make([]float64, days)
	total := 0.0
	for d := range days {
		w := 1.0
		switch cfg.Start.AddDate(0, 0, d).Weekday() {
		case time.Saturday, time.Sunday:
			w = m.Weekend
		}
		total += w
		cum[d] = total
	}
	out := make([]time.Duration, 0, int(m.Count)+4)
	for range nBase {
		d, _ := slices.BinarySearch(cum, rng.Float64()*total)
		var h float64
		if rng.Float64() < cfg.Floor {
			h = rng.Float64() * 24
		} else {
			h = math.Mod(m.Peak+rng.NormFloat64()*m.Width, 24)
			if h < 0 {
				h += 24
			}
		}
		t := time.Duration(d)*24*time.Hour + time.Duration(h*float64(time.Hour))
		out = append(out, t)
	}
	// Bursts: a branching process with Poisson(Burst) children per posting.
	child := distuv.Poisson{Lambda: cfg.Burst, Src: rng}
	for i := 0; i < len(out); i++ {
		for range int(child.Rand()) {
			t := out[i] + time.Duration(rng.ExpFloat64()*float64(cfg.BurstDelay))
			if t < cfg.Duration {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return m, out
}

// ReadCSV reads a recorded trace: one posting per line as `feed_id,time` with
// an RFC 3339 time; an optional header line starting with "feed_id" is
// skipped. Feeds keep the order of their first appearance. The trace starts at
// the earliest posting's midnight (UTC) and ends one second after the latest
// posting, unless start/end are non-zero.
func ReadCSV(r io.Reader, start, end time.Time) (*Trace, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 2
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	index := map[string]int{}
	var ids []string
	var times [][]time.Time
	line := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read trace: %w", err)
		}
		line++
		if line == 1 && strings.EqualFold(strings.TrimSpace(rec[0]), "feed_id") {
			continue
		}
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(rec[1]))
		if err != nil {
			return nil, fmt.Errorf("trace line %d: %w", line, err)
		}
		id := strings.TrimSpace(rec[0])
		i, ok := index[id]
		if !ok {
			i = len(ids)
			index[id] = i
			ids = append(ids, id)
			times = append(times, nil)
		}
		times[i] = append(times[i], t.UTC())
	}
	if len(ids) == 0 {
		return nil, errors.New("read trace: no postings")
	}
	lo, hi := times[0][0], times[0][0]
	for _, ts := range times {
		for _, t := range ts {
			if t.Before(lo) {
				lo = t
			}
			if t.After(hi) {
				hi = t
			}
		}
	}
	if start.IsZero() {
		start = lo.Truncate(24 * time.Hour)
	}
	if end.IsZero() {
		end = hi.Add(time.Second)
	}
	if !end.After(start) {
		return nil, fmt.Errorf("read trace: end %s not after start %s", end, start)
	}
	if d := end.Sub(start); !start.Add(d).Equal(end) {
		return nil, fmt.Errorf("read trace: %s to %s is too long a span", start, end)
	}
	tr := &Trace{Start: start, End: end, IDs: ids, Postings: make([][]time.Duration, len(ids))}
	for i, ts := range times {
		ps := make([]time.Duration, 0, len(ts))
		for _, t := range ts {
			if t.Before(start) || !t.Before(end) {
				continue
			}
			ps = append(ps, t.Sub(start))
		}
		slices.Sort(ps)
		tr.Postings[i] = ps
	}
	return tr, nil
}

// WriteCSV writes tr in the format [ReadCSV] reads, with a header line.
func WriteCSV(w io.Writer, tr *Trace) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"feed_id", "time"}); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	for i, ps := range tr.Postings {
		for _, p := range ps {
			if err := cw.Write([]string{tr.IDs[i], tr.Start.Add(p).Format(time.RFC3339)}); err != nil {
				return fmt.Errorf("write trace: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	return nil
}
