package poller

import "time"

// Queue is the scheduler's min-heap of next-poll times, indexed by resource
// id: every operation is O(log n) except Len, Peek and At, which are O(1).
// Equal times pop in id order, so schedules are deterministic. The zero value
// is an empty queue. A Queue is not safe for concurrent use; the engine
// guards its own with a mutex, the simulator drives one directly.
type Queue struct {
	heap  []queueEntry
	index map[string]int // id -> position in heap
}

type queueEntry struct {
	at time.Time
	id string
}

func (e queueEntry) less(o queueEntry) bool {
	if e.at.Equal(o.at) {
		return e.id < o.id
	}
	return e.at.Before(o.at)
}

// Len returns the number of scheduled resources.
func (q *Queue) Len() int { return len(q.heap) }

// Push schedules id at time at, rescheduling it if it is already queued.
func (q *Queue) Push(id string, at time.Time) {
	if q.index == nil {
		q.index = make(map[string]int)
	}
	if i, ok := q.index[id]; ok {
		q.heap[i].at = at
		q.fix(i)
		return
	}
	q.heap = append(q.heap, queueEntry{at: at, id: id})
	i := len(q.heap) - 1
	q.index[id] = i
	q.up(i)
}

// Update reschedules a queued id; it reports false (and does nothing) when id
// is not queued.
func (q *Queue) Update(id string, at time.Time) bool {
	i, ok := q.index[id]
	if !ok {
		return false
	}
	q.heap[i].at = at
	q.fix(i)
	return true
}

// Remove unschedules id; it reports whether id was queued.
func (q *Queue) Remove(id string) bool {
	i, ok := q.index[id]
	if !ok {
		return false
	}
	q.removeAt(i)
	return true
}

// At returns when id is scheduled.
func (q *Queue) At(id string) (time.Time, bool) {
	i, ok := q.index[id]
	if !ok {
		return time.Time{}, false
	}
	return q.heap[i].at, true
}

// Peek returns the earliest scheduled resource without removing it.
func (q *Queue) Peek() (id string, at time.Time, ok bool) {
	if len(q.heap) == 0 {
		return "", time.Time{}, false
	}
	return q.heap[0].id, q.heap[0].at, true
}

// Pop removes and returns the earliest scheduled resource.
func (q *Queue) Pop() (id string, at time.Time, ok bool) {
	if len(q.heap) == 0 {
		return "", time.Time{}, false
	}
	e := q.heap[0]
	q.removeAt(0)
	return e.id, e.at, true
}

func (q *Queue) removeAt(i int) {
	last := len(q.heap) - 1
	delete(q.index, q.heap[i].id)
	if i != last {
		q.heap[i] = q.heap[last]
		q.index[q.heap[i].id] = i
	}
	q.heap[last] = queueEntry{}
	q.heap = q.heap[:last]
	if i != last {
		q.fix(i)
	}
}

func (q *Queue) fix(i int) {
	if !q.down(i) {
		q.up(i)
	}
}

func (q *Queue) swap(i, j int) {
	q.heap[i], q.heap[j] = q.heap[j], q.heap[i]
	q.index[q.heap[i].id] = i
	q.index[q.heap[j].id] = j
}

func (q *Queue) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.heap[i].less(q.heap[p]) {
			return
		}
		q.swap(i, p)
		i = p
	}
}

// down sifts i down and reports whether it moved.
func (q *Queue) down(i int) bool {
	start, n := i, len(q.heap)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.heap[r].less(q.heap[l]) {
			m = r
		}
		if !q.heap[m].less(q.heap[i]) {
			break
		}
		q.swap(i, m)
		i = m
	}
	return i > start
}
