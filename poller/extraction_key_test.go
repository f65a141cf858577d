package poller

import (
	"testing"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/extractor"
)

// TestExtractionKey checks that every setting that changes how a page is
// read gives another extraction key (so a state saved under the old one
// fetches and extracts the page again at restart), and another value of
// the same setting too, while a page read by its annotations as they come
// keeps key 0 (states saved before the key existed).
func TestExtractionKey(t *testing.T) {
	const url = "http://example.test/news"
	variants := map[string]func(*config.ResourceEntry){
		"annotations":   func(*config.ResourceEntry) {},
		"selectors":     func(r *config.ResourceEntry) { r.Select = extractor.SelectSpec{Item: "li", Title: "a"} },
		"selectors 2":   func(r *config.ResourceEntry) { r.Select = extractor.SelectSpec{Item: "li", Title: "b"} },
		"date_format":   func(r *config.ResourceEntry) { r.DateFormat = "2006-01-02" },
		"date_format 2": func(r *config.ResourceEntry) { r.DateFormat = "02/01/2006" },
		"timezone":      func(r *config.ResourceEntry) { r.Timezone = "Europe/Rome" },
		"timezone 2":    func(r *config.ResourceEntry) { r.Timezone = "Asia/Tokyo" },
		"title":         func(r *config.ResourceEntry) { r.Title = "News" },
		"title 2":       func(r *config.ResourceEntry) { r.Title = "More news" },
		"headers":       func(r *config.ResourceEntry) { r.Headers = map[string]string{"Cookie": "a=1"} },
		"headers 2":     func(r *config.ResourceEntry) { r.Headers = map[string]string{"Cookie": "a=2"} },
		"fetch":         func(r *config.ResourceEntry) { r.Fetch = "browser" },
		"fetch 2":       func(r *config.ResourceEntry) { r.Fetch = "http" },
		"wait_for":      func(r *config.ResourceEntry) { r.Fetch, r.WaitFor = "browser", "#list" },
		"wait_for 2":    func(r *config.ResourceEntry) { r.Fetch, r.WaitFor = "browser", "#items" },
		"content":       func(r *config.ResourceEntry) { r.Content = "full" },
		"content 2":     func(r *config.ResourceEntry) { r.Content = "summary" },
	}
	entries := map[string]*config.ResourceEntry{}
	seen := map[uint64]string{}
	for name, set := range variants {
		r := &config.ResourceEntry{URL: url}
		set(r)
		entries[name] = r
		key := extractionKey(r)
		if (key == 0) != (name == "annotations") {
			t.Errorf("%s: key %#x; want 0 only for a page read by its annotations", name, key)
		}
		if other, ok := seen[key]; ok {
			t.Errorf("%s and %s: the same key %#x", name, other, key)
		}
		seen[key] = name
	}
	for a, ra := range entries {
		for b, rb := range entries {
			if same := sameExtraction(ra, rb); same != (a == b) {
				t.Errorf("sameExtraction(%s, %s) = %v", a, b, same)
			}
		}
	}
	moved := *entries["annotations"]
	moved.URL = url + "/other"
	if sameExtraction(entries["annotations"], &moved) {
		t.Error("sameExtraction: two URLs the same extraction")
	}
}
