package badger

import (
	"github.com/dynamo-rss/dynamo/storage"
	"sync"
)

// infoCache keeps the storage.ResourceInfo of resources recently read, so that the
// REST layer's per-request Resource call (which computes the ETag before any
// rendering) costs a map lookup instead of a Badger read.
//
// Writers (save, prune) invalidate an id after their commit, while they still
// hold the resource's lock. A reader fills the cache only if no invalidation
// happened since it looked (the generation check), so a read that raced with a
// commit can never leave a stale entry behind.
type infoCache struct {
	mu  sync.RWMutex
	gen uint64
	m   map[string]storage.ResourceInfo
}

// get returns the cached info and the generation to hand to fill on a miss.
func (c *infoCache) get(id string) (storage.ResourceInfo, uint64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	info, ok := c.m[id]
	return info, c.gen, ok
}

// fill caches info read at generation gen, unless an invalidation came since.
func (c *infoCache) fill(id string, info storage.ResourceInfo, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.m == nil {
		c.m = make(map[string]storage.ResourceInfo)
	}
	c.m[id] = info
}

// invalidate drops id's entry and makes fills begun before it void.
func (c *infoCache) invalidate(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.m, id)
}
