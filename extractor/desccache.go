package extractor

import (
	"container/list"
	"encoding/binary"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/dynamo-rss/dynamo/schema"
)

// DescriptionCache remembers sanitized descriptions by the HTML they were
// made from (as collected, with the base URL its links are resolved
// against), so that a page polled again does
// not sanitize again the descriptions that did not change: most polls of a
// changed page change one or two items. It is bounded by the bytes of the
// sanitized values it holds, least recently used first out, and safe for
// concurrent use by every extraction of an engine. Keys are 64-bit hashes
// of the input (base URL, collected HTML, its link URLs) with its length; a collision would give a description
// another's sanitized HTML — still sanitized — with a probability of about
// n²/2⁶⁵ for n descriptions held. It also remembers what the page's
// regions gave, by their raw bytes (see regioncache.go), in the same byte
// budget; those are compared in full, not trusted to a hash. And it
// remembers which date texts the date rules read (dateReadable), outside
// the byte budget, bounded by count.
type DescriptionCache struct {
	mu      sync.Mutex
	limit   int64
	size    int64
	ll      *list.List // front = most recently used; values are *descEntry or *regionEntry
	items   map[descKey]*list.Element
	regions map[regionKey]*list.Element
	dates   map[descKey]struct{} // date texts the rules they were read under read (see dateReadable)

	hits, misses uint64
}

type descKey struct {
	hash uint64
	n    int
}

type descEntry struct {
	key       descKey
	sanitized string
}

// descEntryOverhead approximates an entry's bookkeeping bytes.
const descEntryOverhead = 96

// NewDescriptionCache returns a cache holding at most maxBytes of sanitized
// descriptions (0: 8 MiB).
func NewDescriptionCache(maxBytes int64) *DescriptionCache {
	if maxBytes <= 0 {
		maxBytes = 8 << 20
	}
	return &DescriptionCache{limit: maxBytes, ll: list.New(),
		items: make(map[descKey]*list.Element), regions: make(map[regionKey]*list.Element),
		dates: make(map[descKey]struct{})}
}

// maxDates bounds the date texts a cache remembers (about 2 MiB); past it,
// it forgets them all and starts again.
const maxDates = 1 << 16

// dateReadable reports whether rules read s as a date. The texts they read
// are remembered (by a hash of the rules and the text), so that a page
// polled again does not parse again the dates of items that did not change:
// every one is checked, only to warn of those no reader could date, and
// the lenient parser tries layout after layout. A collision could at worst
// leave out that warning; unreadable texts are not remembered.
func (c *DescriptionCache) dateReadable(rules schema.DateRules, s string) bool {
	loc := ""
	if rules.Location != nil {
		loc = rules.Location.String()
	}
	k := keyOf(rules.Layout, loc, []string{s})
	c.mu.Lock()
	_, ok := c.dates[k]
	c.mu.Unlock()
	if ok {
		return true
	}
	if _, ok := rules.Parse(s); !ok {
		return false
	}
	c.mu.Lock()
	if len(c.dates) >= maxDates {
		clear(c.dates)
	}
	c.dates[k] = struct{}{}
	c.mu.Unlock()
	return true
}

// keyOf is the key of a description: its collected HTML (with URL
// placeholders, see [region.appendTag]), the URLs of the placeholders, and
// the base they resolve against, which together determine the resolved
// HTML the sanitizer reads. Each part is written after its length, so that
// different inputs never make the same bytes; nothing is allocated.
func keyOf(base, html string, urls []string) descKey {
	var d xxhash.Digest
	d.Reset()
	n := 0
	part := func(s string) {
		var l [8]byte
		binary.LittleEndian.PutUint64(l[:], uint64(len(s)))
		d.Write(l[:])
		d.WriteString(s)
		n += len(l) + len(s)
	}
	part(base)
	part(html)
	for _, u := range urls {
		part(u)
	}
	return descKey{d.Sum64(), n}
}

// get returns the sanitized description of key k, if cached.
func (c *DescriptionCache) get(k descKey) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		c.misses++
		return "", false
	}
	c.hits++
	c.ll.MoveToFront(e)
	return e.Value.(*descEntry).sanitized, true
}

// put remembers the sanitized description of key k.
func (c *DescriptionCache) put(k descKey, sanitized string) {
	cost := int64(len(sanitized)) + descEntryOverhead
	if cost > c.limit/8 { // one huge description must not flush the rest
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.ll.MoveToFront(e)
		return
	}
	c.items[k] = c.ll.PushFront(&descEntry{key: k, sanitized: sanitized})
	c.size += cost
	c.evict()
}

// evict drops the least recently used entries while the cache is over its
// limit. The caller holds c.mu.
func (c *DescriptionCache) evict() {
	for c.size > c.limit {
		last := c.ll.Back()
		c.ll.Remove(last)
		switch ent := last.Value.(type) {
		case *descEntry:
			delete(c.items, ent.key)
			c.size -= int64(len(ent.sanitized)) + descEntryOverhead
		case *regionEntry:
			delete(c.regions, ent.key)
			c.size -= ent.cost()
		}
	}
}

// Stats returns the cache's hits and misses so far.
func (c *DescriptionCache) Stats() (hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}
