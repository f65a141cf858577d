package poller

import (
	"errors"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/fetch"
)

// Policy kinds, as written in the configuration.
const (
	KindFlat  = config.KindFlat
	KindSmart = config.KindSmart
)

// HistoryWindow is how many observed intervals a [PolicyState] keeps: the
// window over which alpha: auto is tuned.
const HistoryWindow = 50

// Growth is the factor by which smart stretches its wait after each poll that
// finds the page unchanged (see doc.go; chosen with the freshness simulator,
// BENCHMARKS.md, section Freshness).
const Growth = 1.5

// MaxHintFloor caps how far a server hint (Retry-After, Cache-Control
// max-age) may push the next poll away: fetch's cap on the hints it reads.
const MaxHintFloor = fetch.MaxHint

// PolicyConfig is a fully resolved policy (see [config.Policy]).
type PolicyConfig = config.Policy

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
	// Dates are the publication times of the page's items that are newer
	// than the newest item date of the previous version (all dated items
	// when no previous version is known), oldest first. Empty when the items
	// carry no dates or none is newer.
	Dates []time.Time
	// NewItems is how many of the page's items the previous version did not
	// have (by item id); 0 when there are none or no previous version is known.
	NewItems int
	// Floor is the shortest wait the server asked for (Retry-After,
	// Cache-Control max-age); zero for none.
	Floor time.Duration
}

// PolicyState is everything a policy has learned about one resource. It is
// persisted by the engine (as JSON), survives policy changes, and is owned by
// one goroutine at a time.
type PolicyState struct {
	Tau        time.Duration   `json:"tau"`                  // estimate of the time between updates; 0 = not set yet
	Alpha      float64         `json:"alpha"`                // the α in force (tuned one when auto)
	LastUpdate time.Time       `json:"last_update,omitzero"` // reference time of the last observed update
	Published  bool            `json:"published,omitempty"`  // LastUpdate came from the page's own date
	Intervals  []time.Duration `json:"intervals,omitempty"`  // recent observed intervals t_n, oldest first, at most HistoryWindow
	Wait       time.Duration   `json:"wait"`                 // the policy's last chosen wait (before server floors)
	Unchanged  int             `json:"unchanged,omitempty"`  // polls without change since the last change
	Kind       string          `json:"kind,omitempty"`       // the kind of the policy that last started this state
	// Rate is the learned posting rate and weekly profile (budget policy;
	// nil until a budget policy observes a poll). Other kinds keep it as it
	// is, so a switch back to budget resumes from it.
	Rate *RateState `json:"rate,omitempty"`
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

// NewPolicy builds the policy a resolved configuration describes. A budget
// policy shares an allocator with the other budget resources: build it with
// [Budget.Policy].
func NewPolicy(c PolicyConfig) (Policy, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	switch c.Kind {
	case KindFlat:
		return flat{c}, nil
	case KindBudget:
		return nil, errors.New("budget policy: build it with Budget.Policy")
	}
	return smart{c}, nil
}

// recordUpdates folds the updates a changed poll reveals into st's reference
// time (LastUpdate) and interval history, and returns the new interval t_n
// (0 when there is none yet). A poll that reveals k updates since the last
// reference gives one t_n, their mean gap: (newest − last reference) / k.
// In order (see doc.go):
//
//  1. Item dates: the newest new date is the reference and k the number of
//     new dates (after the last reference, not after the detection time).
//     Without a previous reference (a first page), the gaps between the
//     page's own dates.
//  2. Else the reference is the page's newest date when it is newer (a
//     channel date), else the detection time, and k is NewItems (at least 1).
func recordUpdates(st *PolicyState, obs Observation) time.Duration {
	last := st.LastUpdate
	var first, newest time.Time
	k := 0
	for _, d := range obs.Dates {
		if d.After(obs.Time) || (!last.IsZero() && !d.After(last)) || (!newest.IsZero() && !d.After(newest)) {
			continue
		}
		if first.IsZero() {
			first = d
		}
		newest = d
		k++
	}
	ref, published := newest, true
	if k == 0 {
		ref, published, k = obs.Time, false, max(obs.NewItems, 1)
		if !obs.Published.IsZero() && (last.IsZero() || obs.Published.After(last)) && !obs.Published.After(obs.Time) {
			ref, published = obs.Published, true
		}
	} else if last.IsZero() {
		last, k = first, k-1 // a first page: the gaps between its own dates
	}
	if !st.LastUpdate.IsZero() && !ref.After(st.LastUpdate) {
		return 0
	}
	st.LastUpdate, st.Published = ref, published
	if last.IsZero() || k == 0 || !ref.After(last) {
		return 0
	}
	t := ref.Sub(last) / time.Duration(k)
	st.Intervals = append(st.Intervals, t)
	if n := len(st.Intervals); n > HistoryWindow {
		st.Intervals = append(st.Intervals[:0], st.Intervals[n-HistoryWindow:]...)
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
		recordUpdates(st, obs)
		st.Unchanged = 0
	} else {
		st.Unchanged++
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
		if t := recordUpdates(st, obs); t > 0 {
			st.Alpha = p.alpha(st)
			st.Tau = time.Duration(st.Alpha*float64(st.Tau) + (1-st.Alpha)*float64(t))
		}
		st.Wait, st.Unchanged = p.clamp(st.Tau), 0
		return floor(st.Wait, obs)
	}
	st.Unchanged++
	st.Wait = p.clamp(time.Duration(float64(prev) * Growth))
	return floor(st.Wait, obs)
}
