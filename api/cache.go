package api

import (
	"container/list"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// defaultCacheBytes bounds the render cache when Options.CacheBytes is 0.
const defaultCacheBytes = 32 << 20

// cacheEntryOverhead approximates the bookkeeping of one entry, so that many
// tiny feeds still count against the bound.
const cacheEntryOverhead = 256

// renderCache is the "cache engine" of the Dynamo paper: rendered feeds kept
// in memory, keyed by everything a rendering depends on (resource, latest
// version seq, version count, normalized query, format, base URL, poll
// interval hint). A new version changes the key, so entries are never stale,
// only unreachable, and the LRU order evicts them. It is bounded by bytes.
// Safe for concurrent use.
type renderCache struct {
	mu    sync.Mutex
	limit int64
	size  int64
	ll    *list.List               // front = most recently used
	items map[string]*list.Element // key -> *cacheEntry
	// latest names, for each request identity (see feedRequest.ident),
	// the entry last rendered for it: while the store cannot be reached,
	// a feed is answered from there, as the key of its current version
	// cannot be known. An entry evicted takes its identity with it.
	latest map[string]*list.Element

	hits, misses, evictions prometheus.Counter
	bytes                   prometheus.Gauge
}

type cacheEntry struct {
	key   string
	ident string // the request identity it was last rendered for; "" for none
	feed  *feedEntry
}

// newRenderCache builds a cache of at most limit bytes (0: 32 MiB; negative:
// no caching) and registers its metrics on reg when reg is not nil.
func newRenderCache(limit int64, reg prometheus.Registerer) (*renderCache, error) {
	if limit == 0 {
		limit = defaultCacheBytes
	}
	c := &renderCache{
		limit:  limit,
		ll:     list.New(),
		items:  make(map[string]*list.Element),
		latest: make(map[string]*list.Element),
		hits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "dynamo_feed_cache_hits_total",
			Help: "Feed requests (feeds and their pages for browsers) answered from the render cache.",
		}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "dynamo_feed_cache_misses_total",
			Help: "Feed requests (feeds and their pages for browsers) that had to render.",
		}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "dynamo_feed_cache_evictions_total",
			Help: "Rendered feeds dropped from the render cache to stay within its byte bound.",
		}),
		bytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "dynamo_feed_cache_bytes",
			Help: "Bytes of rendered feeds held by the render cache.",
		}),
	}
	if reg != nil {
		for _, m := range []prometheus.Collector{c.hits, c.misses, c.evictions, c.bytes} {
			if err := reg.Register(m); err != nil {
				return nil, fmt.Errorf("register render cache metrics: %w", err)
			}
		}
	}
	return c, nil
}

// get returns the cached feed for key and counts a hit or a miss. An entry
// current rejects (a feed's page whose age now reads otherwise; nil: every
// entry is current) is a miss, which the caller's render replaces.
func (c *renderCache) get(key string, current func(*feedEntry) bool) (*feedEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.current(c.items[key], current); e != nil {
		c.hits.Inc()
		return e, true
	}
	c.misses.Inc()
	return nil, false
}

// hit is get for a key in a caller's buffer that counts only a hit: nil
// when key has no current entry, and the get that follows counts the miss.
func (c *renderCache) hit(key []byte, current func(*feedEntry) bool) *feedEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.current(c.items[string(key)], current); e != nil { // indexed here: string(key) does not allocate
		c.hits.Inc()
		return e
	}
	return nil
}

// current returns the entry of el (nil: not cached) when it is current,
// making it the most recently used; nil otherwise. c.mu is held.
func (c *renderCache) current(el *list.Element, current func(*feedEntry) bool) *feedEntry {
	if el == nil {
		return nil
	}
	e := el.Value.(*cacheEntry).feed
	if current != nil && !current(e) {
		return nil
	}
	c.ll.MoveToFront(el)
	return e
}

// peek returns the cached feed for key, or nil, without counting it or
// making it recently used.
func (c *renderCache) peek(key []byte) *feedEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[string(key)]; ok {
		return el.Value.(*cacheEntry).feed
	}
	return nil
}

// put stores feed under key, replacing the entry there, and evicts the least
// recently used entries to stay within the bound. A body larger than an
// eighth of the bound is not kept, so that one huge feed cannot flush
// everything else. With ident (a request identity), the entry becomes the
// one [renderCache.latestFor] answers for it.
func (c *renderCache) put(key string, feed *feedEntry, ident string) {
	cost := int64(len(feed.body)) + int64(len(key)) + cacheEntryOverhead
	if c.limit < 0 || cost > c.limit/8 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if ok {
		// A page rendered again because its age changed replaces the stale
		// one, so that a key holds one entry whatever the clock does (for a
		// feed, a concurrent render of the same key: the same bytes).
		ce := el.Value.(*cacheEntry)
		c.size += int64(len(feed.body)) - int64(len(ce.feed.body))
		ce.feed = feed
		c.ll.MoveToFront(el)
	} else {
		el = c.ll.PushFront(&cacheEntry{key: key, feed: feed})
		c.items[key] = el
		c.size += cost
	}
	if ident != "" {
		el.Value.(*cacheEntry).ident = ident
		c.latest[ident] = el
	}
	for c.size > c.limit {
		last := c.ll.Back()
		e := last.Value.(*cacheEntry)
		c.ll.Remove(last)
		delete(c.items, e.key)
		if c.latest[e.ident] == last {
			delete(c.latest, e.ident)
		}
		c.size -= int64(len(e.feed.body)) + int64(len(e.key)) + cacheEntryOverhead
		c.evictions.Inc()
	}
	c.bytes.Set(float64(c.size))
}

// latestFor returns the entry last rendered for the request identity
// ident and still cached, or nil, without counting it.
func (c *renderCache) latestFor(ident string) *feedEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.latest[ident]; el != nil {
		return el.Value.(*cacheEntry).feed
	}
	return nil
}

// len returns the number of cached feeds.
func (c *renderCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
