package deadline

import (
	"context"
	"errors"
	"testing"
	"time"
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

// Context answers what context.WithDeadline(parent, deadline) would,
// whichever of its methods is called first.
func TestDeadlineContext(t *testing.T) {
	bg := context.WithValue(context.Background(), deadlineKey{}, "v")
	far := time.Now().Add(time.Hour)
	past := time.Now().Add(-time.Second)

	t.Run("before the deadline", func(t *testing.T) {
		c := New(bg, far)
		defer c.Stop()
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
		c := New(parent, far)
		defer c.Stop()
		if d, _ := c.Deadline(); !d.Equal(far.Add(-time.Minute)) {
			t.Errorf("Deadline = %v, want the parent's", d)
		}
	})

	t.Run("past the deadline, nothing waited", func(t *testing.T) {
		for name, first := range map[string]func(context.Context) error{
			"Err":   func(c context.Context) error { return c.Err() },
			"Cause": context.Cause,
		} {
			c := New(bg, past)
			if err := first(c); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s first = %v, want DeadlineExceeded", name, err)
			}
			waitDone(t, c)
			if c.Value(deadlineKey{}) != "v" {
				t.Error("values lost once armed")
			}
			c.Stop()
			if !errors.Is(c.Err(), context.DeadlineExceeded) {
				t.Errorf("Err after stop = %v: the deadline came first", c.Err())
			}
		}
	})

	t.Run("a wait, then the deadline", func(t *testing.T) {
		c := New(bg, time.Now().Add(20*time.Millisecond))
		defer c.Stop()
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
			c := New(parent, far)
			if wait {
				_ = c.Done()
			}
			cancel(cause)
			waitDone(t, c)
			if !errors.Is(c.Err(), context.Canceled) || context.Cause(c) != cause {
				t.Errorf("armed before %v: Err %v, Cause %v", wait, c.Err(), context.Cause(c))
			}
			c.Stop()
		}
	})

	t.Run("stopped", func(t *testing.T) {
		for _, wait := range []bool{false, true} {
			c := New(bg, far)
			var child context.Context = c
			ran := make(chan struct{})
			if wait {
				var cancel context.CancelFunc
				child, cancel = context.WithCancel(c)
				defer cancel()
				context.AfterFunc(c, func() { close(ran) })
			}
			c.Stop()
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
