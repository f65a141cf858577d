package suggest

// "This is the title / the date / the link": a field rewritten from the
// element pointed at.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/extractor"
)

// The fields [Field] rewrites from an element pointed at.
const (
	FieldTitle = "title"
	FieldDate  = "date"
	FieldLink  = "link"
)

// Field returns spec with the selector of field ("title", "date" or
// "link") rewritten from the element numbered element, relative to the
// item it is in, so that it yields that element's text (title), its date
// (a <time datetime> inside it, else its text, which must read as a
// date) or its link (the element if it is an <a href>, else the link
// around it or the one link inside it) in this item, and the same kind of
// element in the others. Selectors are the stable kind (classes, chains
// of tags; positions only when nothing else fits), checked with
// [extractor.CompileField] on the page, and the block by extraction.
func Field(page []byte, opts extractor.Options, spec extractor.SelectSpec, field string, element int) (Proposal, error) {
	if field != FieldTitle && field != FieldDate && field != FieldLink {
		return Proposal{}, fmt.Errorf("the field %q cannot be pointed at: only title, date and link", field)
	}
	pt, items, x, e, err := pointedItem(page, opts, spec, element)
	if err != nil {
		return Proposal{}, err
	}
	t, attr, err := pt.target(field, x, e)
	if err != nil {
		return Proposal{}, err
	}
	var src string
	if isAncestor(x, t) {
		src = pt.fieldSelector(items, x, t, attr)
	} else {
		src = pt.runSelector(items, x, t, attr)
	}
	if src == "" {
		return Proposal{}, fmt.Errorf("no selector finds that element in its item first: point at another element of the %s", field)
	}
	out := spec
	if out.Mapped != nil {
		out.Mapped = maps2(out.Mapped, field)
	}
	switch field {
	case FieldTitle:
		out.Title = src
	case FieldDate:
		out.Date = src
	case FieldLink:
		out.Link = src
	}
	p, ok := tryProposal(page, opts, &out)
	if !ok {
		return Proposal{}, fmt.Errorf("the block with that %s yields no items", field)
	}
	p.Kind = KindSelectors
	p.Where = pt.sg.where(items)
	p.Reason = reason(p.Count, p.Where, field+" from the element pointed at")
	return p, nil
}

