package postgres

import (
	"math"
	"time"

	"github.com/dynamo-rss/dynamo/storage"
)

// Times are stored as int64 nanoseconds since the Unix epoch: exact, as the
// Badger store keeps them, and ordered; the range is storage.MinTime to
// storage.MaxTime (the years 1678–2262).

// toNS converts t, refusing times out of range with ErrInvalid.
func toNS(what string, t time.Time) (int64, error) {
	if err := storage.ValidateTime(what, t); err != nil {
		return 0, err
	}
	return t.UnixNano(), nil
}

// clampNS converts t, saturating at the ends of the range.
func clampNS(t time.Time) int64 {
	switch {
	case t.Before(storage.MinTime()):
		return math.MinInt64
	case t.After(storage.MaxTime()):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// fromNS is toNS's inverse, in UTC.
func fromNS(ns int64) time.Time { return time.Unix(0, ns).UTC() }

// nullNS is toNS with the zero time as NULL.
func nullNS(what string, t time.Time) (*int64, error) {
	if t.IsZero() {
		return nil, nil
	}
	ns, err := toNS(what, t)
	return &ns, err
}

// fromNullNS is nullNS's inverse.
func fromNullNS(ns *int64) time.Time {
	if ns == nil {
		return time.Time{}
	}
	return fromNS(*ns)
}

// addNS is ns + d, saturating.
func addNS(ns int64, d time.Duration) int64 {
	if d > 0 && ns > math.MaxInt64-int64(d) {
		return math.MaxInt64
	}
	if d < 0 && ns < math.MinInt64-int64(d) {
		return math.MinInt64
	}
	return ns + int64(d)
}
