package poller

import (
	"fmt"
	"time"
)

// Policy kinds, as written in the configuration.
const (
	KindFlat  = "flat"
	KindSmart = "smart"
)

// HistoryWindow is how many observed intervals a [PolicyState] keeps: the
// window over which alpha: auto is tuned.
const HistoryWindow = 50

// Growth is the factor by which smart stretches its wait after each poll that
// finds the page unchanged (see doc.go).
const Growth = 1.5

// Shrink is the factor by which smart divides its wait when two polls in a
// row both find a change (the page changes faster than we look).
const Shrink = 4

// MaxHintFloor caps how far a server hint (Retry-After, Cache-Control
// max-age) may push the next poll away.
const MaxHintFloor = 24 * time.Hour

// PolicyConfig is a fully resolved policy: per-resource settings merged over
// the poller default. It is a plain value, comparable with ==.
type PolicyConfig struct {
	Kind      string        // KindFlat or KindSmart
	Interval  time.Duration // flat: the constant wait
	Alpha     float64       // smart: weight of the previous estimate, in [0,1]
	AlphaAuto bool          // smart: choose Alpha with [Tune] over the recent intervals
	Initial   time.Duration // smart: first estimate τ₀ of the time between updates
	Min, Max  time.Duration // smart: bounds of the wait
}

// Validate checks a resolved policy.
func (c PolicyConfig) Validate() error {
	switch c.Kind {
	case KindFlat:
		if c.Interval <= 0 {
			return fmt.Errorf("flat policy: interval must be positive, got %v", c.Interval)
		}
	case KindSmart:
		if c.Min <= 0 {
			return fmt.Errorf("smart policy: min must be positive, got %v", c.Min)
		}
		if c.Min > c.Initial || c.Initial > c.Max {
			return fmt.Errorf("smart policy: need min ≤ initial ≤ max, got %v, %v, %v", c.Min, c.Initial, c.Max)
		}
		if !c.AlphaAuto && (c.Alpha < 0 || c.Alpha > 1) {
			return fmt.Errorf("smart policy: alpha must be in [0,1] or auto, got %v", c.Alpha)
		}
	default:
		return fmt.Errorf("unknown policy kind %q (want flat or smart)", c.Kind)
	}
	return nil
}

// Observation is what one poll saw, as a policy needs it. The engine builds
// it; the simulator builds it from a trace.
type Observation struct {
	// Time is when the poll detected what it saw (the detection time).
	Time time.Time
	// Changed: the page's informational content differs from the last version.
	Changed bool
	// NotModified: the origin answered 304 (the page is unchanged).
	NotModified bool
	// Published is the newest publication time the page carries (channel or
	// newest item date extension); zero when the page has none.
	Published time.Time
	// Floor is the shortest wait the server asked for (Retry-After,
	// Cache-Control max-age); zero for none.
	Floor time.Duration
}

// PolicyState is everything a policy has learned about one resource. It is
// persisted by the engine (as JSON), survives policy changes, and is owned by
// one goroutine at a time.
type PolicyState struct {
	Tau        time.Duration   `json:"tau"`                   // estimate of the time between updates; 0 = not set yet
	Alpha      float64         `json:"alpha"`                 // the α in force (tuned one when auto)
	LastUpdate time.Time       `json:"last_update,omitzero"`  // reference time of the last observed update
	Published  bool            `json:"published,omitempty"`   // LastUpdate came from the page's own date
	Intervals  []time.Duration `json:"intervals,omitempty"`   // recent observed intervals t_n, oldest first, at most HistoryWindow
	Wait       time.Duration   `json:"wait"`                  // the policy's last chosen wait (before server floors)
	Unchanged  int             `json:"unchanged,omitempty"`   // polls without change since the last change
	LastChange bool            `json:"last_change,omitempty"` // the previous observed poll found a change
	Kind       string          `json:"kind,omitempty"`        // the kind of the policy that last started this state
}

// Policy decides when to poll next. Implementations are pure: no I/O and no
// clock; everything comes in through the state and the observation, so the
// simulator runs them unchanged. A Policy is immutable and safe for
// concurrent use; each PolicyState is owned by one caller at a time.
type Policy interface {
	// Config returns the resolved configuration the policy was built from.
	Config() PolicyConfig
	// Start prepares st for this policy (first τ, α) without observing
	// anything and returns the wait before the next poll. It is called for a
	// new resource, after a restart and after a policy change; it keeps what
	// st has learned (τ, intervals, and for smart → smart the current wait).
	Start(st *PolicyState) time.Duration
	// Observe folds one poll's observation into st and returns the wait
	// before the next poll (never below obs.Floor, capped at [MaxHintFloor]).
	Observe(st *PolicyState, obs Observation) time.Duration
}

