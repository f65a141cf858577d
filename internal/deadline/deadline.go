// Package deadline is context.WithDeadline made on first need: a request's
// context bounded by the api's request timeout whose timer is armed only
// when something waits on it (most answers never do).
package deadline

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Context is context.WithDeadline(parent, deadline) made on first
// need: Done, or Err or Value once the deadline has passed, or anything
// after Stop. Until then it answers from the parent and the clock, which is
// what WithDeadline would answer: its Done is not closed (the deadline has
// not passed and the parent's Err is nil), and its values are the
// parent's. Done arms the timer; a context derived from it (WithCancel,
// AfterFunc) calls Done and then finds the armed one through Value, and
// joins it as it would join WithDeadline's.
type Context struct {
	parent   context.Context
	deadline time.Time
	armed    atomic.Bool // ctx is set
	stopped  atomic.Bool // Stop was called
	once     sync.Once
	ctx      context.Context // context.WithDeadline(parent, deadline)
	cancel   context.CancelFunc
}

func New(parent context.Context, deadline time.Time) *Context {
	return &Context{parent: parent, deadline: deadline}
}

// arm makes the context it stands for, once, and returns it.
func (c *Context) arm() context.Context {
	c.once.Do(func() {
		c.ctx, c.cancel = context.WithDeadline(c.parent, c.deadline)
		c.armed.Store(true)
		if c.stopped.Load() { // stopped before: as canceled as WithDeadline's would be
			c.cancel()
		}
	})
	return c.ctx
}

// Stop is the cancel of context.WithDeadline: once the request is answered,
// whoever still holds the context sees it canceled.
func (c *Context) Stop() {
	c.stopped.Store(true)
	if c.armed.Load() {
		c.cancel()
	}
}

// settled reports whether the answers must come from the armed context:
// armed, stopped, or past the deadline.
func (c *Context) settled() bool {
	return c.armed.Load() || c.stopped.Load() || !time.Now().Before(c.deadline)
}

func (c *Context) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *Context) Done() <-chan struct{} { return c.arm().Done() }

func (c *Context) Err() error {
	if c.settled() {
		return c.arm().Err()
	}
	return c.parent.Err() // a canceled parent cancels the armed context too, with its error
}

func (c *Context) Value(key any) any {
	if c.settled() {
		return c.arm().Value(key) // context.Cause finds the armed context's cause
	}
	return c.parent.Value(key)
}
