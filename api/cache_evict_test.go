package api

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/dynamo-rss/dynamo/schema"
)

// TestRenderCacheLatestOutlivesAnOlderRender: evicting an older render of
// a request identity leaves the newer one its latestFor answer.
func TestRenderCacheLatestOutlivesAnOlderRender(t *testing.T) {
	const cost = 100 + 2 + cacheEntryOverhead // a 100-byte body under a 2-byte key
	c, err := newRenderCache(8*cost, nil)
	if err != nil {
		t.Fatal(err)
	}
	older, newer := &feedEntry{body: make([]byte, 100)}, &feedEntry{body: make([]byte, 100)}
	c.put("k1", older, "feed")
	c.put("k2", newer, "feed")
	for i := range 6 { // fills the cache: 8 entries, nothing evicted yet
		c.put(fmt.Sprint("o", i), &feedEntry{body: make([]byte, 100)}, fmt.Sprint("other", i))
	}
	c.put("o6", &feedEntry{body: make([]byte, 100)}, "other6") // evicts k1 alone
	if c.peek([]byte("k1")) != nil || c.peek([]byte("k2")) == nil {
		t.Fatalf("expected k1 evicted and k2 kept; cache has %d entries", c.len())
	}
	if e := c.latestFor("feed"); e != newer {
		t.Fatalf("latestFor after the older render's eviction = %p, want the newer render %p", e, newer)
	}
}

// TestOutageServesTheNewestRenderAfterAnOlderOneIsEvicted: a feed rendered
// for one version, then again for a newer one, is still answered from the
// render cache during a store outage once the older render was evicted:
// the newer render, not a 503.
func TestOutageServesTheNewestRenderAfterAnOlderOneIsEvicted(t *testing.T) {
	f := fdFixture()
	s := newFDServer(t, f, func(o *Options) { o.CacheBytes = 64 << 10 })
	cache := s.feeds.cache
	const target = "/resources/news?max=2"
	if rec := fdDo(s, http.MethodGet, target); rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d", target, rec.Code)
	}
	f.Save(&schema.Document{URL: "https://example.org/news/index.html", RSSID: "news", Timestamp: fdT0.Add(3 * time.Hour),
		Channel: schema.Channel{Title: "Town News", Link: "https://example.org/news/"},
		Items:   []schema.Item{{Index: 1, ID: "d", Title: "Fourth story", Link: "https://example.org/news/d.html"}}})
	rec := fdDo(s, http.MethodGet, target)
	if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte("Fourth story")) {
		t.Fatalf("GET %s after a new version: %d, want the new version's feed", target, rec.Code)
	}
	newest := rec.Body.Bytes()
	if n := cache.len(); n != 2 {
		t.Fatalf("%d renders cached, want the two of %s", n, target)
	}
	// Smaller feeds, one after another, until the older render alone is
	// evicted (the least recently used, and bigger than each of these).
	for i := 1; cache.len() > 1 && cacheEvicted(cache) == 0; i++ {
		if i > 400 {
			t.Fatal("nothing evicted after 400 renders")
		}
		if rec := fdDo(s, http.MethodGet, fmt.Sprintf("/resources/forum?max=%d", i)); rec.Code != http.StatusOK {
			t.Fatalf("filler render %d: %d", i, rec.Code)
		}
	}
	if cacheEvicted(cache) != 1 {
		t.Fatalf("%d renders evicted at once, want the older one alone", cacheEvicted(cache))
	}

	f.Mu.Lock()
	f.Err, f.InfoErr = errDown, errDown
	f.Mu.Unlock()
	rec = fdDo(s, http.MethodGet, target)
	if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), newest) {
		t.Fatalf("store down, GET %s: %d, want 200 with the newest render\n%s", target, rec.Code, rec.Body)
	}
}

// cacheEvicted counts the evictions of c so far.
func cacheEvicted(c *renderCache) int {
	return int(testutil.ToFloat64(c.evictions))
}
