package config

import (
	"fmt"
	"time"
)

// Policy kinds, as written in the configuration.
const (
	KindFlat  = "flat"
	KindSmart = "smart"
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
	default:
		return fmt.Errorf("unknown policy kind %q (want flat or smart)", c.Kind)
	}
	return nil
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
