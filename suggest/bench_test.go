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
