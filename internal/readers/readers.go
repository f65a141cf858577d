// Package readers counts, per resource, the distinct clients that fetched
// its feeds in the last week (a keyed hash of each address): the budget
// policy's weight_readers. Package api records every feed request here.
package readers

import (
	"hash/maphash"
	"sync"
	"time"
)

// readersWindow is how far back a client counts as a reader of a resource.
const readersWindow = 7 * 24 * time.Hour

// maxReadersPerResource bounds what is remembered per resource: past it, a
// resource simply has that many readers.
const maxReadersPerResource = 4096

// Counter counts, per resource, the distinct clients (by address; only a
// keyed hash of it is kept) that fetched its feeds in the last week: the
// budget policy's weight_readers, as advaRSS weighs feeds by subscribers.
// Safe for concurrent use; each resource has its own lock, so feed requests
// of different resources do not contend.
type Counter struct {
	seed  maphash.Seed
	now   func() time.Time
	byRes sync.Map // resource id → *readerSet
}

type readerSet struct {
	mu     sync.Mutex
	seen   map[uint64]time.Time // client hash → last fetch
	pruned time.Time
}

// New returns an empty Counter on the clock now.
func New(now func() time.Time) *Counter {
	return &Counter{seed: maphash.MakeSeed(), now: now}
}

// Saw records that client fetched a feed of resource id.
func (r *Counter) Saw(id, client string) {
	v, ok := r.byRes.Load(id)
	if !ok {
		v, _ = r.byRes.LoadOrStore(id, &readerSet{seen: map[uint64]time.Time{}})
	}
	set := v.(*readerSet)
	h := maphash.String(r.seed, client)
	now := r.now()
	set.mu.Lock()
	defer set.mu.Unlock()
	if _, known := set.seen[h]; known || len(set.seen) < maxReadersPerResource {
		set.seen[h] = now
	}
	if now.Sub(set.pruned) > time.Hour {
		set.prune(now)
	}
}

func (s *readerSet) prune(now time.Time) {
	for h, t := range s.seen {
		if now.Sub(t) > readersWindow {
			delete(s.seen, h)
		}
	}
	s.pruned = now
}

// Readers is the number of distinct clients that fetched resource id's
// feeds in the last week (poller.Readers).
func (r *Counter) Readers(id string) int {
	v, ok := r.byRes.Load(id)
	if !ok {
		return 0
	}
	set := v.(*readerSet)
	set.mu.Lock()
	defer set.mu.Unlock()
	now := r.now()
	if now.Sub(set.pruned) > time.Hour {
		set.prune(now)
	}
	return len(set.seen)
}
