package extractor

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// chain returns a root <div> with leaf at depth edges below it, through
// nested <div>s.
func chain(depth int, leaf *html.Node) *html.Node {
	root := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	n := root
	for range depth - 1 {
		c := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
		n.AppendChild(c)
		n = c
	}
	n.AppendChild(leaf)
	return root
}

// TestTreeDepthGuards: the walks over a parsed page stop at maxTreeDepth
// (html.Parse nests at most 512 elements, so the guard is a second wall,
// tested here on trees built by hand): a node at the bound is reached, one
// below it is not.
func TestTreeDepthGuards(t *testing.T) {
	text := func() *html.Node { return &html.Node{Type: html.TextNode, Data: "deep"} }
	link := func() *html.Node {
		return &html.Node{Type: html.ElementNode, Data: "a", DataAtom: atom.A, Attr: []html.Attribute{{Key: "href", Val: "/x"}}}
	}
	for _, tc := range []struct {
		name  string
		reach func(depth int) bool
		past  int // the depth below the bound: a walk looking at children, or at a node before the guard, sees one more
	}{
		{"nodeText", func(d int) bool {
			v := value{limit: 1 << 20}
			nodeText(&v, chain(d, text()), 0)
			return strings.Contains(v.String(), "deep")
		}, 0},
		{"nodeHTML", func(d int) bool {
			var r region
			nodeHTML(&r, chain(d, text()), 1<<20, 0)
			return strings.Contains(string(r.html), "deep")
		}, 0},
		{"findElement", func(d int) bool {
			return findElement(chain(d, link()), atom.A, "href") != nil
		}, 0},
		{"walkAll", func(d int) bool {
			found := false
			walkAll(chain(d, link()), func(n *html.Node) { found = found || n.DataAtom == atom.A })
			return found
		}, 0},
		{"microdataItems", func(d int) bool {
			scope := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div,
				Attr: []html.Attribute{{Key: "itemscope"}, {Key: "itemtype", Val: "https://schema.org/Article"}}}
			scope.AppendChild(&html.Node{Type: html.ElementNode, Data: "h2", DataAtom: atom.H2, Attr: []html.Attribute{{Key: "itemprop", Val: "headline"}}})
			scope.FirstChild.AppendChild(text())
			return len(microdataItems(chain(d, scope))) == 1
		}, 0},
		{"mdProps", func(d int) bool {
			prop := &html.Node{Type: html.ElementNode, Data: "span", DataAtom: atom.Span, Attr: []html.Attribute{{Key: "itemprop", Val: "name"}}}
			root := chain(d, prop)
			root.Attr = []html.Attribute{{Key: "itemscope"}}
			return len(mdProps(root, "name")) == 1
		}, 1},
	} {
		bound := maxTreeDepth + tc.past
		if !tc.reach(bound) {
			t.Errorf("%s: a node at depth %d not reached", tc.name, bound)
		}
		if tc.reach(bound + 1) {
			t.Errorf("%s: a node at depth %d reached, past the bound", tc.name, bound+1)
		}
	}
}

// TestJSONLDDepthGuards: a JSON-LD value is walked to maxLDDepth, a URL
// value to depth 4 (a url in a url... in a url), through objects and
// arrays alike, and no deeper.
func TestJSONLDDepthGuards(t *testing.T) {
	article := map[string]any{"@type": "Article", "headline": "deep"}
	inArrays := func(v any, n int) any {
		for range n {
			v = []any{v}
		}
		return v
	}
	inObjects := func(v any, key string, n int) any {
		for range n {
			v = map[string]any{key: v}
		}
		return v
	}
	for _, tc := range []struct {
		name string
		v    func(n int) any
	}{
		{"arrays", func(n int) any { return inArrays(article, n) }},
		{"objects", func(n int) any { return inObjects(article, "mainEntity", n) }},
	} {
		for _, n := range []int{maxLDDepth, maxLDDepth + 1} {
			var c ldCollector
			c.visit(tc.v(n), 0)
			if got, want := len(c.things), map[bool]int{true: 1, false: 0}[n <= maxLDDepth]; got != want {
				t.Errorf("an Article under %d %s: %d things, want %d", n, tc.name, got, want)
			}
		}
	}
	for _, tc := range []struct {
		name string
		v    func(n int) any
	}{
		{"arrays", func(n int) any { return inArrays("https://e.example/x", n) }},
		{"url objects", func(n int) any { return inObjects("https://e.example/x", "url", n) }},
		{"@id objects", func(n int) any { return inObjects("https://e.example/x", "@id", n) }},
	} {
		for _, n := range []int{4, 5} {
			s, ok := ldURLValue(tc.v(n), 0)
			if ok != (n <= 4) || ok && s != "https://e.example/x" {
				t.Errorf("a URL under %d %s: %q, %v", n, tc.name, s, ok)
			}
		}
	}
}

// TestSchemaHelpers: type names without their vocabulary, and which @id
// values are web pages.
func TestSchemaHelpers(t *testing.T) {
	for in, want := range map[string]string{
		"NewsArticle": "NewsArticle", " schema:NewsArticle ": "NewsArticle", "https://schema.org/NewsArticle": "NewsArticle",
		"http://schema.org#NewsArticle": "NewsArticle", "#NewsArticle": "NewsArticle", "/Event": "Event", ":Event": "Event",
	} {
		if got := schemaType(in); got != want {
			t.Errorf("schemaType(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]bool{
		"https://e.example/a": true, "http://e.example": true, "ftp://e.example/a": false,
		"https:///a": false, "/a": false, "_:b0": false, "e.example/a": false, "%zz": false,
	} {
		if got := isWebURL(in); got != want {
			t.Errorf("isWebURL(%q) = %v, want %v", in, got, want)
		}
	}
}
