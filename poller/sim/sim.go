package sim

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/dynamo-rss/dynamo/poller"
)

// Config holds what every simulation of a benchmark shares.
type Config struct {
	Page PageConfig
	// Learn is the warm-up at the start of the trace: polls and postings in it
	// are not measured (default 2 weeks).
	Learn time.Duration
	// MinGap is the shortest time between two polls of a page (default 10 min).
	MinGap time.Duration
	// Tolerance is how close to the budget a scaled policy's poll count must
	// come (default 0.005, i.e. 0.5 %).
	Tolerance float64
}

func (c Config) withDefaults() Config {
	if c.Learn == 0 {
		c.Learn = 2 * Week
	}
	if c.MinGap == 0 {
		c.MinGap = 10 * time.Minute
	}
	if c.Tolerance == 0 {
		c.Tolerance = 0.005
	}
	return c
}

// Run is one simulation: one policy, one global scale factor, the whole trace.
type Run struct {
	Policy   string
	Interval time.Duration // the budget's mean interval Ī
	Scale    float64       // global factor applied to the policy's waits (1 for flat)

	Budget   int // M = feeds × measured time / Ī
	Polls    int // polls in the measured window
	Empty    int // of those, polls that found nothing new
	Postings int // postings published in the measured window, each exactly one of:
	Seen     int // … first seen by a poll before the trace ends
	Unseen   int // … unseen when the trace ends, seen by the page's next poll after it
	Missed   int // … pushed off a K-item page before any poll saw them

	// Mean is the mean delay of seen and unseen postings, from publication to
	// the poll that first saw them (for unseen ones, the page's first poll
	// after the end, which the policy had already scheduled); Max the
	// largest.
	Mean, P50, P95, Max time.Duration

	// Classes breaks the figures down by how busy feeds are (see [ClassNames]).
	Classes [4]ClassStats

	delays []float32   // seconds, sorted once percentiles are set
	sum    float64     // seconds
	Watch  *WatchTrack // the watched page, when asked for
}

// ClassStats are one activity class's share of a run.
type ClassStats struct {
	Feeds, Polls, Delivered int     // Delivered: seen + unseen postings
	DelaySum                float64 // seconds
}

// Mean returns the class's mean delay.
func (c ClassStats) Mean() time.Duration {
	if c.Delivered == 0 {
		return 0
	}
	return time.Duration(c.DelaySum / float64(c.Delivered) * float64(time.Second))
}

// ClassNames names the activity classes of [Run.Classes]: feeds by their
// postings per day over the whole trace.
func ClassNames() []string {
	return []string{"< 0.5/day", "0.5–5/day", "5–20/day", "≥ 20/day"}
}

func classOf(postings int, span time.Duration) int {
	perDay := float64(postings) / (span.Hours() / 24)
	switch {
	case perDay < 0.5:
		return 0
	case perDay < 5:
		return 1
	case perDay < 20:
		return 2
	}
	return 3
}

// WatchTrack records one page's life under one policy, for plots.
type WatchTrack struct {
	Feed     int
	Polls    []time.Time
	Estimate []time.Duration // the policy's estimate after each poll
	Wait     []time.Duration // the scaled wait it chose after each poll
}

// runOpts selects the extra work of a run.
type runOpts struct {
	watch int // feed to record, or -1
}

// Simulate runs contender c over tr with a budget of one poll per page every
// interval on average, multiplying the policy's waits by scale (ignored for
// unscaled contenders). A virtual clock drives the project's scheduler queue
// ([poller.Queue]) over all pages: pop the earliest page, poll its simulated
// origin, let its policy choose the next wait, push it back.
func Simulate(ctx context.Context, tr *Trace, cfg Config, c Contender, interval time.Duration, scale float64) (Run, error) {
	r, err := simulate(ctx, tr, cfg.withDefaults(), c, interval, scale, runOpts{watch: -1})
	r.percentiles()
	return r, err
}

