package suggest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/suggest"
)

// FuzzPage: whatever the page and content type, Page does not panic and
// returns suggestions (a page it cannot read is an error, not a crash),
// every proposal with a count no smaller than its items.
func FuzzPage(f *testing.F) {
	pages, _ := filepath.Glob(filepath.Join(selectDir, "*.html"))
	for _, p := range pages {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data, "")
		}
	}
	f.Add([]byte("<dl><dt><a href=x>\x00\xff</a><dd>&#0;<dt>"), "text/html; charset=utf-16")
	f.Add([]byte("<ul><li><a href=/a>One title here</a><li><a href=/b>Two title here</a><li><a href=/c>Three</a></ul>"), "text/html; charset=iso-8859-1")
	f.Fuzz(func(t *testing.T, page []byte, contentType string) {
		sugs, err := suggest.Page(page, extractor.Options{URL: "https://example.org/", ContentType: contentType})
		if err != nil {
			t.Fatalf("suggest: %v", err)
		}
		for _, p := range sugs.Proposals {
			if p.Count < len(p.Items) || len(p.Items) > suggest.MaxItems {
				t.Fatalf("count %d, %d items", p.Count, len(p.Items))
			}
		}
	})
}
