package sim

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/dynamo-rss/dynamo/poller"
)

// Fetch is what one poll of a page gives a policy: the engine's
// [poller.Observation] (which the project's policies read) plus the items
// this poll saw first, which the reference policies count.
type Fetch struct {
	poller.Observation
	// Items holds, for each item this poll saw for the first time, its
	// publication date when the page shows dates, else the detection time.
	// The slice is reused by the next poll: do not keep it.
	Items []time.Time
}

// PagePolicy is one page's policy with its own learned state: it returns the
// wait before the next poll, before the simulator's global scale factor and
// 10-minute floor. It is owned by one simulation goroutine.
type PagePolicy interface {
	Start() time.Duration
	Observe(f Fetch) time.Duration
	// Estimate is what the policy currently believes the time between
	// updates to be (smart's τ); 0 when it has no such notion.
	Estimate() time.Duration
}

// Contender is one policy under comparison.
type Contender struct {
	Name string
	// Scaled: the policy chooses its own intervals, so every wait it returns is
	// multiplied by one global factor, found by bisection, that makes it spend
	// the budget. Unscaled policies (flat) get the budget's interval directly.
	Scaled bool
	// New returns a factory of per-page policies (given the page's index in
	// the trace) for a budget whose mean interval per page is interval.
	New func(interval time.Duration) (func(feed int) PagePolicy, error)
}

// The smart policy's min, initial and max in the standard contenders: the
// poller's defaults (docs/configuration.md: `policy: {kind: smart, alpha: 0.5,
// initial: 10m, min: 1m, max: 6h}`). Waits are scaled after the policy
// clamps them, so these bound the wait relative to the budget rather than
// absolutely; the 10-minute floor applies after scaling.
const (
	smartMin     = time.Minute
	smartInitial = 10 * time.Minute
	smartMax     = 6 * time.Hour
)

// Flat is the project's flat policy at the budget's interval.
func Flat() Contender {
	return Contender{Name: "flat", New: func(iv time.Duration) (func(feed int) PagePolicy, error) {
		return Project(poller.PolicyConfig{Kind: poller.KindFlat, Interval: iv})
	}}
}

// Smart is the project's smart policy with a fixed α, or α: auto when auto.
func Smart(alpha float64, auto bool) Contender {
	name := fmt.Sprintf("smart α=%g", alpha)
	if auto {
		name = "smart α=auto"
	}
	return Contender{Name: name, Scaled: true, New: func(time.Duration) (func(feed int) PagePolicy, error) {
		return Project(poller.PolicyConfig{
			Kind: poller.KindSmart, Alpha: alpha, AlphaAuto: auto,
			Min: smartMin, Initial: smartInitial, Max: smartMax,
		})
	}}
}

// RateReference is a rate-proportional reference in the style of Miniflux's
// entry_frequency scheduler: wait = 7 days ÷ postings seen in the last week,
// clamped to [5 min, 24 h] and then, like every scaled contender, multiplied
// by the global factor. So its clamps become [5 min, 24 h] × scale (at
// Ī = 24 h about 13 days): it is not Miniflux, whose clamps bound the final
// wait, and is named "rate (scaled clamps)" for that.
func RateReference() Contender {
	return Contender{Name: "rate (scaled clamps)", Scaled: true, New: func(time.Duration) (func(feed int) PagePolicy, error) {
		return func(int) PagePolicy { return &ratePolicy{} }, nil
	}}
}

// SqrtReference is Sia & Cho's resource allocation: each page is polled at
// uniform intervals, at a frequency ∝ √λ where λ is its posting rate counted
// since its first poll.
func SqrtReference() Contender {
	return Contender{Name: "sqrt-rate (Sia-Cho)", Scaled: true, New: func(time.Duration) (func(feed int) PagePolicy, error) {
		return func(int) PagePolicy { return &sqrtPolicy{} }, nil
	}}
}

