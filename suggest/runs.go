package suggest

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Items with no container of their own: a heading, then its paragraphs
// and a "posted" line, repeated, all siblings (under day headings, in a
// blog of 2006). Each heading stands for its item, and its run of
// siblings, up to the next heading of its level or above, is the item's
// text.

// findRuns records, for every parent with three or more headings of one
// level (h2–h6) each followed by a run of siblings that reads as text
// (more text than links), each heading's run (sg.runs).
func (sg *suggester) findRuns(root *html.Node) {
	walkElements(root, func(p *html.Node) {
		count := map[atom.Atom]int{}
		for c := p.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && isHeading(c.DataAtom) && c.DataAtom != atom.H1 {
				count[c.DataAtom]++
			}
		}
		for a, n := range count {
			if n < minItems {
				continue
			}
			runs := map[*html.Node][]*html.Node{}
			texty, sections := 0, 0
			for c := p.FirstChild; c != nil; c = c.NextSibling {
				if c.Type != html.ElementNode || c.DataAtom != a {
					continue
				}
				var run []*html.Node
				for s := c.NextSibling; s != nil; s = s.NextSibling {
					if s.Type != html.ElementNode {
						continue
					}
					if isHeading(s.DataAtom) && headingLevel(s.DataAtom) <= headingLevel(a) {
						break
					}
					run = append(run, s)
				}
				if len(run) > 0 {
					runs[c] = run
					if readsAsText(run) {
						texty++
					}
					if slices.ContainsFunc(run, func(s *html.Node) bool { return isHeading(s.DataAtom) }) {
						sections++ // a day's heading over items with headings of their own
					}
				}
			}
			if texty*5 >= n*4 && sections*2 < n {
				for h, run := range runs {
					sg.runs[h] = run
				}
			}
		}
	})
}

func headingLevel(a atom.Atom) int {
	return int(strings.TrimPrefix(a.String(), "h")[0] - '0')
}

// readsAsText reports whether a run of elements is text, not a block of
// links: at most half its characters in links.
func readsAsText(run []*html.Node) bool {
	all, linked := 0, 0
	for _, s := range run {
		all += utf8.RuneCountInString(textOf(s))
		walkElements(s, func(e *html.Node) {
			if e.DataAtom == atom.A {
				linked += utf8.RuneCountInString(textOf(e))
			}
		})
	}
	return all >= 20 && linked*2 <= all
}

// runFacts reads an item that is a heading and its run of siblings: the
// heading is its title; its link is the heading's own, else the
// permalink of the run (a link whose text the page gives many pages, on
// this site, "permalink"); a run with neither is no item (a section of
// a text: "Fixes", then a list of changes).
func (sg *suggester) runFacts(m *html.Node, run []*html.Node, f *itemFacts) {
	f.title, f.heading = m, true
	if l := linkOf(m, m); l != nil {
		f.main = l
	} else {
		var links []*html.Node
		for _, s := range run {
			walkElements(s, func(e *html.Node) {
				if e.DataAtom == atom.A && usableHref(attrMatch(e, "href")) {
					links = append(links, e)
				}
			})
		}
		for _, a := range links {
			if sg.genericText(textOf(a)) && sg.linkKind(attrMatch(a, "href").s) != linkForeign {
				f.main = a
				break
			}
		}
	}
	if f.main == nil {
		return
	}
	f.titleLen = titleWidth(textOf(m))
	for _, s := range run {
		f.extra += utf8.RuneCountInString(textOf(s))
	}
	f.dated = sg.hasDate(append([]*html.Node{m}, run...)) || sg.dayHeading(m) != nil
}

// dayHeading is the heading of a higher level before a run's heading
// (an <h2> before <h3>s) when its text reads as a date: the day the
// item is of.
func (sg *suggester) dayHeading(m *html.Node) *html.Node {
	for s := m.PrevSibling; s != nil; s = s.PrevSibling {
		if s.Type != html.ElementNode || !isHeading(s.DataAtom) {
			continue
		}
		if headingLevel(s.DataAtom) < headingLevel(m.DataAtom) {
			if t, ok := shortText(s, 60); ok && sg.readsAsDate(t) {
				return s
			}
			return nil
		}
	}
	return nil
}

// runLink writes the link selector of a run's items: the k-th link of
// the first sibling after the heading that the permalink is in (by its
// tag and class), "" when that does not hold in most items.
func (sg *suggester) runLink(g *group) string {
	f := g.facts[0]
	m := g.linked[0]
	var sib *html.Node
	for _, s := range sg.runs[m] {
		if isAncestor(s, f.main) {
			sib = s
			break
		}
	}
	if sib == nil {
		return ""
	}
	k, i := 0, 0
	walkElements(sib, func(e *html.Node) {
		if e.DataAtom == atom.A && attrMatch(e, "href").found() {
			i++
			if e == f.main {
				k = i
			}
		}
	})
	mains := make([]*html.Node, len(g.facts))
	for i, f := range g.facts {
		mains[i] = f.main
	}
	for _, d := range descriptors(sib) {
		step := d
		if tag, cls, ok := strings.Cut(d, "."); ok {
			step = tag + "[contains(concat(' ', normalize-space(@class), ' '), ' " + cls + " ')]"
		} else if strings.Contains(d, ":") {
			continue
		}
		var c string
		if sib.DataAtom == atom.A && f.main == sib {
			c = "xpath:following-sibling::" + step + "[1] @href"
		} else {
			c = "xpath:(following-sibling::" + step + "[1]//a[@href])[" + strconv.Itoa(k) + "] @href"
		}
		if sg.firstIs(c, g.linked, mains, true) {
			return c
		}
	}
	return ""
}

// runDate is the date selector of run items under day headings.
func (sg *suggester) runDate(g *group) string {
	days := countIf(g.linked, func(m *html.Node) bool { return sg.dayHeading(m) != nil })
	if days*2 < len(g.linked) {
		return ""
	}
	for s := g.linked[0].PrevSibling; s != nil; s = s.PrevSibling {
		if s.Type == html.ElementNode && isHeading(s.DataAtom) && headingLevel(s.DataAtom) < headingLevel(g.linked[0].DataAtom) {
			return "xpath:preceding-sibling::" + s.Data + "[1]"
		}
	}
	return ""
}