// NewPolicy builds the policy a resolved configuration describes.
func NewPolicy(c PolicyConfig) (Policy, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.Kind == KindFlat {
		return flat{c}, nil
	}
	return smart{c}, nil
}

// recordUpdate notes an observed update in st and returns the new interval t_n
// (0 when there is no previous reference). The reference time is the page's
// publication time when it carries a newer one, else the detection time.
func recordUpdate(st *PolicyState, obs Observation) time.Duration {
	ref, published := obs.Time, false
	if !obs.Published.IsZero() && (st.LastUpdate.IsZero() || obs.Published.After(st.LastUpdate)) && !obs.Published.After(obs.Time) {
		ref, published = obs.Published, true
	}
	var t time.Duration
	if !st.LastUpdate.IsZero() && ref.After(st.LastUpdate) {
		t = ref.Sub(st.LastUpdate)
		st.Intervals = append(st.Intervals, t)
		if n := len(st.Intervals); n > HistoryWindow {
			st.Intervals = append(st.Intervals[:0], st.Intervals[n-HistoryWindow:]...)
		}
	}
	if st.LastUpdate.IsZero() || ref.After(st.LastUpdate) {
		st.LastUpdate, st.Published = ref, published
	}
	return t
}

func floor(wait time.Duration, obs Observation) time.Duration {
	if f := min(obs.Floor, MaxHintFloor); f > wait {
		return f
	}
	return wait
}

// flat polls at a constant interval. It still records observed intervals so
// that a later switch to smart starts from what was seen; it leaves τ alone.
type flat struct{ c PolicyConfig }

func (p flat) Config() PolicyConfig { return p.c }

func (p flat) Start(st *PolicyState) time.Duration {
	st.Kind = KindFlat
	st.Wait = p.c.Interval
	return st.Wait
}

func (p flat) Observe(st *PolicyState, obs Observation) time.Duration {
	if obs.Changed {
		recordUpdate(st, obs)
		st.Unchanged, st.LastChange = 0, true
	} else {
		st.Unchanged++
		st.LastChange = false
	}
	st.Wait = p.c.Interval
	return floor(st.Wait, obs)
}

// smart is the Dynamo paper's single exponential smoothing policy.
type smart struct{ c PolicyConfig }

func (p smart) Config() PolicyConfig { return p.c }

func (p smart) clamp(d time.Duration) time.Duration {
	return min(max(d, p.c.Min), p.c.Max)
}

func (p smart) alpha(st *PolicyState) float64 {
	if p.c.AlphaAuto {
		if len(st.Intervals) >= 3 {
			a, _ := Tune(st.Intervals)
			return a
		}
		if st.Alpha >= 0 && st.Alpha <= 1 && st.Alpha != 0 {
			return st.Alpha
		}
		return 0.5
	}
	return p.c.Alpha
}

func (p smart) Start(st *PolicyState) time.Duration {
	if st.Tau <= 0 {
		st.Tau = p.c.Initial
	}
	st.Alpha = p.alpha(st)
	if st.Kind == KindSmart && st.Wait > 0 {
		// Smart already (a restart, or new smart parameters): keep the wait it
		// had grown or shrunk to, within the new bounds.
		st.Wait = p.clamp(st.Wait)
	} else {
		st.Wait = p.clamp(st.Tau)
	}
	st.Kind = KindSmart
	return st.Wait
}

func (p smart) Observe(st *PolicyState, obs Observation) time.Duration {
	if st.Tau <= 0 {
		st.Tau = p.c.Initial
	}
	prev := st.Wait
	if prev <= 0 {
		prev = p.clamp(st.Tau)
	}
	if obs.Changed {
		if t := recordUpdate(st, obs); t > 0 {
			st.Alpha = p.alpha(st)
			st.Tau = time.Duration(st.Alpha*float64(st.Tau) + (1-st.Alpha)*float64(t))
		}
		wait := p.clamp(st.Tau)
		if st.LastChange {
			// Two changed polls in a row: the page changes at least as often
			// as we look, so detection intervals overestimate t_n; shrink fast.
			wait = p.clamp(min(wait, prev/Shrink))
		}
		st.Wait, st.Unchanged, st.LastChange = wait, 0, true
		return floor(wait, obs)
	}
	st.Unchanged++
	st.LastChange = false
	st.Wait = p.clamp(time.Duration(float64(prev) * Growth))
	return floor(st.Wait, obs)
}
