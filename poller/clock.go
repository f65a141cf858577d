package poller

import (
	"time"

	"github.com/dynamo-rss/dynamo/fetch"
)

// Clock is the engine's source of time: Now and timers. Tests inject a fake
// one so that every scheduling decision is deterministic. It is fetch's
// Clock: the engine gives its own to its fetcher, so that one clock drives
// both the schedule and the per-host politeness.
type Clock = fetch.Clock

// Timer is the part of *time.Timer the engine uses.
type Timer = fetch.Timer

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time { return t.t.C }
func (t realTimer) Stop() bool          { return t.t.Stop() }
