package websub

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// scheduler hands subscriptions to the workers when their delivery is due.
// It holds at most one entry per subscription (the earliest due time), and
// never hands out a subscription that a worker is still delivering: one
// pushed meanwhile waits until [scheduler.done]. Memory is bounded by the
// number of subscriptions with a pending delivery.
type scheduler struct {
	clock Clock

	mu       sync.Mutex
	q        dueHeap
	byKey    map[Key]*dueEntry
	inflight map[Key]bool
	again    map[Key]time.Time // pushed while in flight
	wake     chan struct{}     // cap 1
}

func newScheduler(c Clock) *scheduler {
	return &scheduler{
		clock:    c,
		byKey:    make(map[Key]*dueEntry),
		inflight: make(map[Key]bool),
		again:    make(map[Key]time.Time),
		wake:     make(chan struct{}, 1),
	}
}

// push schedules k at due (or earlier, if it already was). Never blocks.
func (s *scheduler) push(k Key, due time.Time) {
	s.mu.Lock()
	switch e, ok := s.byKey[k]; {
	case s.inflight[k]:
		if t, ok := s.again[k]; !ok || due.Before(t) {
			s.again[k] = due
		}
	case ok:
		if due.Before(e.due) {
			e.due = due
			heap.Fix(&s.q, e.idx)
		}
	default:
		e := &dueEntry{key: k, due: due}
		s.byKey[k] = e
		heap.Push(&s.q, e)
	}
	s.mu.Unlock()
	s.signal()
}

// done tells that the worker given k has finished with it.
func (s *scheduler) done(k Key) {
	s.mu.Lock()
	delete(s.inflight, k)
	due, again := s.again[k]
	delete(s.again, k)
	s.mu.Unlock()
	if again {
		s.push(k, due)
	}
}

func (s *scheduler) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run sends due subscriptions to out until ctx ends. Sending blocks when
// the workers are busy and out is full: the bounded queue.
func (s *scheduler) run(ctx context.Context, out chan<- Key) {
	for {
		s.mu.Lock()
		var wait time.Duration
		var due *dueEntry
		if len(s.q) > 0 {
			if top := s.q[0]; top.due.After(s.clock.Now()) {
				wait = top.due.Sub(s.clock.Now())
			} else {
				due = heap.Pop(&s.q).(*dueEntry)
				delete(s.byKey, due.key)
				s.inflight[due.key] = true
			}
		}
		s.mu.Unlock()
		if due != nil {
			select {
			case out <- due.key:
			case <-ctx.Done():
				return
			}
			continue
		}
		var t Timer
		var timer <-chan time.Time
		if wait > 0 {
			t = s.clock.NewTimer(wait)
			timer = t.C()
		}
		select {
		case <-ctx.Done():
		case <-s.wake:
		case <-timer:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

type dueEntry struct {
	key Key
	due time.Time
	idx int
}

// dueHeap is a min-heap of entries by due time.
type dueHeap []*dueEntry

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].idx = i; h[j].idx = j }
func (h *dueHeap) Push(x any)        { e := x.(*dueEntry); e.idx = len(*h); *h = append(*h, e) }
func (h *dueHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}
