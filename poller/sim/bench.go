package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
)

// DefaultIntervals returns the budgets of the benchmark as mean poll
// intervals per page: Sia, Cho & Cho's 6, 8, 12 and 24 hours.
func DefaultIntervals() []time.Duration {
	return []time.Duration{6 * time.Hour, 8 * time.Hour, 12 * time.Hour, 24 * time.Hour}
}

// Options configures [Benchmark]. The zero value runs the standard
// contenders over the default budgets with the default [Config].
type Options struct {
	Config
	Intervals  []time.Duration // budgets as mean intervals Ī; default 6, 8, 12, 24 h
	Contenders []Contender     // default [Standard]; the first unscaled one is the baseline
	// EqualDelay also searches, for every scaled contender, the polls it needs
	// to match the baseline's mean delay (a second bisection, on the budget).
	EqualDelay bool
	// Watch records one page (by index) under the contender named WatchPolicy
	// at the budget WatchInterval; Watch < 0 records nothing.
	Watch         int
	WatchPolicy   string
	WatchInterval time.Duration
	// Workers bounds concurrent simulations (default GOMAXPROCS).
	Workers int
}

// Row is one contender at one budget.
type Row struct {
	Run
	Ratio float64 // mean delay ÷ the baseline's at the same budget
	// Calls is how many simulations the scale searches took.
	Calls int
	// EqualDelayPolls is how many measured polls the contender needs to match
	// the baseline's mean delay (0 when not searched), EqualDelayScale the
	// factor that gets there.
	EqualDelayPolls int
	EqualDelayScale float64
}

// Budget is the comparison at one budget.
type Budget struct {
	Interval time.Duration
	Budget   int
	Rows     []Row
}

// Report is a whole benchmark.
type Report struct {
	Feeds, Postings int
	Page            PageConfig
	Budgets         []Budget
	Elapsed         time.Duration // wall time of the benchmark
	Simulations     int
	Watch           *WatchTrack
	// ClassInterval is the budget whose breakdown by feed activity
	// [WriteTable] prints (the watch budget, else the second one).
	ClassInterval time.Duration
}

