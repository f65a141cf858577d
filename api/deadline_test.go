package api

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

type deadlineKey struct{}

// waitDone fails the test unless ctx's Done closes within a generous bound.
func waitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed")
	}
}

// deadlineContext answers what context.WithDeadline(parent, deadline) would,
// whichever of its methods is called first.
func TestDeadlineContext(t *testing.T) {
	bg := context.WithValue(context.Background(), deadlineKey{}, "v")
	far := time.Now().Add(time.Hour)
	past := time.Now().Add(-time.Second)

	t.Run("before the deadline", func(t *testing.T) {
		c := newDeadlineContext(bg, far)
		defer c.stop()
		if d, ok := c.Deadline(); !ok || !d.Equal(far) {
			t.Errorf("Deadline = %v, %v", d, ok)
		}
		if c.Err() != nil || c.Value(deadlineKey{}) != "v" || context.Cause(c) != nil {
			t.Errorf("Err %v, Value %v, Cause %v", c.Err(), c.Value(deadlineKey{}), context.Cause(c))
		}
		if c.armed.Load() {
			t.Error("armed without a wait")
		}
		select {
		case <-c.Done():
			t.Error("Done closed before the deadline")
		default:
		}
	})

	t.Run("an earlier deadline of the parent", func(t *testing.T) {
		parent, cancel := context.WithDeadline(bg, far.Add(-time.Minute))
		defer cancel()
		c := newDeadlineContext(parent, far)
		defer c.stop()
		if d, _ := c.Deadline(); !d.Equal(far.Add(-time.Minute)) {
			t.Errorf("Deadline = %v, want the parent's", d)
		}
	})

	t.Run("past the deadline, nothing waited", func(t *testing.T) {
		for name, first := range map[string]func(context.Context) error{
			"Err":   func(c context.Context) error { return c.Err() },
			"Cause": context.Cause,
		} {
			c := newDeadlineContext(bg, past)
			if err := first(c); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s first = %v, want DeadlineExceeded", name, err)
			}
			waitDone(t, c)
			if c.Value(deadlineKey{}) != "v" {
				t.Error("values lost once armed")
			}
			c.stop()
			if !errors.Is(c.Err(), context.DeadlineExceeded) {
				t.Errorf("Err after stop = %v: the deadline came first", c.Err())
			}
		}
	})

	t.Run("a wait, then the deadline", func(t *testing.T) {
		c := newDeadlineContext(bg, time.Now().Add(20*time.Millisecond))
		defer c.stop()
		child, cancel := context.WithCancel(c)
		defer cancel()
		waitDone(t, c)
		waitDone(t, child)
		if !errors.Is(c.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(c), context.DeadlineExceeded) ||
			!errors.Is(child.Err(), context.DeadlineExceeded) {
			t.Errorf("Err %v, Cause %v, child's Err %v", c.Err(), context.Cause(c), child.Err())
		}
	})

	t.Run("the parent canceled", func(t *testing.T) {
		cause := errors.New("client gone")
		for _, wait := range []bool{false, true} {
			parent, cancel := context.WithCancelCause(bg)
			c := newDeadlineContext(parent, far)
			if wait {
				_ = c.Done()
			}
			cancel(cause)
			waitDone(t, c)
			if !errors.Is(c.Err(), context.Canceled) || context.Cause(c) != cause {
				t.Errorf("armed before %v: Err %v, Cause %v", wait, c.Err(), context.Cause(c))
			}
			c.stop()
		}
	})

	t.Run("stopped", func(t *testing.T) {
		for _, wait := range []bool{false, true} {
			c := newDeadlineContext(bg, far)
			var child context.Context = c
			ran := make(chan struct{})
			if wait {
				var cancel context.CancelFunc
				child, cancel = context.WithCancel(c)
				defer cancel()
				context.AfterFunc(c, func() { close(ran) })
			}
			c.stop()
			// Derived contexts joined the armed one: canceled by stop
			// itself, not later by a goroutine watching it.
			if !errors.Is(child.Err(), context.Canceled) {
				t.Errorf("derived before %v: Err %v right after stop", wait, child.Err())
			}
			if wait {
				<-ran
			}
			waitDone(t, c)
			if !errors.Is(c.Err(), context.Canceled) || !errors.Is(context.Cause(c), context.Canceled) {
				t.Errorf("derived before %v: Err %v, Cause %v", wait, c.Err(), context.Cause(c))
			}
		}
	})
}

// A request's context is canceled once it is answered, as with
// context.WithTimeout, whether or not the handler waited on it.
func TestRequestContextEndsWithRequest(t *testing.T) {
	s := newSvcServer(t, Options{})
	var kept []context.Context
	s.e.GET("/test/keep", func(c echo.Context) error {
		ctx := c.Request().Context()
		if d, ok := ctx.Deadline(); !ok || time.Until(d) > defaultRequestTimeout {
			t.Errorf("deadline %v, %v", d, ok)
		}
		if c.QueryParam("wait") != "" {
			_ = ctx.Done()
		}
		kept = append(kept, ctx)
		return c.NoContent(http.StatusNoContent)
	})
	svcDo(s, http.MethodGet, "/test/keep", nil)
	svcDo(s, http.MethodGet, "/test/keep?wait=1", nil)
	for i, ctx := range kept {
		if !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("request %d: context Err %v after the answer", i, ctx.Err())
		}
	}
}
