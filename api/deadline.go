package api

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
)

// requestDeadline bounds each request's context by Options.RequestTimeout,
// as echo's ContextTimeout middleware does, with a context that arms its
// timer only when something waits on it: most answers (a cached feed, a
// health check) never do, and context.WithTimeout costs them a timer, its
// registration with the parent and four allocations.
func (s *Server) requestDeadline(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		ctx := newDeadlineContext(req.Context(), time.Now().Add(s.opts.RequestTimeout))
		defer ctx.stop()
		c.SetRequest(req.WithContext(ctx))
		if err := next(c); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return echo.ErrServiceUnavailable.WithInternal(err)
			}
			return err
		}
		return nil
	}
}

// deadlineContext is context.WithDeadline(parent, deadline) made on first
// need: Done, or Err or Value once the deadline has passed, or anything
// after stop. Until then it answers from the parent and the clock, which is
// what WithDeadline would answer: its Done is not closed (the deadline has
// not passed and the parent's Err is nil), and its values are the
// parent's. Done arms the timer; a context derived from it (WithCancel,
// AfterFunc) calls Done and then finds the armed one through Value, and
// joins it as it would join WithDeadline's.
type deadlineContext struct {
	parent   context.Context
	deadline time.Time
	armed    atomic.Bool // ctx is set
	stopped  atomic.Bool // stop was called
	once     sync.Once
	ctx      context.Context // context.WithDeadline(parent, deadline)
	cancel   context.CancelFunc
}

func newDeadlineContext(parent context.Context, deadline time.Time) *deadlineContext {
	return &deadlineContext{parent: parent, deadline: deadline}
}

// arm makes the context it stands for, once, and returns it.
func (c *deadlineContext) arm() context.Context {
	c.once.Do(func() {
		c.ctx, c.cancel = context.WithDeadline(c.parent, c.deadline)
		c.armed.Store(true)
		if c.stopped.Load() { // stopped before: as canceled as WithDeadline's would be
			c.cancel()
		}
	})
	return c.ctx
}

// stop is the cancel of context.WithDeadline: once the request is answered,
// whoever still holds the context sees it canceled.
func (c *deadlineContext) stop() {
	c.stopped.Store(true)
	if c.armed.Load() {
		c.cancel()
	}
}

// settled reports whether the answers must come from the armed context:
// armed, stopped, or past the deadline.
func (c *deadlineContext) settled() bool {
	return c.armed.Load() || c.stopped.Load() || !time.Now().Before(c.deadline)
}

func (c *deadlineContext) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *deadlineContext) Done() <-chan struct{} { return c.arm().Done() }

func (c *deadlineContext) Err() error {
	if c.settled() {
		return c.arm().Err()
	}
	return c.parent.Err() // a canceled parent cancels the armed context too, with its error
}

func (c *deadlineContext) Value(key any) any {
	if c.settled() {
		return c.arm().Value(key) // context.Cause finds the armed context's cause
	}
	return c.parent.Value(key)
}
