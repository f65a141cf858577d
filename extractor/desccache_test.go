package extractor_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/schema"
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

// TestCachedDatesFollowTheRules: the cache remembers the date texts a
// resource's rules read, so a date readable only under one resource's
// date_format must still be warned of under another's (one cache serves
// every resource of an engine), and an unreadable date is warned of at
// every extraction.
func TestCachedDatesFollowTheRules(t *testing.T) {
	page := func(date string) string {
		return `<!-- <channel:title> -->T<!-- </channel:title> --><!-- <item:title index="1"> -->t<!-- </item:title> --><!-- <item:extension index="1" uri="http://purl.org/dc/elements/1.1/" prefix="dc" localName="date"> -->` +
			date + `<!-- </item:extension> -->`
	}
	layout := schema.DateRules{Layout: "2006.02.01"}
	cache := extractor.NewDescriptionCache(0)
	for i, step := range []struct {
		date  string
		rules schema.DateRules
		warn  bool
	}{
		{"2026.21.11", layout, false},
		{"2026.21.11", schema.DateRules{}, true}, // remembered as readable under the layout only
		{"2026.21.11", layout, false},
		{"2026.21.11", schema.DateRules{Layout: "2006.02.01", Location: time.FixedZone("X", 3600)}, false},
		{"soon", schema.DateRules{}, true},
		{"soon", schema.DateRules{}, true}, // unreadable ones are not remembered as anything
		{"December 08, 2005 @ 08:25 AM", schema.DateRules{}, false},
		{"December 08, 2005 @ 08:25 AM", schema.DateRules{}, false},
	} {
		res, err := extractor.Extract(strings.NewReader(page(step.date)), extractor.Options{URL: "https://example.org/", Dates: step.rules, Descriptions: cache})
		if err != nil {
			t.Fatal(err)
		}
		warned := strings.Contains(strings.Join(diagStrings(res.Diagnostics), "\n"), "unreadable date")
		if warned != step.warn {
			t.Errorf("step %d (%q, layout %q): warned %v, want %v", i, step.date, step.rules.Layout, warned, step.warn)
		}
	}
}
