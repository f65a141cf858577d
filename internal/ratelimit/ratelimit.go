// Package ratelimit is a token bucket per key (a client address, a
// callback host), shared by the api and the WebSub hub so that neither
// keeps a copy of it. Time is given by the caller, so tests control the
// refill without sleeping.
package ratelimit

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// MaxKeys bounds a [Keyed]'s memory: a new key that finds that many drops
// the keys idle for [Idle] (and at least one key, chosen at random) until
// fewer than half remain. A dropped key starts again with a full bucket.
const MaxKeys = 10_000

// Idle is how long a key goes unused before a new key may drop it.
const Idle = time.Hour

// Keyed is a token bucket per key: each key may act burst times at once,
// then once every interval. Safe for concurrent use.
type Keyed struct {
	every rate.Limit
	burst int

	mu   sync.Mutex
	keys map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// New returns a limiter that lets each key act burst times at once, then
// once every interval.
func New(every time.Duration, burst int) *Keyed {
	burst = max(burst, 1) // a bucket of 0 would refuse everything
	return &Keyed{every: rate.Every(every), burst: burst, keys: make(map[string]*bucket)}
}

// Take takes a token from key's bucket at now. When the bucket is empty it
// takes nothing and returns false and how long until a token is available.
// Otherwise giveBack returns the token, for an action that did not happen
// after all (the caller found it could not serve the request).
func (l *Keyed) Take(key string, now time.Time) (ok bool, wait time.Duration, giveBack func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.keys[key]
	if b == nil {
		if len(l.keys) >= MaxKeys {
			for k, v := range l.keys {
				if now.Sub(v.seen) > Idle || len(l.keys) >= MaxKeys {
					delete(l.keys, k)
				}
				if len(l.keys) < MaxKeys/2 {
					break
				}
			}
		}
		b = &bucket{lim: rate.NewLimiter(l.every, l.burst)}
		l.keys[key] = b
	}
	b.seen = now
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d, nil
	}
	return true, 0, func() { r.CancelAt(now) }
}
