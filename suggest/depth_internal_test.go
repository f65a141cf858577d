package suggest

import (
	"fmt"
	"net/url"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/extractor"
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

// TestTreeDepthGuards: the suggester's walks over a parsed page stop at
// extractor.MaxTreeDepth (html.Parse nests at most 512 elements, so the
// guard is a second wall, tested here on trees built by hand): a node at
// the bound is reached, one below it is not.
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
		{"shortText", func(d int) bool {
			got, _ := shortText(chain(d, text()), 10)
			return got == "deep"
		}, 0},
		{"walkElements", func(d int) bool {
			found := false
			walkElements(chain(d, link()), func(n *html.Node) { found = found || n.DataAtom == atom.A })
			return found
		}, 0},
		{"precedes", func(d int) bool {
			a := link()
			root := chain(d, a)
			b := &html.Node{Type: html.ElementNode, Data: "p", DataAtom: atom.P}
			root.AppendChild(b)
			return precedes(a, b)
		}, 1},
		{"suggester's lists", func(d int) bool {
			ul := &html.Node{Type: html.ElementNode, Data: "ul", DataAtom: atom.Ul}
			for i := range 4 {
				li := &html.Node{Type: html.ElementNode, Data: "li", DataAtom: atom.Li}
				a := &html.Node{Type: html.ElementNode, Data: "a", DataAtom: atom.A, Attr: []html.Attribute{{Key: "href", Val: fmt.Sprintf("/story/%d-a-long-enough-slug", i)}}}
				a.AppendChild(&html.Node{Type: html.TextNode, Data: fmt.Sprintf("A story title number %d with words", i)})
				li.AppendChild(a)
				ul.AppendChild(li)
			}
			doc := &html.Node{Type: html.DocumentNode}
			root := &html.Node{Type: html.ElementNode, Data: "html", DataAtom: atom.Html}
			body := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
			doc.AppendChild(root)
			root.AppendChild(body)
			body.AppendChild(chain(d, ul))
			page, _ := url.Parse("https://town.example/")
			return len(newSuggester(doc, page, extractor.Options{}).ranked()) == 1
		}, -1}, // the list's items are one below the <ul>
	} {
		bound := extractor.MaxTreeDepth + tc.past
		if !tc.reach(bound) {
			t.Errorf("%s: a node at depth %d not reached", tc.name, bound)
		}
		if tc.reach(bound + 1) {
			t.Errorf("%s: a node at depth %d reached, past the bound", tc.name, bound+1)
		}
	}
}
