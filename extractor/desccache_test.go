package extractor_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor"
)

// TestDescriptionCacheChangesNothing extracts every golden page without a
// cache, then twice with one cache shared by all pages (cold, then warm),
// and requires the same documents and diagnostics each time.
func TestDescriptionCacheChangesNothing(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("..", "testdata", "extractor", "*.html"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("golden pages: %v", err)
	}
	cache := extractor.NewDescriptionCache(0)
	extract := func(data []byte, c *extractor.DescriptionCache) *extractor.Result {
		res, err := extractor.Extract(bytes.NewReader(data), extractor.Options{URL: "https://example.org/news/", RSSID: "golden", Descriptions: c})
		if err != nil && res == nil {
			t.Fatal(err)
		}
		return res
	}
	for _, p := range append(pages, "bench") {
		var data []byte
		if p == "bench" {
			data = legacyPage(200)
		} else if data, err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
		want := extract(data, nil)
		for _, pass := range []string{"cold", "warm"} {
			got := extract(data, cache)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %s cache: the result differs from the uncached one", filepath.Base(p), pass)
			}
		}
	}
	hits, misses := cache.Stats()
	if hits == 0 || misses == 0 {
		t.Errorf("cache hits %d, misses %d: the warm pass should hit", hits, misses)
	}
	// One description changed: only it misses.
	before, _ := cache.Stats()
	_, m0 := cache.Stats()
	changed := strings.Replace(string(legacyPage(200)), "Story number 7:", "Story number 7 (updated):", 1)
	changed = strings.Replace(changed, `approved the <a href="/budget/7">budget</a>`, `rejected the <a href="/budget/7">budget</a>`, 1)
	extract([]byte(changed), cache)
	after, m1 := cache.Stats()
	if m1-m0 != 1 || after-before != 199 {
		t.Errorf("one changed description: %d misses, %d hits; want 1 and 199 (the unchanged items)", m1-m0, after-before)
	}
}

// TestDescriptionCacheBounded fills a small cache well past its size.
func TestDescriptionCacheBounded(t *testing.T) {
	cache := extractor.NewDescriptionCache(64 << 10)
	for i := range 20 {
		data := legacyPage(100)
		data = bytes.ReplaceAll(data, []byte("council"), []byte("council"+strings.Repeat("x", i)))
		if _, err := extractor.Extract(bytes.NewReader(data), extractor.Options{URL: "https://example.org/", Descriptions: cache}); err != nil {
			t.Fatal(err)
		}
	}
	if got := extractor.DescriptionCacheSize(cache); got > 64<<10 {
		t.Errorf("cache holds %d bytes, over its 64 KiB bound", got)
	}
}
