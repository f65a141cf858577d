package suggest

// The outline of a page, for pointing without a picture: its landmarks
// and headings, and the lists under each.

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/extractor"
)

// PageOutline is a page as [Outline] shows it without a browser: its
// landmarks and headings, and under each the lists found there.
type PageOutline struct {
	Sections []OutlineSection `json:"sections"`
}

// OutlineSection is a heading or a landmark of the page, with the lists
// it holds or labels.
type OutlineSection struct {
	// Heading is the heading's text, or the landmark's label
	// ("Footer" for <footer>, its aria-label when it has one).
	Heading  string        `json:"heading"`
	Level    int           `json:"level"`              // 1–6 for h1–h6, 0 for a landmark
	Landmark string        `json:"landmark,omitempty"` // header, nav, main, aside, footer; "" for a heading
	Element  int           `json:"element"`            // the heading's or landmark's element number
	Lists    []OutlineList `json:"lists"`              // best first
}

// OutlineList is a list of an outline.
type OutlineList struct {
	// Element is an element for which [Like] gives this list: its first
	// item.
	Element int `json:"element"`
	// Count is the number of items, the one Like's proposal states.
	Count int      `json:"count"`
	First []string `json:"first"` // the first three items' titles
	Where string   `json:"where,omitempty"`
}

// Outline returns the page's landmarks and headings in page order, and
// under each the lists found there (at most [MaxOutlineLists] in all,
// each of three items or more, the best first within a section): each
// list under the nearest heading or landmark before it that holds or
// labels it. A list's element and count are [Like]'s.
func Outline(page []byte, opts extractor.Options) (*PageOutline, error) {
	pt, err := newPointer(page, opts)
	if err != nil {
		return nil, err
	}
	pt.rank()
	type found struct {
		g     *group
		spec  extractor.SelectSpec
		list  OutlineList
		first int
	}
	var lists []found
	done := map[*group]bool{}
	var kept []*group
	for _, g := range pt.groups {
		if len(lists) == MaxOutlineLists || len(done) > 4*MaxOutlineLists || len(pt.specs) >= maxOutlineBlocks {
			break
		}
		if partOf(g, kept) {
			continue
		}
		c, ok := pt.choose(g.linked[0])
		if !ok || done[c.g] {
			continue
		}
		done[c.g] = true
		el := g.linked[0]
		if d, ok := pt.choose(c.g.linked[0]); ok && d.g == c.g {
			el = c.g.linked[0]
		}
		n, titles := pt.count(c.spec)
		if n < minItems {
			continue
		}
		kept = append(kept, c.g)
		lists = append(lists, found{c.g, c.spec, OutlineList{Element: pt.num[el], Count: n, First: titles, Where: pt.sg.where(c.g.linked)}, pt.num[c.g.linked[0]]})
	}
	// Sections: landmarks, and headings that are no part of an item.
	inItem := make([]bool, len(pt.nodes))
	for _, l := range lists {
		for i := range l.g.linked {
			for _, p := range itemParts(pt.sg, l.g, i) {
				k := pt.num[p]
				for j := k; j <= pt.end[k]; j++ {
					inItem[j] = true
				}
			}
		}
	}
	out := &PageOutline{Sections: []OutlineSection{}}
	var scopes []*html.Node // of out.Sections
	for i, n := range pt.nodes {
		if len(out.Sections) == maxSections {
			break
		}
		if s, ok := landmarkSection(n); ok && !inItem[i] {
			s.Element = i
			out.Sections = append(out.Sections, s)
			scopes = append(scopes, n)
			continue
		}
		if isHeading(n.DataAtom) && !inItem[i] && !blankText(n) && !hiddenIn(n) {
			out.Sections = append(out.Sections, OutlineSection{Heading: headingText(n), Level: headingLevel(n.DataAtom), Element: i, Lists: []OutlineList{}})
			scopes = append(scopes, headingScope(n))
		}
	}
	for _, l := range lists {
		best := -1
		for k, s := range out.Sections {
			if s.Element < l.first && pt.holds(scopes[k], l.g.linked[0]) {
				best = k
			}
		}
		if best < 0 {
			if len(out.Sections) == 0 || out.Sections[0].Heading != "Page" || out.Sections[0].Element != 0 {
				out.Sections = append([]OutlineSection{{Heading: "Page", Element: 0, Lists: []OutlineList{}}}, out.Sections...)
				scopes = append([]*html.Node{pt.nodes[0]}, scopes...)
			}
			best = 0
		}
		out.Sections[best].Lists = append(out.Sections[best].Lists, l.list)
	}
	return out, nil
}

