package suggest

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
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
// main content" inside <main>; "" when nothing names the place.
func (sg *suggester) where(ms []*html.Node) string {
	anc := ms[0].Parent
	if len(ms) > 1 {
		anc = commonAncestor(ms)
	}
	for p := anc; p != nil && p.Type == html.ElementNode; p = p.Parent {
		if sg.holdsContent(p) && p.DataAtom != atom.Header && p.DataAtom != atom.Footer {
			break
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
	if h := headingAbove(anc, ms[0]); h != "" {
		return "under “" + h + "”"
	}
	for p := anc; p != nil; p = p.Parent {
		if p.DataAtom == atom.Main || attrMatch(p, "role").s == "main" {
			return "in the main content"
		}
	}
	return ""
}

// headingAbove is the text of the nearest heading above the list: a
// heading before its first item in the list's container, or among the
// few elements just before the container or one of its near ancestors
// (a heading itself, or the last heading of a short block: a title
// bar). "" when none is near.
func headingAbove(anc, first *html.Node) string {
	// In the container, before the first item.
	var in *html.Node
	for c := anc.FirstChild; c != nil && !isAncestor(c, first); c = c.NextSibling {
		if h := lastHeading(c); h != nil {
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
			if h := lastHeading(s); h != nil {
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
func lastHeading(n *html.Node) *html.Node {
	if n.Type != html.ElementNode {
		return nil
	}
	if isHeading(n.DataAtom) {
		return n
	}
	if utf8.RuneCountInString(textOf(n)) > 200 {
		return nil
	}
	var last *html.Node
	walkElements(n, func(e *html.Node) {
		if isHeading(e.DataAtom) && !blankText(e) {
			last = e
		}
	})
	return last
}

// headingText is a heading's text, shortened for a reason line.
func headingText(h *html.Node) string {
	t := textOf(h)
	if r := []rune(t); len(r) > 60 {
		t = strings.TrimSpace(string(r[:59])) + "…"
	}
	return t
}
