package suggest

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/extractor"
)

// Where a list sits, as a person would point at it: under the heading
// just above it, or in a landmark of the page.

// landmarks name the page furniture a list may sit in, by element or by
// id, class or role word.
var landmarks = []struct {
	atom  atom.Atom
	words []string
	where string
}{
	{atom.Footer, []string{"footer", "foot", "contentinfo", "copyright"}, "in the footer"},
	{atom.Aside, []string{"sidebar", "aside", "complementary", "rail"}, "in the sidebar"},
	{atom.Nav, []string{"nav", "navbar", "navi", "navigation", "menu", "menubar", "breadcrumb", "breadcrumbs"}, "in the navigation"},
	{atom.Header, []string{"header", "masthead", "banner", "topbar"}, "in the header"},
}

// where says where the list of ms sits: "in the footer" (or the
// sidebar, the navigation, the header) when it is in such a landmark,
// else "under “HEADING”" for the nearest heading above it, else "in the
// main content" inside <main> or the page's main content area; "on the
// page" when nothing names the place.
func (sg *suggester) where(ms []*html.Node) string {
	anc := ms[0].Parent
	if len(ms) > 1 {
		anc = commonAncestor(ms)
	}
	for p := anc; p != nil && p.Type == html.ElementNode; p = p.Parent {
		// A <footer>, <aside> or <nav> says what it is, even when it
		// holds most of a small page's text.
		for _, l := range landmarks {
			if p.DataAtom == l.atom && l.atom != atom.Header { // an article's <header> holds its title
				return l.where
			}
		}
	}
	for p := anc; p != nil && p.Type == html.ElementNode; p = p.Parent {
		if sg.holdsContent(p) && p.DataAtom != atom.Header && p.DataAtom != atom.Footer {
			break
		}
		if sg.mostOfPage(p) {
			break // a page's wrapper, whatever its class says ("repo-nav")
		}
		for _, l := range landmarks {
			if p.DataAtom == l.atom {
				return l.where
			}
			for _, a := range p.Attr {
				if a.Key != "id" && a.Key != "class" && a.Key != "role" {
					continue
				}
				for _, w := range identWords(a.Val) {
					for _, lw := range l.words {
						if w == lw {
							return l.where
						}
					}
				}
			}
		}
	}
	if h := sg.headingAbove(anc, ms[0]); h != "" {
		return "under “" + h + "”"
	}
	for p := anc; p != nil; p = p.Parent {
		if p.DataAtom == atom.Main || attrMatch(p, "role").s == "main" || (p.Type == html.ElementNode && sg.holdsContent(p)) {
			return "in the main content"
		}
	}
	return "on the page" // nothing names the place: still a place, so that every proposal says one
}

// headingAbove is the text of the nearest heading above the list: a
// heading before its first item in the list's container, or among the
// few elements just before the container or one of its near ancestors
// (a heading itself, or the last heading of a short block: a title
// bar). "" when none is near.
func (sg *suggester) headingAbove(anc, first *html.Node) string {
	// In the container, before the first item.
	var in *html.Node
	for c := anc.FirstChild; c != nil && !isAncestor(c, first); c = c.NextSibling {
		if h := sg.lastHeading(c); h != nil {
			in = h
		}
	}
	if in != nil {
		return headingText(in)
	}
	p := anc
	for range 4 {
		if p == nil || p.Type != html.ElementNode || p.DataAtom == atom.Body {
			break
		}
		k := 0
		for s := p.PrevSibling; s != nil && k < 3; s = s.PrevSibling {
			if s.Type != html.ElementNode {
				continue
			}
			k++
			if h := sg.lastHeading(s); h != nil {
				return headingText(h)
			}
			if utf8.RuneCountInString(textOf(s)) > 200 {
				break // content, not a title bar: the heading above it is another list's
			}
		}
		p = p.Parent
	}
	return ""
}

// lastHeading is n when it is a heading (h1–h6), else the last heading
// in n when n is a short block (a title bar), else nil.
func (sg *suggester) lastHeading(n *html.Node) *html.Node {
	if n.Type != html.ElementNode {
		return nil
	}
	if isHeading(n.DataAtom) {
		if sg.sectionHeading(n) {
			return n
		}
		return nil
	}
	if utf8.RuneCountInString(textOf(n)) > 200 {
		return nil
	}
	var last *html.Node
	walkElements(n, func(e *html.Node) {
		if isHeading(e.DataAtom) && sg.sectionHeading(e) {
			last = e
		}
	})
	return last
}

// sectionHeading reports whether a heading names a part of the page: it
// has text of its own (not a logo's alt text) and links to no article
// (an item's title does).
func (sg *suggester) sectionHeading(h *html.Node) bool {
	own := false
	article := false
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode && strings.TrimSpace(c.Data) != "":
				own = true
			case c.Type == html.ElementNode && c.DataAtom == atom.A:
				if h := attrMatch(c, "href"); usableHref(h) && sg.linkKind(h.s) == linkArticle {
					article = true
				}
				walk(c)
			case c.Type == html.ElementNode && !extractor.IsHidden(c.DataAtom):
				walk(c)
			}
		}
	}
	walk(h)
	return own && !article
}

// mostOfPage reports whether an element holds most of the page's text.
func (sg *suggester) mostOfPage(n *html.Node) bool {
	if sg.pageText == 0 {
		sg.pageText = textLen(sg.doc, -1) + 1
	}
	return textLen(n, sg.pageText/2) > sg.pageText/2
}

// textLen is the bytes of text under n (hidden elements aside), counted
// up to past limit (-1: all).
func textLen(n *html.Node, limit int) int {
	total := 0
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		if depth > extractor.MaxTreeDepth || limit >= 0 && total > limit {
			return
		}
		if n.Type == html.TextNode {
			total += len(strings.TrimSpace(n.Data))
			return
		}
		if n.Type == html.ElementNode && extractor.IsHidden(n.DataAtom) {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return total
}

// headingText is a heading's text, shortened for a reason line.
func headingText(h *html.Node) string {
	t := textOf(h)
	if r := []rune(t); len(r) > 60 {
		t = strings.TrimSpace(string(r[:59])) + "…"
	}
	return t
}