// BudgetMaxInterval is the budget contender's max_interval at a budget of
// mean interval iv: max(28 h, 2·Ī), the largest delay the issue allows
// (no posting waits longer than the gap it falls in).
func BudgetMaxInterval(iv time.Duration) time.Duration {
	return max(28*time.Hour, 2*iv)
}

// BudgetPolicy is the project's budget policy: every page a member of one
// [poller.Budget] of 24 h ÷ Ī polls per page and day, max_interval
// [BudgetMaxInterval]. It spends the budget by itself, so it is not scaled.
func BudgetPolicy() Contender {
	return Contender{Name: "budget", New: func(iv time.Duration) (func(feed int) PagePolicy, error) {
		b := poller.NewBudget(poller.BudgetSettings{
			PerResource: float64(24*time.Hour) / float64(iv),
			MaxInterval: BudgetMaxInterval(iv),
		}, nil)
		c := poller.PolicyConfig{Kind: poller.KindBudget, Weight: 1}
		if _, err := b.Policy("probe", c); err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		return func(feed int) PagePolicy {
			p, _ := b.Policy(strconv.Itoa(feed), c) // c was checked above
			return &project{p: p}
		}, nil
	}}
}

// Standard returns the contenders of the freshness benchmark.
func Standard() []Contender {
	return []Contender{Flat(), Smart(0.5, false), Smart(0, true), RateReference(), SqrtReference(), BudgetPolicy()}
}

// Project adapts a project policy ([poller.NewPolicy]) to a [PagePolicy]
// factory: each page gets its own [poller.PolicyState].
func Project(c poller.PolicyConfig) (func(feed int) PagePolicy, error) {
	p, err := poller.NewPolicy(c)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return func(int) PagePolicy { return &project{p: p} }, nil
}

type project struct {
	p  poller.Policy
	st poller.PolicyState
}

func (a *project) Start() time.Duration          { return a.p.Start(&a.st) }
func (a *project) Observe(f Fetch) time.Duration { return a.p.Observe(&a.st, f.Observation) }
func (a *project) Estimate() time.Duration       { return a.st.Tau }

// ratePolicy: Miniflux's entry_frequency, without its database.
type ratePolicy struct {
	recent []time.Time // times of items seen in the last week, oldest first
}

const (
	rateWindow = Week
	rateMin    = 5 * time.Minute
	rateMax    = 24 * time.Hour
)

func (r *ratePolicy) Start() time.Duration { return rateMax }

func (r *ratePolicy) Observe(f Fetch) time.Duration {
	r.recent = append(r.recent, f.Items...)
	cut := f.Time.Add(-rateWindow)
	i := 0
	for i < len(r.recent) && r.recent[i].Before(cut) {
		i++
	}
	r.recent = r.recent[:copy(r.recent, r.recent[i:])] // compact in place: no garbage per poll
	if len(r.recent) == 0 {
		return rateMax
	}
	return min(max(rateWindow/time.Duration(len(r.recent)), rateMin), rateMax)
}

func (r *ratePolicy) Estimate() time.Duration {
	if len(r.recent) == 0 {
		return 0
	}
	return rateWindow / time.Duration(len(r.recent))
}

// sqrtPolicy: wait ∝ 1/√λ̂, with λ̂ = items seen / time since the first poll
// (at least a day, and at least half an item, so a silent page is still
// visited).
type sqrtPolicy struct {
	first, last time.Time
	seen        int
}

func (s *sqrtPolicy) Start() time.Duration { return 24 * time.Hour }

func (s *sqrtPolicy) Observe(f Fetch) time.Duration {
	if s.first.IsZero() {
		s.first = f.Time
	}
	s.last = f.Time
	s.seen += len(f.Items)
	gap := s.Estimate().Hours() // mean time between postings, hours
	return time.Duration(math.Sqrt(gap) * float64(time.Hour))
}

// Estimate returns the mean time between postings seen so far.
func (s *sqrtPolicy) Estimate() time.Duration {
	span := max(s.last.Sub(s.first), 24*time.Hour)
	return time.Duration(float64(span) / max(float64(s.seen), 0.5))
}
