package fetch

import "time"

// Clock is a [Fetcher]'s source of time: the host gate's slots and timers,
// the dates of Retry-After and of the robots.txt cache. The poller gives
// its own, so that one fake clock drives both its schedule and the
// politeness its fetches wait for.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer is the part of *time.Timer a [Clock] gives.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time { return t.t.C }
func (t realTimer) Stop() bool          { return t.t.Stop() }
