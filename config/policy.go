package config

import (
	"fmt"
	"math"
	"time"
)

// Policy kinds, as written in the configuration.
const (
	KindFlat   = "flat"
	KindSmart  = "smart"
	KindBudget = "budget"
)

// Defaults of poller.budget (API.md "Policy `budget`").
const (
	// DefaultPollsPerResource is the budget per budget resource and day when
	// poller.budget.polls_per_day is 0 (unset): a mean interval of one hour.
	DefaultPollsPerResource = 24
	// DefaultMaxInterval is poller.budget.max_interval when unset.
	DefaultMaxInterval = 48 * time.Hour
	// BudgetFloor is the shortest time between two polls of a budget
	// resource; max_interval may not be shorter.
	BudgetFloor = 10 * time.Minute
)

// Policy is a fully resolved policy: a resource's settings merged over the
// poller default by [PollerConfig.ResolvePolicy]. It is a plain value,
// comparable with ==; the poller builds its policies from it.
type Policy struct {
	Kind      string        // KindFlat or KindSmart
	Interval  time.Duration // flat: the constant wait
	Alpha     float64       // smart: weight of the previous estimate, in [0,1]
	AlphaAuto bool          // smart: choose Alpha by golden-section search over the recent intervals
	Initial   time.Duration // smart: first estimate τ₀ of the time between updates
	Min, Max  time.Duration // smart: bounds of the wait
	// Weight is a budget resource's importance (default 1; 0 for other
	// kinds, so a weight never restarts a flat or smart policy).
	Weight float64
	// WeightReaders multiplies a budget resource's weight by its readers.
	WeightReaders bool
}

// Validate checks a resolved policy.
func (c Policy) Validate() error {
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
	case KindBudget:
		if !(c.Weight > 0) || math.IsInf(c.Weight, 1) {
			return fmt.Errorf("budget policy: weight must be a positive number, got %v", c.Weight)
		}
	default:
		return fmt.Errorf("unknown policy kind %q (want flat, smart or budget)", c.Kind)
	}
	return nil
}

// ValidKind reports whether kind names a policy.
func ValidKind(kind string) bool {
	return kind == KindFlat || kind == KindSmart || kind == KindBudget
}

// ResolveResource resolves a resource's policy: [PollerConfig.ResolvePolicy]
// plus, for the budget kind, the resource's weight (default 1) and
// weight_readers.
func (p PollerConfig) ResolveResource(r ResourceEntry) Policy {
	c := p.ResolvePolicy(r.Policy)
	if c.Kind == KindBudget {
		c.Weight, c.WeightReaders = 1, r.WeightReaders
		if r.Weight.Set {
			c.Weight = r.Weight.Value
		}
	}
	return c
}

// Total is the budget shared by n budget resources, in polls per day:
// polls_per_day, or [DefaultPollsPerResource] per resource when it is 0.
func (b BudgetConfig) Total(n int) float64 {
	if b.PollsPerDay > 0 {
		return b.PollsPerDay
	}
	return DefaultPollsPerResource * float64(n)
}

// ResolvePolicy merges a resource's policy over the poller default.
func (p PollerConfig) ResolvePolicy(r PolicySpec) Policy {
	d := p.Policy
	pick := func(v, def Duration) time.Duration {
		if v != 0 {
			return time.Duration(v)
		}
		return time.Duration(def)
	}
	c := Policy{
		Kind:     r.Kind,
		Interval: pick(r.Interval, d.Interval),
		Initial:  pick(r.Initial, d.Initial),
		Min:      pick(r.Min, d.Min),
		Max:      pick(r.Max, d.Max),
	}
	if c.Kind == "" {
		c.Kind = d.Kind
	}
	a := d.Alpha
	if r.Alpha.Set {
		a = r.Alpha
	}
	c.Alpha, c.AlphaAuto = a.Value, a.Auto
	if !a.Set {
		c.Alpha = 0.5
	}
	if c.Kind == KindFlat && c.Interval == 0 {
		// A flat resource under a smart default polls at the default's initial estimate.
		c.Interval = c.Initial
	}
	return c
}

// BudgetConfig is poller.budget: what the resources with policy kind budget
// share.
type BudgetConfig struct {
	// PollsPerDay is the whole budget; 0 (the default) means
	// [DefaultPollsPerResource] per budget resource.
	PollsPerDay float64 `yaml:"polls_per_day"`
	// MaxInterval is the longest a budget resource goes unpolled (default
	// [DefaultMaxInterval]; at least [BudgetFloor]).
	MaxInterval Duration `yaml:"max_interval"`
}

// ResolveRetention merges a resource's retention over the poller default.
func (p PollerConfig) ResolveRetention(r RetentionConfig) RetentionConfig {
	if r.MaxVersions == 0 {
		r.MaxVersions = p.Retention.MaxVersions
	}
	if r.MaxAge == 0 {
		r.MaxAge = p.Retention.MaxAge
	}
	return r
}
