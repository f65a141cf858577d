package extractor

import (
	"strconv"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// TestDescriptionCacheAccounting: the bytes a cache counts are the bytes
// of what it holds, up to its limit exactly (a cache filled to its limit
// keeps everything), and a description costing more than an eighth of the
// limit is not cached, one costing an eighth is.
func TestDescriptionCacheAccounting(t *testing.T) {
	const entry = 200
	cost := int64(entry + descEntryOverhead)
	c := NewDescriptionCache(10 * cost)
	held := func() (n int, bytes int64) {
		for _, e := range c.items {
			bytes += int64(len(e.Value.(*descEntry).sanitized)) + descEntryOverhead
		}
		return len(c.items), bytes
	}
	for i := range 10 {
		c.put(keyOf("b", strconv.Itoa(i), nil), strings.Repeat("x", entry))
	}
	if n, b := held(); n != 10 || b != c.size || c.size != c.limit {
		t.Errorf("filled to its limit: %d entries, %d bytes held, %d counted, limit %d; want 10 entries, all counted, at the limit", n, b, c.size, c.limit)
	}
	for i := 10; i < 50; i++ {
		c.put(keyOf("b", strconv.Itoa(i), nil), strings.Repeat("x", entry))
	}
	if n, b := held(); n != 10 || b != c.size || c.size > c.limit {
		t.Errorf("past its limit: %d entries, %d bytes held, %d counted, limit %d", n, b, c.size, c.limit)
	}
	if _, ok := c.get(keyOf("b", "49", nil)); !ok {
		t.Error("the newest entry was evicted")
	}
	if _, ok := c.get(keyOf("b", "39", nil)); ok {
		t.Error("an entry older than the last ten is still held")
	}

	big := NewDescriptionCache(8 * cost)
	big.put(keyOf("b", "eighth", nil), strings.Repeat("x", entry))
	big.put(keyOf("b", "more", nil), strings.Repeat("x", entry+1))
	if _, ok := big.get(keyOf("b", "eighth", nil)); !ok {
		t.Error("a description costing an eighth of the limit was not cached")
	}
	if _, ok := big.get(keyOf("b", "more", nil)); ok {
		t.Error("a description costing more than an eighth of the limit was cached")
	}
}

// TestRegionEntryCost: a cached region counts at least the bytes it holds
// (its raw bytes, text, href, HTML and URLs) beside its bookkeeping, so the
// cache's byte bound bounds them.
func TestRegionEntryCost(t *testing.T) {
	e := &regionEntry{raw: strings.Repeat("r", 100), res: &regionResult{
		text: strings.Repeat("t", 50), href: strings.Repeat("h", 30), html: strings.Repeat("m", 70),
		urls: []string{strings.Repeat("u", 20), strings.Repeat("v", 10)},
		a:    annotation{attrs: []attr{{"index", "1"}, {"id", "x"}}},
	}}
	held := int64(100 + 50 + 30 + 70 + 20 + 10)
	if got := e.cost(); got < held+2*descEntryOverhead+2*16+2*64 {
		t.Errorf("cost %d, below the %d bytes held and their bookkeeping", got, held+2*descEntryOverhead+2*16+2*64)
	}
}

// TestRegionCache: a region is found again by its raw bytes (a hash
// collision is not a hit), and one costing more than an eighth of the
// limit is not kept; regionName reads a name that runs to the end.
func TestRegionCache(t *testing.T) {
	raw := []byte(`<!-- <item:title index="1"> -->x<!-- </item:title> -->`)
	res := &regionResult{text: "x"}
	cost := (&regionEntry{raw: string(raw), res: res}).cost()
	c := NewDescriptionCache(8 * cost)
	c.putRegion(raw, 100, res)
	if got, ok := c.getRegion(raw, 100); !ok || got != res {
		t.Errorf("a cached region not found: %v, %v", got, ok)
	}
	// The same key with other bytes: a collision, not a hit.
	e := c.regions[regionKey{xxhash.Sum64(raw), len(raw), 100}]
	e.Value.(*regionEntry).raw = strings.ToUpper(string(raw))
	if _, ok := c.getRegion(raw, 100); ok {
		t.Error("a region with other bytes under the same key was a hit")
	}
	big := []byte(string(raw) + "y") // one byte over an eighth
	c.putRegion(big, 100, res)
	if _, ok := c.getRegion(big, 100); ok {
		t.Error("a region costing more than an eighth of the limit was cached")
	}
	for body, want := range map[string]string{"<item:title": "item:title", " </item:link> ": "item:link", "<x": "x"} {
		if name, _, _ := regionName([]byte(body)); string(name) != want {
			t.Errorf("regionName(%q) = %q, want %q", body, name, want)
		}
	}
}
