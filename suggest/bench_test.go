package suggest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/suggest"
)

// BenchmarkSuggest runs Page on the pattern page with a 211-row table,
// a 5-link introduction, a menu and a footer.
func BenchmarkSuggest(b *testing.B) {
	var page []byte
	for _, p := range suggestPatterns() {
		if p.name == "211 rows beat 5 links" {
			page = []byte(p.page)
		}
	}
	if page == nil {
		b.Fatal("no pattern page")
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		s, err := suggest.Page(page, extractor.Options{URL: "https://town.example/list/"})
		if err != nil || len(s.Proposals) == 0 {
			b.Fatalf("suggest: %v, %d proposals", err, len(s.Proposals))
		}
	}
}

// BenchmarkSuggestLargePage runs Page on the corpus's 1.8 MB news
// homepage (skipped when the corpus is not here).
func BenchmarkSuggestLargePage(b *testing.B) {
	page, err := os.ReadFile(filepath.Join(corpusDir(), "suggest", "welt-homepage.html"))
	if err != nil {
		b.Skipf("the corpus is not here: %v", err)
	}
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		if _, err := suggest.Page(page, extractor.Options{URL: "https://www.welt.de/", ContentType: "text/html; charset=utf-8"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPointLargePage runs Outline, Starts and Like (on the first
// list of the outline) on the corpus's 1.8 MB news homepage (skipped
// when the corpus is not here).
func BenchmarkPointLargePage(b *testing.B) {
	page, err := os.ReadFile(filepath.Join(corpusDir(), "suggest", "welt-homepage.html"))
	if err != nil {
		b.Skipf("the corpus is not here: %v", err)
	}
	opts := extractor.Options{URL: "https://www.welt.de/", ContentType: "text/html; charset=utf-8"}
	o, err := suggest.Outline(page, opts)
	if err != nil {
		b.Fatal(err)
	}
	el := -1
	for _, s := range o.Sections {
		if len(s.Lists) > 0 && el < 0 {
			el = s.Lists[0].Element
		}
	}
	if el < 0 {
		b.Fatal("no list in the outline")
	}
	b.SetBytes(int64(len(page)))
	b.Run("Outline", func(b *testing.B) {
		for b.Loop() {
			if _, err := suggest.Outline(page, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Starts", func(b *testing.B) {
		for b.Loop() {
			suggest.Starts(page, opts)
		}
	})
	b.Run("Like", func(b *testing.B) {
		for b.Loop() {
			if _, err := suggest.Like(page, opts, el); err != nil {
				b.Fatal(err)
			}
		}
	})
}
