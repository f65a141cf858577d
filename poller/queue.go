package poller

import "time"

// Queue is the scheduler's min-heap of next-poll times, indexed by resource
// id: Push, Update, Remove and Pop are O(log n); Len, Peek and At are O(1).
// Equal times pop in id order, so schedules are deterministic. The zero value
// is an empty queue. A Queue is not safe for concurrent use; the engine
// guards its own with a mutex, the simulator drives one directly.
//
// Layout, for a million entries: a 4-ary heap of 16-byte nodes (the time
// key and a slot number), so the four children of a node share one cache
// line and the tree is half as deep as a binary one; ids, times and heap
// positions live in a slot table that sifting touches once per level.
type Queue struct {
	heap  []queueNode
	slots []queueSlot
	free  []int32          // unused slot numbers
	index map[string]int32 // id -> slot
}

type queueNode struct {
	key  int64 // next-poll time, Unix nanoseconds
	slot int32
}

type queueSlot struct {
	id  string
	at  time.Time
	pos int32 // index of the slot's node in heap
}

const queueArity = 4

func (q *Queue) less(a, b queueNode) bool {
	if a.key == b.key {
		return q.slots[a.slot].id < q.slots[b.slot].id
	}
	return a.key < b.key
}

// Len returns the number of scheduled resources.
func (q *Queue) Len() int { return len(q.heap) }

// Push schedules id at time at, rescheduling it if it is already queued.
func (q *Queue) Push(id string, at time.Time) {
	if q.Update(id, at) {
		return
	}
	if q.index == nil {
		q.index = make(map[string]int32)
	}
	var s int32
	if n := len(q.free); n > 0 {
		s, q.free = q.free[n-1], q.free[:n-1]
	} else {
		s = int32(len(q.slots))
		q.slots = append(q.slots, queueSlot{})
	}
	pos := len(q.heap)
	q.slots[s] = queueSlot{id: id, at: at, pos: int32(pos)}
	q.index[id] = s
	q.heap = append(q.heap, queueNode{key: at.UnixNano(), slot: s})
	q.up(pos)
}

// Update reschedules a queued id; it reports false (and does nothing) when id
// is not queued.
func (q *Queue) Update(id string, at time.Time) bool {
	s, ok := q.index[id]
	if !ok {
		return false
	}
	q.slots[s].at = at
	pos := int(q.slots[s].pos)
	q.heap[pos].key = at.UnixNano()
	q.fix(pos)
	return true
}

// Remove unschedules id; it reports whether id was queued.
func (q *Queue) Remove(id string) bool {
	s, ok := q.index[id]
	if !ok {
		return false
	}
	q.removeAt(int(q.slots[s].pos))
	return true
}

// At returns when id is scheduled.
func (q *Queue) At(id string) (time.Time, bool) {
	s, ok := q.index[id]
	if !ok {
		return time.Time{}, false
	}
	return q.slots[s].at, true
}

// Peek returns the earliest scheduled resource without removing it.
func (q *Queue) Peek() (id string, at time.Time, ok bool) {
	if len(q.heap) == 0 {
		return "", time.Time{}, false
	}
	s := &q.slots[q.heap[0].slot]
	return s.id, s.at, true
}

// Pop removes and returns the earliest scheduled resource.
func (q *Queue) Pop() (id string, at time.Time, ok bool) {
	if len(q.heap) == 0 {
		return "", time.Time{}, false
	}
	s := q.slots[q.heap[0].slot]
	q.removeAt(0)
	return s.id, s.at, true
}

func (q *Queue) removeAt(i int) {
	s := q.heap[i].slot
	delete(q.index, q.slots[s].id)
	q.slots[s] = queueSlot{}
	q.free = append(q.free, s)
	last := len(q.heap) - 1
	if i != last {
		q.heap[i] = q.heap[last]
		q.slots[q.heap[i].slot].pos = int32(i)
	}
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

func (q *Queue) up(i int) {
	n := q.heap[i]
	for i > 0 {
		p := (i - 1) / queueArity
		if !q.less(n, q.heap[p]) {
			break
		}
		q.heap[i] = q.heap[p]
		q.slots[q.heap[i].slot].pos = int32(i)
		i = p
	}
	q.heap[i] = n
	q.slots[n.slot].pos = int32(i)
}

// down sifts i down and reports whether it moved.
func (q *Queue) down(i int) bool {
	start, n, size := i, q.heap[i], len(q.heap)
	for {
		c := queueArity*i + 1
		if c >= size {
			break
		}
		m := c
		for k := c + 1; k < c+queueArity && k < size; k++ {
			if q.less(q.heap[k], q.heap[m]) {
				m = k
			}
		}
		if !q.less(q.heap[m], n) {
			break
		}
		q.heap[i] = q.heap[m]
		q.slots[q.heap[i].slot].pos = int32(i)
		i = m
	}
	q.heap[i] = n
	q.slots[n.slot].pos = int32(i)
	return i > start
}
