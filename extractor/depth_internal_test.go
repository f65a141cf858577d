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
		{"precedes", func(d int) bool {
			a := link()
			root := chain(d, a)
			b := &html.Node{Type: html.ElementNode, Data: "p", DataAtom: atom.P}
			root.AppendChild(b)
			return precedes(a, b)
		}, 1},
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