// chosen is the list Like chooses for an element, with its block.
type chosen struct {
	g    *group
	spec extractor.SelectSpec
}

// choose is the list Like gives for e, without extracting: the first
// candidate whose block is written and holds e's item.
func (pt *pointer) choose(e *html.Node) (chosen, bool) {
	cs := pt.candidates(e)
	for i, c := range cs {
		if i == maxTries {
			break
		}
		if w := pt.written(c.g); w.ok && w.items[c.m] {
			return chosen{c.g, w.spec}, true
		}
	}
	return chosen{}, false
}

// count is the number of items spec yields, as extraction counts them
// (the items with a title or a description, up to the item limit), and
// the first three titles.
func (pt *pointer) count(spec extractor.SelectSpec) (int, []string) {
	items := pt.query(spec.Item)
	limit := pt.opts.Limits.MaxItems
	if limit <= 0 {
		limit = 10000
	}
	items = items[:min(len(items), limit)]
	read := func(src string) func(*html.Node) string {
		if src == "" {
			return func(*html.Node) string { return "" }
		}
		first, err := pt.sg.fieldFirst(src)
		if err != nil {
			return func(*html.Node) string { return "" }
		}
		return func(m *html.Node) string {
			got := first(m)
			if got.IsStr {
				return extractor.CleanText(got.Value)
			}
			if got.Node != nil {
				return textOf(got.Node)
			}
			return ""
		}
	}
	title, desc := read(spec.Title), read(spec.Description)
	if spec.Title == "" && spec.Description == "" {
		title = textOf
	}
	n := 0
	titles := []string{}
	for _, m := range items {
		t := title(m)
		if t == "" && desc(m) == "" && (spec.Description == "" || !hasPicture(m, spec.Description, pt)) {
			continue
		}
		n++
		if len(titles) < 3 {
			titles = append(titles, t)
		}
	}
	return n, titles
}

// hasPicture reports whether a description element with no text holds
// an image (extraction keeps it).
func hasPicture(m *html.Node, src string, pt *pointer) bool {
	first, err := pt.sg.fieldFirst(src)
	if err != nil {
		return false
	}
	got := first(m)
	return got.Node != nil && extractor.FindElement(got.Node, atom.Img, "src") != nil
}

// landmarkNames are the landmarks of an outline: element, role, label.
var landmarkNames = []struct {
	atom  atom.Atom
	role  string
	label string
}{
	{atom.Header, "banner", "Header"},
	{atom.Nav, "navigation", "Navigation"},
	{atom.Main, "main", "Main content"},
	{atom.Aside, "complementary", "Sidebar"},
	{atom.Footer, "contentinfo", "Footer"},
}

// landmarkSection is n as a landmark section, if it is one.
func landmarkSection(n *html.Node) (OutlineSection, bool) {
	role := strings.TrimSpace(strings.ToLower(attrMatch(n, "role").s))
	for _, l := range landmarkNames {
		if n.DataAtom != l.atom && role != l.role {
			continue
		}
		label := extractor.CleanText(attrMatch(n, "aria-label").s)
		if label == "" {
			label = l.label
		}
		return OutlineSection{Heading: label, Landmark: l.atom.String(), Lists: []OutlineList{}}, true
	}
	return OutlineSection{}, false
}

// hiddenIn reports whether n is inside a hidden element (a <template>,
// a <noscript>).
func hiddenIn(n *html.Node) bool {
	for p := n; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && extractor.IsHidden(p.DataAtom) {
			return true
		}
	}
	return false
}

// headingScope is what a heading labels: its parent, or the parent of
// the short block it is the title of (a title bar).
func headingScope(h *html.Node) *html.Node {
	p := h.Parent
	for k := 0; k < 3 && p != nil && p.Parent != nil && p.Parent.Type == html.ElementNode && len(elementChildren(p)) == 1 && utf8.RuneCountInString(textOf(p)) <= 200; k++ {
		p = p.Parent
	}
	return p
}