func simulate(ctx context.Context, tr *Trace, cfg Config, c Contender, interval time.Duration, scale float64, o runOpts) (Run, error) {
	if !c.Scaled {
		scale = 1
	}
	newPolicy, err := c.New(interval)
	if err != nil {
		return Run{}, fmt.Errorf("%s: %w", c.Name, err)
	}
	measure := cfg.Learn
	span := tr.End.Sub(tr.Start)
	if measure >= span {
		return Run{}, fmt.Errorf("trace of %v is not longer than the learning period %v", span, measure)
	}
	n := tr.Len()
	r := Run{
		Policy: c.Name, Interval: interval, Scale: scale,
		Budget: budget(n, span-measure, interval),
	}
	pages := make([]page, n)
	pols := make([]PagePolicy, n)
	ids := make([]string, n)
	index := make(map[string]int, n)
	var q poller.Queue
	class := make([]int, n)
	for i := range n {
		class[i] = classOf(len(tr.Postings[i]), span)
		r.Classes[class[i]].Feeds++
		pages[i] = page{cfg: cfg.Page, start: tr.Start, postings: tr.Postings[i]}
		pols[i] = newPolicy(i)
		pols[i].Start()
		ids[i] = strconv.Itoa(i)
		index[ids[i]] = i
		// Stagger first polls over one interval with a stable, well spread offset.
		phase := math.Mod(float64(i)*0.6180339887498949, 1)
		q.Push(ids[i], tr.Start.Add(time.Duration(phase*float64(interval))))
	}
	if o.watch >= 0 && o.watch < n {
		r.Watch = &WatchTrack{Feed: o.watch}
	}
	var items []time.Time
	for step := 0; ; step++ {
		if step%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return Run{}, fmt.Errorf("simulate %s: %w", c.Name, err)
			}
		}
		id, now, ok := q.Pop()
		if !ok {
			break
		}
		at := now.Sub(tr.Start)
		i := index[id]
		pg := &pages[i]
		late := at >= span
		if late && pg.shown == len(pg.postings) {
			continue // past the end with nothing left to see: the page leaves the queue
		}
		// Past the end, the page's first poll still delivers what it had not
		// seen: its delay counts, the poll does not (no budget after the end).
		obs, missLo, seenLo, seenHi := pg.fetch(at)
		measured := at >= measure && !late
		cs := &r.Classes[class[i]]
		if measured {
			r.Polls++
			cs.Polls++
			if !obs.Changed {
				r.Empty++
			}
		}
		items = items[:0]
		for k := seenLo; k < seenHi; k++ {
			p := pg.postings[k]
			if cfg.Page.Dates {
				items = append(items, tr.Start.Add(p))
			} else {
				items = append(items, now)
			}
			if p >= measure {
				d := (at - p).Seconds()
				if late {
					r.Unseen++
				} else {
					r.Seen++
				}
				r.sum += d
				cs.Delivered++
				cs.DelaySum += d
				if d > r.Max.Seconds() {
					r.Max = at - p
				}
				r.delays = append(r.delays, float32(d))
			}
		}
		for k := missLo; k < seenLo; k++ {
			if pg.postings[k] >= measure {
				r.Missed++
			}
		}
		if late {
			continue // everything is shown now: no reason to poll again
		}
		wait := pols[i].Observe(Fetch{Observation: obs, Items: items})
		wait = max(time.Duration(float64(wait)*scale), cfg.MinGap)
		if r.Watch != nil && i == r.Watch.Feed {
			r.Watch.Polls = append(r.Watch.Polls, now)
			r.Watch.Estimate = append(r.Watch.Estimate, pols[i].Estimate())
			r.Watch.Wait = append(r.Watch.Wait, wait)
		}
		q.Push(id, now.Add(wait))
	}
	for i := range pages {
		ps := pages[i].postings
		lo, _ := slices.BinarySearch(ps, measure)
		r.Postings += len(ps) - lo
	}
	if n := r.Seen + r.Unseen; n > 0 {
		r.Mean = time.Duration(r.sum / float64(n) * float64(time.Second))
	}
	return r, nil
}

// percentiles sorts the delays and sets P50 and P95.
func (r *Run) percentiles() {
	if len(r.delays) == 0 {
		return
	}
	slices.Sort(r.delays)
	r.P50 = quantile(r.delays, 0.50)
	r.P95 = quantile(r.delays, 0.95)
}

// budget returns M = n × measured / Ī, the polls every policy may spend.
func budget(n int, measured, interval time.Duration) int {
	return int(math.Round(float64(n) * float64(measured) / float64(interval)))
}

// quantile of sorted seconds, nearest rank.
func quantile(sorted []float32, q float64) time.Duration {
	k := int(math.Ceil(q*float64(len(sorted)))) - 1
	k = min(max(k, 0), len(sorted)-1)
	return time.Duration(float64(sorted[k]) * float64(time.Second))
}