// maps2 is m without key (a copy).
func maps2(m map[string]extractor.FieldSpec, key string) map[string]extractor.FieldSpec {
	out := make(map[string]extractor.FieldSpec, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// target is the element a field is read from, for e pointed at in item
// x, and the attribute it is read from ("" for its text).
func (pt *pointer) target(field string, x, e *html.Node) (*html.Node, string, error) {
	switch field {
	case FieldLink:
		for a := e; a != nil; a = a.Parent {
			if a.DataAtom == atom.A && usableHref(attrMatch(a, "href")) {
				return a, "href", nil
			}
			if a == x {
				break
			}
		}
		var links []*html.Node
		walkElements(e, func(a *html.Node) {
			if a.DataAtom == atom.A && usableHref(attrMatch(a, "href")) {
				links = append(links, a)
			}
		})
		if len(links) == 1 {
			return links[0], "href", nil
		}
		return nil, "", errors.New("that element is no link and holds no one link: point at the link itself")
	case FieldDate:
		if tm := extractor.FindElement(e, atom.Time, "datetime"); tm != nil {
			return tm, "datetime", nil
		}
		if t, ok := shortText(e, 60); ok && pt.sg.readsAsDate(t) {
			return e, "", nil
		}
		return nil, "", fmt.Errorf("%q does not read as a date: point at the item's date", clip(textOf(e), 40))
	}
	if blankText(e) {
		return nil, "", errors.New("that element has no text: point at the item's title")
	}
	return e, "", nil
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// pathStep is one step of an element's path in its item: its tag and its
// position among its parent's children of that tag.
type pathStep struct {
	tag string
	nth int
}

// pathIn is t's path from item x (empty when t is x).
func pathIn(x, t *html.Node) []pathStep {
	var out []pathStep
	for n := t; n != x && n != nil; n = n.Parent {
		k := 0
		for c := n; c != nil; c = c.PrevSibling {
			if c.Type == html.ElementNode && c.Data == n.Data {
				k++
			}
		}
		out = append(out, pathStep{n.Data, k})
	}
	slices.Reverse(out)
	return out
}

// follow is the element at path in item m, nil when m has none there.
func follow(m *html.Node, path []pathStep) *html.Node {
	n := m
	for _, s := range path {
		var next *html.Node
		k := 0
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.Data == s.tag {
				k++
				if k == s.nth {
					next = c
					break
				}
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

// fieldSelector writes the selector, relative to the items, whose first
// match is t in item x and the element at the same place in most other
// items (4 in 5 of those that have one); attr is appended as " @attr".
// "" when none is found.
func (pt *pointer) fieldSelector(items []*html.Node, x, t *html.Node, attr string) string {
	path := pathIn(x, t)
	var ms, want []*html.Node
	for _, m := range items {
		if w := follow(m, path); w != nil && (m != x || w == t) {
			ms, want = append(ms, m), append(want, w)
		}
	}
	suffix := ""
	if attr != "" {
		suffix = " @" + attr
	}
	if len(path) == 0 {
		if attr != "" {
			return "@" + attr
		}
		return "xpath:."
	}
	for _, c := range relativeSelectors(x, t) {
		src := c + suffix
		if !pt.firstAt(src, x, t, attr) {
			continue
		}
		if pt.sg.firstIs(src, ms, want, attr == "href") || attr == "datetime" && pt.sameAttr(src, ms, want, attr) {
			return src
		}
	}
	return ""
}

// runSelector writes the XPath selector of t in the run of siblings of
// heading x (t is in sibling s): the first following sibling with s's
// tag and class, else s's position after x, then t in it by its tag and
// class; it must find t in x's run and a value in most items' runs. ""
// when none does.
func (pt *pointer) runSelector(items []*html.Node, x, t *html.Node, attr string) string {
	var s *html.Node
	k := 0
	for c := x.NextSibling; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		k++
		if isAncestor(c, t) {
			s = c
			break
		}
	}
	if s == nil {
		return ""
	}
	sibs := append(xpathSteps(s, "following-sibling::", "[1]"), "following-sibling::*["+strconv.Itoa(k)+"]")
	ins := []string{""}
	if t != s {
		ins = xpathSteps(t, "//", "")
	}
	suffix := ""
	if attr != "" {
		suffix = " @" + attr
	}
	for _, sib := range sibs {
		for _, in := range ins {
			src := "xpath:(" + sib + in + ")[1]" + suffix
			if !pt.firstAt(src, x, t, attr) {
				continue
			}
			first, err := pt.sg.fieldFirst(src)
			if err != nil {
				continue
			}
			if found := countIf(items, func(m *html.Node) bool { g := first(m); return g.IsStr || g.Node != nil }); found*5 >= len(items)*4 {
				return src
			}
		}
	}
	return ""
}

// xpathSteps are the XPath steps that name n by its tag and class, then
// by its tag, after axis and before tail.
func xpathSteps(n *html.Node, axis, tail string) []string {
	var out []string
	for _, d := range descriptors(n) {
		if strings.Contains(d, ":") {
			continue
		}
		if tag, cls, ok := strings.Cut(d, "."); ok {
			out = append(out, axis+tag+"[contains(concat(' ', normalize-space(@class), ' '), ' "+cls+" ')]"+tail)
		} else {
			out = append(out, axis+d+tail)
		}
	}
	return out
}

// sameAttr is firstIs for an attribute other than href.
func (pt *pointer) sameAttr(src string, ms, want []*html.Node, attr string) bool {
	first, err := pt.sg.fieldFirst(src)
	if err != nil {
		return false
	}
	hits := countIf(ms, func(m *html.Node) bool {
		i := slices.Index(ms, m)
		got := first(m)
		return got.IsStr && got.Value == attrMatch(want[i], attr).s
	})
	return hits*5 >= len(ms)*4
}

// firstAt reports whether src's first match in item x is t (its attr).
func (pt *pointer) firstAt(src string, x, t *html.Node, attr string) bool {
	first, err := pt.sg.fieldFirst(src)
	if err != nil {
		return false
	}
	got := first(x)
	if attr != "" {
		return got.IsStr && got.Value == attrMatch(t, attr).s
	}
	return got.Node == t
}

// relativeSelectors are the selectors that may name t in item x, the
// most stable first: its classes (alone, then under a classed or a
// heading ancestor), chains of tags from the nearest ancestors, a tag
// after a sibling of its tag, then positions.
func relativeSelectors(x, t *html.Node) []string {
	var out []string
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	var anc []*html.Node // t's ancestors up to x, nearest first
	for p := t.Parent; p != nil && p != x; p = p.Parent {
		anc = append(anc, p)
	}
	own := stableClasses(t)
	for _, c := range own {
		add(t.Data + "." + c)
	}
	for _, p := range anc {
		for _, pc := range stableClasses(p) {
			for _, c := range own {
				add(p.Data + "." + pc + " " + t.Data + "." + c)
			}
			add(p.Data + "." + pc + " " + t.Data)
			add(p.Data + "." + pc + " > " + t.Data)
		}
	}
	add(t.Data)
	chain := t.Data
	for _, p := range anc {
		add(p.Data + " " + t.Data)
		chain = p.Data + " > " + chain
		add(chain)
	}
	// After a sibling of its tag: the second link of a heading.
	if prev := prevElement(t); prev != nil {
		sib := prev.Data + " + " + t.Data
		if t.Parent != x {
			add(t.Parent.Data + " > " + sib)
		}
		add(sib)
		if prev.Data == t.Data {
			gen := prev.Data + " ~ " + t.Data
			if t.Parent != x {
				add(t.Parent.Data + " > " + gen)
			}
		}
	}
	// Positions, the last resort.
	pos := ""
	for i, s := range pathIn(x, t) {
		if i > 0 {
			pos += " > "
		}
		pos += s.tag + ":nth-of-type(" + strconv.Itoa(s.nth) + ")"
	}
	add(":scope > " + pos)
	add(pos)
	return out
}

// prevElement is n's previous element sibling, nil when none.
func prevElement(n *html.Node) *html.Node {
	for s := n.PrevSibling; s != nil; s = s.PrevSibling {
		if s.Type == html.ElementNode {
			return s
		}
	}
	return nil
}
