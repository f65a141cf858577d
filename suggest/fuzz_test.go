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

// FuzzPoint: whatever the page and the element pointed at, Like, Starts
// and Marks do not panic; Like gives a list (with a count no smaller
// than its items) or an error, and Marks one mark per element, the page
// read as its own unmarked copy giving -1 throughout.
func FuzzPoint(f *testing.F) {
	pages, _ := filepath.Glob(filepath.Join(pointDir, "*.html"))
	for i, p := range pages {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data, 10+7*i)
		}
	}
	f.Add([]byte("<h3>One title</h3><p>text of the post, long enough</p><h3>Two</h3><p>more</p><h3>x</h3><p><a href=/p>Permalink</a></p>"), 3)
	f.Add([]byte("<table><tr><td><a href=/a>A</a></td></tr><tr><td>1</td></tr></table>"), -1)
	f.Fuzz(func(t *testing.T, page []byte, element int) {
		opts := extractor.Options{URL: "https://example.org/"}
		if p, err := suggest.Like(page, opts, element); err == nil && (p.Count < len(p.Items) || p.Select == nil) {
			t.Fatalf("count %d, %d items, %+v", p.Count, len(p.Items), p.Select)
		}
		if len(suggest.Starts(page, opts)) > suggest.MaxStarts {
			t.Fatal("too many starts")
		}
		for _, m := range suggest.Marks(page, opts, page) {
			if m != -1 {
				t.Fatalf("mark %d on an unmarked copy", m)
			}
		}
	})
}