// Benchmark compares the contenders on tr at every budget: unscaled
// contenders poll at Ī, scaled ones are searched for the global factor that
// spends the same budget within Tolerance. Work runs on
// Workers goroutines, all joined before Benchmark returns.
func Benchmark(ctx context.Context, tr *Trace, o Options) (*Report, error) {
	o.Config = o.Config.withDefaults()
	if len(o.Intervals) == 0 {
		o.Intervals = DefaultIntervals()
	}
	if len(o.Contenders) == 0 {
		o.Contenders = Standard()
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	base := -1
	for i, c := range o.Contenders {
		if !c.Scaled {
			base = i
			break
		}
	}
	if base < 0 {
		return nil, errors.New("benchmark: no unscaled baseline contender (flat)")
	}
	began := time.Now()
	rep := &Report{Feeds: tr.Len(), Postings: tr.Count(), Page: o.Page, Budgets: make([]Budget, len(o.Intervals))}
	rep.ClassInterval = o.Intervals[min(1, len(o.Intervals)-1)]
	if slices.Contains(o.Intervals, o.WatchInterval) {
		rep.ClassInterval = o.WatchInterval
	}
	for b, iv := range o.Intervals {
		rep.Budgets[b] = Budget{Interval: iv, Rows: make([]Row, len(o.Contenders))}
	}
	watch := func(c Contender, iv time.Duration) runOpts {
		ro := runOpts{watch: -1}
		if o.Watch >= 0 && c.Name == o.WatchPolicy && iv == o.WatchInterval {
			ro.watch = o.Watch
		}
		return ro
	}

	// Unscaled contenders first: the baseline's delays are the targets of the
	// equal-delay searches.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.Workers)
	for b, iv := range o.Intervals {
		for ci, c := range o.Contenders {
			if c.Scaled {
				continue
			}
			g.Go(func() error {
				r, err := simulate(gctx, tr, o.Config, c, iv, 1, watch(c, iv))
				if err != nil {
					return err
				}
				r.percentiles()
				rep.Budgets[b].Rows[ci] = Row{Run: r, Calls: 1}
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(o.Workers)
	for b, iv := range o.Intervals {
		target := rep.Budgets[b].Rows[base].Mean
		for ci, c := range o.Contenders {
			if !c.Scaled {
				continue
			}
			g.Go(func() error {
				row, err := scaledRow(gctx, tr, o, c, iv, target, watch(c, iv))
				if err != nil {
					return err
				}
				rep.Budgets[b].Rows[ci] = row
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for b := range rep.Budgets {
		bu := &rep.Budgets[b]
		baseMean := bu.Rows[base].Mean
		bu.Budget = bu.Rows[base].Budget
		for i := range bu.Rows {
			r := &bu.Rows[i]
			if baseMean > 0 {
				r.Ratio = float64(r.Mean) / float64(baseMean)
			}
			rep.Simulations += r.Calls
			if r.Watch != nil {
				rep.Watch = r.Watch
			}
		}
	}
	rep.Elapsed = time.Since(began)
	return rep, nil
}

// scaledRow finds the scale at which c spends the budget and (when asked) the
// polls c needs to match the target mean delay. Every evaluation keeps its
// delays, so the best one is the row itself: no re-run.
func scaledRow(ctx context.Context, tr *Trace, o Options, c Contender, iv, target time.Duration, ro runOpts) (Row, error) {
	var row Row
	m := float64(budget(tr.Len(), tr.End.Sub(tr.Start)-o.Learn, iv))
	// keepBest wraps a simulation's log-ratio so that the run with the
	// smallest |g| — the one findScale returns — is kept.
	keepBest := func(opts runOpts, best *Run, ratio func(Run) float64) func(float64) (float64, error) {
		bestG := math.Inf(1)
		return func(s float64) (float64, error) {
			row.Calls++
			r, err := simulate(ctx, tr, o.Config, c, iv, s, opts)
			if err != nil {
				return 0, err
			}
			g := ratio(r)
			if math.Abs(g) < bestG {
				*best, bestG = r, math.Abs(g)
			}
			return g, nil
		}
	}
	var spend Run
	polls := keepBest(ro, &spend, func(r Run) float64 {
		return math.Log(math.Max(float64(r.Polls), 1) / m)
	})
	// Waits scale the poll count roughly as 1/s: slope −1 in log–log.
	s, err := findScale(polls, 1, -1, o.Tolerance)
	if err != nil {
		return row, fmt.Errorf("%s at %v: budget search: %w", c.Name, iv, err)
	}
	if spend.Scale != s {
		return row, fmt.Errorf("%s at %v: budget search kept scale %v, found %v", c.Name, iv, spend.Scale, s)
	}
	spend.percentiles()
	row.Run = spend
	if !o.EqualDelay || target <= 0 {
		return row, nil
	}
	var match Run
	delay := keepBest(runOpts{watch: -1}, &match, func(r Run) float64 {
		if r.Mean <= 0 {
			return math.Inf(-1)
		}
		return math.Log(float64(r.Mean) / float64(target))
	})
	// Mean delay grows roughly in proportion to the waits: slope +1.
	es, err := findScale(delay, s, 1, o.Tolerance)
	if err != nil {
		return row, fmt.Errorf("%s at %v: equal-delay search: %w", c.Name, iv, err)
	}
	if match.Scale != es {
		return row, fmt.Errorf("%s at %v: equal-delay search kept scale %v, found %v", c.Name, iv, match.Scale, es)
	}
	row.EqualDelayPolls, row.EqualDelayScale = match.Polls, es
	return row, nil
}

// findScale solves g(s) = 0 for a log-ratio g that is monotone in log s with
// the sign of slope, starting at s0: secant steps from the slope guess, then
// Illinois false position once the root is bracketed, then sampling near the
// best point if g is too jumpy to converge. It stops when |e^g − 1| ≤ tol and
// otherwise returns the best scale seen, after at most 100 evaluations.
func findScale(g func(float64) (float64, error), s0, slope, tol float64) (float64, error) {
	const maxEval = 40
	ok := func(v float64) bool { return math.Abs(math.Expm1(v)) <= tol }
	x0 := math.Log(s0)
	// Every evaluation is at exactly math.Exp(x) for the x it returns, so
	// callers can match the returned scale with the run they evaluated.
	g0, err := g(math.Exp(x0))
	if err != nil {
		return 0, err
	}
	best, bestG := x0, math.Abs(g0)
	if ok(g0) {
		return math.Exp(x0), nil
	}
	// Walk along the slope guess until the sign changes.
	x1, g1 := x0, g0
	for range maxEval / 2 {
		step := -g1 / slope
		if math.IsInf(step, 0) || math.IsNaN(step) {
			step = 1
		}
		step = math.Max(math.Min(step, 3), -3) // at most ×20 per step
		x1 += step * 1.1                       // overshoot a little to bracket
		if g1, err = g(math.Exp(x1)); err != nil {
			return 0, err
		}
		if math.Abs(g1) < bestG {
			best, bestG = x1, math.Abs(g1)
		}
		if ok(g1) {
			return math.Exp(x1), nil
		}
		if math.Signbit(g1) != math.Signbit(g0) {
			break
		}
		x0, g0 = x1, g1
	}
	if math.Signbit(g1) == math.Signbit(g0) {
		return math.Exp(best), nil
	}
	// Illinois false position on [x0, x1].
	side := 0
	for range maxEval / 2 {
		x := (x0*g1 - x1*g0) / (g1 - g0)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			x = (x0 + x1) / 2
		}
		gx, err := g(math.Exp(x))
		if err != nil {
			return 0, err
		}
		if math.Abs(gx) < bestG {
			best, bestG = x, math.Abs(gx)
		}
		if ok(gx) {
			return math.Exp(x), nil
		}
		if math.Abs(x1-x0) < 1e-6 {
			break
		}
		if math.Signbit(gx) == math.Signbit(g1) {
			x1, g1 = x, gx
			if side == -1 {
				g0 /= 2
			}
			side = -1
		} else {
			x0, g0 = x, gx
			if side == 1 {
				g1 /= 2
			}
			side = 1
		}
	}
	// A policy with feedback (smart) can make g jump by more than the
	// tolerance for a change of s in the sixth digit: g is then noise around
	// the root, so sample scales within ±1 % of the best until one fits.
	centre := best
	for k := range maxEval {
		x := centre + 0.01*(2*math.Mod(float64(k+1)*0.6180339887498949, 1)-1)
		gx, err := g(math.Exp(x))
		if err != nil {
			return 0, err
		}
		if math.Abs(gx) < bestG {
			best, bestG = x, math.Abs(gx)
		}
		if ok(gx) {
			return math.Exp(x), nil
		}
	}
	return math.Exp(best), nil
}
