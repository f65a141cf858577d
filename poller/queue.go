package poller

import "time"

// Queue is the scheduler's min-heap of next-poll times, indexed by resource
// id: every operation is O(log n) except Len, Peek and At, which are O(1).
// Equal times pop in id order, so schedules are deterministic. The zero value
// is an empty queue. A Queue is not safe for concurrent use; the engine
// guards its own with a mutex, the simulator drives one directly.
type Queue struct {
	heap  []*queueEntry
	index map[string]*queueEntry // touched only by Push of a new id, Remove and Pop
}

// queueEntry knows its heap position, so sifting never touches the map.
type queueEntry struct {
	key int64 // at as Unix nanoseconds: the comparison key
	at  time.Time
	id  string
	pos int
}

func (e *queueEntry) less(o *queueEntry) bool {
	if e.key == o.key {
		return e.id < o.id
	}
	return e.key < o.key
}

// Len returns the number of scheduled resources.
func (q *Queue) Len() int { return len(q.heap) }

// Push schedules id at time at, rescheduling it if it is already queued.
func (q *Queue) Push(id string, at time.Time) {
	if q.index == nil {
		q.index = make(map[string]*queueEntry)
	}
	if e, ok := q.index[id]; ok {
		e.at, e.key = at, at.UnixNano()
		q.fix(e.pos)
		return
	}
	e := &queueEntry{key: at.UnixNano(), at: at, id: id, pos: len(q.heap)}
	q.heap = append(q.heap, e)
	q.index[id] = e
	q.up(e.pos)
}

// Update reschedules a queued id; it reports false (and does nothing) when id
// is not queued.
func (q *Queue) Update(id string, at time.Time) bool {
	e, ok := q.index[id]
	if !ok {
		return false
	}
	e.at, e.key = at, at.UnixNano()
	q.fix(e.pos)
	return true
}

// Remove unschedules id; it reports whether id was queued.
func (q *Queue) Remove(id string) bool {
	e, ok := q.index[id]
	if !ok {
		return false
	}
	q.removeAt(e.pos)
	return true
}

// At returns when id is scheduled.
func (q *Queue) At(id string) (time.Time, bool) {
	e, ok := q.index[id]
	if !ok {
		return time.Time{}, false
	}
	return e.at, true
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
		q.heap[i].pos = i
	}
	q.heap[last] = nil
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
	q.heap[i].pos = i
	q.heap[j].pos = j
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
