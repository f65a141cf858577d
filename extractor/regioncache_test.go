package extractor_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor"
)

// sameAsCold extracts each page in turn with one shared cache (so regions
// of earlier pages, and of the same page, come from the cache) and checks
// that every result equals a cold extraction of the same page: document,
// diagnostics with their positions, charset, error.
func sameAsCold(t *testing.T, pages [][]byte, limits []extractor.Limits) {
	t.Helper()
	cache := extractor.NewDescriptionCache(0)
	for round := range 2 {
		for i, data := range pages {
			for _, lim := range limits {
				opts := extractor.Options{URL: page, RSSID: "cache", Timestamp: goldenTime, Limits: lim}
				cold, coldErr := extractor.Extract(bytes.NewReader(data), opts)
				opts.Descriptions = cache
				warm, warmErr := extractor.Extract(bytes.NewReader(data), opts)
				if fmt.Sprint(coldErr) != fmt.Sprint(warmErr) || !reflect.DeepEqual(cold, warm) {
					t.Fatalf("round %d, page %d %q, limits %+v: with the cache\n%v %+v\n%q\nwithout\n%v %+v\n%q",
						round, i, shortPage(data), lim, warmErr, doc(warm), diagStrings(diags(warm)), coldErr, doc(cold), diagStrings(diags(cold)))
				}
			}
		}
	}
}

func doc(r *extractor.Result) any {
	if r == nil || r.Document == nil {
		return nil
	}
	return *r.Document
}

func diags(r *extractor.Result) []extractor.Diagnostic {
	if r == nil {
		return nil
	}
	return r.Diagnostics
}

func shortPage(data []byte) string {
	if len(data) > 200 {
		return string(data[:200]) + "…"
	}
	return string(data)
}

// goldenPages reads the golden pages, by file name.
func goldenPages(tb testing.TB) map[string][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.html"))
	if err != nil {
		tb.Fatal(err)
	}
	pages := make(map[string][]byte, len(files))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		pages[filepath.Base(p)] = data
	}
	return pages
}

// variants are versions of a page as polls see them: the same, shifted
// down and right (so cached regions sit elsewhere), with one region's text
// changed, with line breaks changed, with diagnostics after each region.
func variants(data []byte) [][]byte {
	return [][]byte{
		data,
		append([]byte("<!-- x -->\n\n   "), data...),
		bytes.Replace(data, []byte("-->"), []byte("-->!"), 3),
		bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")),
		bytes.ReplaceAll(data, []byte("\n"), []byte(" ")), // one line: columns after regions matter
		bytes.ReplaceAll(data, []byte("-->"), []byte("-->é\n<!-- <item:x> --> ")),
		// regions over several lines, with a diagnostic right after each
		closings.ReplaceAll(data, []byte("é\n $1<!-- </item:y> -->")),
		bytes.Replace(data, []byte("<!-- </item:title"), []byte("<!-- <item:title index='1'><!-- </item:title"), 1),
	}
}

var closings = regexp.MustCompile(`(<!--\s*</[^>]*>\s*-->)`)

var cacheLimits = []extractor.Limits{{}, {MaxValueBytes: 40}, {MaxDepth: 1}}

// TestRegionCacheSameAsCold runs sameAsCold over the golden pages, the
// benchmark page and their variants.
func TestRegionCacheSameAsCold(t *testing.T) {
	for name, data := range goldenPages(t) {
		t.Run(name, func(t *testing.T) { sameAsCold(t, variants(data), cacheLimits) })
	}
	t.Run("a warning in the opening comment", func(t *testing.T) {
		p := []byte(chanTitle + `<!-- <item:title index="1" index="2"> -->t<!-- </item:title> -->`)
		sameAsCold(t, [][]byte{p, p}, []extractor.Limits{{}})
	})
	t.Run("legacy", func(t *testing.T) {
		withBase := bytes.Replace(legacyPage(3), []byte(`<a href="/news/1/`), []byte(`<base href="https://b.example/d/"><a href="/news/1/`), 1)
		sameAsCold(t, append(variants(legacyPage(5)), twentyItems(1), twentyItems(2), withBase), cacheLimits)
	})
}

// TestRegionCacheHits checks that the cache is used: a page extracted
// again with one region changed gives the same result as a cold extraction.
func TestRegionCacheHits(t *testing.T) {
	cache := extractor.NewDescriptionCache(0)
	for v := range 3 {
		data := twentyItems(v)
		opts := extractor.Options{URL: page, RSSID: "cache", Timestamp: goldenTime}
		cold, err := extractor.Extract(bytes.NewReader(data), opts)
		if err != nil {
			t.Fatal(err)
		}
		opts.Descriptions = cache
		warm, err := extractor.Extract(bytes.NewReader(data), opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(cold, warm) {
			t.Fatalf("version %d differs with the cache", v)
		}
	}
	if n := extractor.CachedRegions(cache); n < 80 {
		t.Errorf("%d regions cached, want the page's regions", n)
	}
}

// FuzzRegionCache: whatever two pages, extracting them in turn with a
// shared cache gives what cold extractions give.
func FuzzRegionCache(f *testing.F) {
	for _, data := range goldenPages(f) {
		v := variants(data)
		f.Add(v[0], v[1])
		f.Add(v[2], v[4])
	}
	f.Add(twentyItems(1), twentyItems(2))
	f.Add([]byte(chanTitle+`<!-- <item:title index="1"> -->x<!-- </item:title> -->`), []byte(chanTitle+"\n"+`<!-- <item:title index="1"> -->x<!-- </item:title> -->`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		sameAsCold(t, [][]byte{a, b, a}, []extractor.Limits{{MaxTokenBytes: 1 << 20}, {MaxTokenBytes: 1 << 20, MaxValueBytes: 8}})
	})
}
