package suggest_test

import (
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
