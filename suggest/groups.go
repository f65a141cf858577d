package suggest

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/extractor"
)

// How [Page] finds a page's list, the way a person sees it:
//
//   - Candidates are groups of same-shaped elements: the siblings of one
//     parent with one tag (and, apart, with one class), and the elements
//     anywhere in the page with the same path of ancestors (tags, ids and
//     classes; then tags and ids alone), so that several <ul>s of one
//     list, or one <dl> per day, are one list. Classes that differ per
//     item (category-*, post-123) are no part of a group's key.
//   - Each member's main link is the link of its heading (h1–h6, or an
//     element whose class or itemprop names a headline or title: the link
//     inside it or around it), else its link with the longest text; its
//     title is that heading's text, else the main link's, never the whole
//     card's. Links to mailto:, tel:, javascript: or a fragment are no
//     main links; a member without one is left out, the list is not.
//   - A member holding several headings with links to distinct pages is a
//     block of items (a section of cards), not an item.
//   - Groups with the same main links are one list: the outermost
//     elements that hold one item each are its items.
//   - Quality is per item: titles of a title's length, distinct links to
//     pages of this site that are no section pages, headings, dates,
//     consistent shapes; navigation, footers, sidebars and link farms
//     (short texts, boilerplate words, section links) count against it.
//     The score is quality times log2(1+items): of two lists of equal
//     quality the longer wins, with no penalty for size.

// suggester holds what Page works on.
type suggester struct {
	doc   *html.Node
	page  *url.URL
	dates extractor.Options
	facts map[*html.Node]*itemFacts
	dated map[*html.Node]bool
	keys  map[*html.Node][2]string // class path, tag path
	// content: the elements that hold a page's content (see holdsContent)
	content  map[*html.Node]bool
	generic  map[string]bool             // link texts of three pages or more (see genericText)
	promo    map[*html.Node]bool         // elements with a carousel's or promotion's class (see promoted)
	script   script                      // of the page's language (see pageScript)
	runs     map[*html.Node][]*html.Node // a heading's run of siblings, when items have no container (runs.go)
	pageText int                         // bytes of the page's text, plus one (see mostOfPage); 0 until needed
	queried  map[string]queried          // by selector (see queryAll)
	pointing bool                        // writing blocks for pointing (point.go): item selectors by the parents' parents too
}

func newSuggester(doc *html.Node, page *url.URL, opts extractor.Options) *suggester {
	return &suggester{doc: doc, page: page, dates: opts,
		facts: map[*html.Node]*itemFacts{}, dated: map[*html.Node]bool{}, keys: map[*html.Node][2]string{},
		content: map[*html.Node]bool{}, promo: map[*html.Node]bool{}, runs: map[*html.Node][]*html.Node{},
		queried: map[string]queried{}}
}

// group is a candidate list.
type group struct {
	members []*html.Node // in page order
	linked  []*html.Node // the members with a main link
	facts   []*itemFacts // of linked
	cls     string       // a class every member has ("" none)
	score   float64      // quality times log2(1+items)
	quality float64      // per item
	why     string
}

// minItems is the fewest items a list needs.
const minItems = 3

// itemFacts is what a person sees of one candidate item.
type itemFacts struct {
	main      *html.Node // the main link; nil: none
	title     *html.Node // the element whose text is the title
	heading   bool       // title is a heading
	titleLen  int
	headLinks int // distinct pages linked from its headings
	dated     bool
	extra     int // characters of text besides the title
	mailto    bool
}

// ranked returns the candidate lists, best first.
func (sg *suggester) ranked() []*group {
	body := extractor.FindElement(sg.doc, atom.Body, "")
	if body == nil {
		body = sg.doc
	}
	byKey := map[string][]*html.Node{}
	var order []string
	add := func(k string, n *html.Node) {
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], n)
	}
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		if depth > extractor.MaxTreeDepth {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || extractor.IsHidden(c.DataAtom) {
				continue
			}
			pk := sg.pathKeys(n)
			add(fmt.Sprintf("s%p/%s", n, c.Data), c)
			add("c"+pk[0]+"/"+c.Data, c)
			add("t"+pk[1]+"/"+c.Data, c)
			for _, cl := range stableClasses(c) {
				// One tag and an item's class anywhere: a list split over
				// two containers of different classes (a carousel's three
				// teasers, then the other seven).
				if itemishClass(cl) && !titleClass(cl) {
					add("k"+c.Data+"."+cl, c)
				}
			}
			walk(c, depth+1)
		}
	}
	sg.findRuns(body)
	walk(body, 0)

	seen := map[string]bool{}
	var groups []*group
	consider := func(ms []*html.Node, cls string) {
		if len(ms) < minItems {
			return
		}
		sig := fmt.Sprint(ms)
		if seen[sig] {
			return
		}
		seen[sig] = true
		g := &group{members: ms, cls: cls}
		if sg.score(g) {
			groups = append(groups, g)
		}
	}
	for _, k := range order {
		ms := byKey[k]
		if len(ms) < minItems || k[0] == 'k' && parentCount(ms) > 3 {
			continue // an item's class on a page's many boxes: each box is a list of its own
		}
		// Classes: one every member has names the group; one some members
		// share makes a subgroup (the posts among the ads).
		count := map[string]int{}
		var cls []string
		for _, m := range ms {
			for _, c := range uniq(classes(m)) {
				if count[c] == 0 {
					cls = append(cls, c)
				}
				count[c]++
			}
		}
		common := ""
		for _, c := range cls {
			if count[c] == len(ms) && stableClass(c) && (common == "" || itemishClass(c) && !itemishClass(common)) {
				common = c
			}
		}
		consider(ms, common)
		for _, c := range cls {
			if n := count[c]; n >= minItems && n < len(ms) && stableClass(c) {
				var sub []*html.Node
				for _, m := range ms {
					if slices.Contains(classes(m), c) {
						sub = append(sub, m)
					}
				}
				consider(sub, c)
			}
		}
	}

	sg.blocks(groups)

	// One list, many groups: keep, for each set of main links, the
	// outermost elements that hold one item each.
	best := map[string]*group{}
	var sigs []string
	for _, g := range groups {
		var b strings.Builder
		for _, f := range g.facts {
			fmt.Fprintf(&b, "%p ", f.main)
		}
		sig := b.String()
		cur, ok := best[sig]
		if !ok {
			sigs = append(sigs, sig)
			best[sig] = g
			continue
		}
		if sg.preferGroup(g, cur) {
			best[sig] = g
		}
	}
	out := make([]*group, 0, len(sigs))
	for _, s := range sigs {
		out = append(out, best[s])
	}
	slices.SortStableFunc(out, cmpScore)
	return out
}

// parentCount is how many parents ms have.
func parentCount(ms []*html.Node) int {
	ps := map[*html.Node]bool{}
	for _, m := range ms {
		ps[m.Parent] = true
	}
	return len(ps)
}

// blocks lowers the groups whose members are blocks of items: a section
// of cards, when the cards are a list of their own, two or more in most
// sections. Only the best groups are compared, to bound the work.
func (sg *suggester) blocks(groups []*group) {
	top := slices.Clone(groups)
	slices.SortFunc(top, func(x, y *group) int { return cmpScore(x, y) })
	top = top[:min(len(top), 120)]
	for _, g := range top[:min(len(top), 40)] {
		index := make(map[*html.Node]int, len(g.linked))
		for i, m := range g.linked {
			index[m] = i
		}
		for _, h := range top {
			if h == g || len(h.linked) < 2*len(g.linked) || h.quality < 0.7*g.quality {
				continue
			}
			per := make([]int, len(g.linked))
			for _, m := range h.linked {
				for p := m.Parent; p != nil; p = p.Parent {
					if i, ok := index[p]; ok {
						per[i]++
						break
					}
				}
			}
			several := countIf(g.linked, func(m *html.Node) bool { return per[index[m]] >= 2 })
			if several*2 >= len(g.linked) {
				g.score *= 0.1
				g.why += ", each holds several items"
				break
			}
		}
	}
}

func cmpScore(x, y *group) int {
	switch {
	case x.score > y.score:
		return -1
	case x.score < y.score:
		return 1
	}
	return 0
}

// preferGroup reports whether g names the items of a list better than
// cur, both having the same main links: an <article> or an element with
// an item's class, else the outer one.
func (sg *suggester) preferGroup(g, cur *group) bool {
	if sg.inRun(cur.linked[0], g.linked[0]) {
		return true // the heading that stands for an item, not a part of its run
	}
	if sg.inRun(g.linked[0], cur.linked[0]) {
		return false
	}
	gi, ci := itemishElement(g.linked[0]), itemishElement(cur.linked[0])
	if gi != ci {
		return gi
	}
	return isAncestor(g.linked[0], cur.linked[0]) && g.linked[0] != cur.linked[0]
}

// inRun reports whether n is in the run of siblings of heading h.
func (sg *suggester) inRun(n, h *html.Node) bool {
	for _, s := range sg.runs[h] {
		if isAncestor(s, n) {
			return true
		}
	}
	return false
}

func itemishElement(n *html.Node) bool {
	if n.DataAtom == atom.Article {
		return true
	}
	for _, c := range classes(n) {
		if itemishClass(c) {
			return true
		}
	}
	return false
}

// itemWords are class words that name an item of a list.
var itemWords = []string{"item", "post", "entry", "article", "card", "story", "teaser", "news", "result",
	"row", "listing", "job", "event", "release", "thread", "topic", "record", "hentry", "tile", "advisory"}

func itemishClass(c string) bool {
	c = strings.ToLower(c)
	for _, w := range itemWords {
		if strings.Contains(c, w) {
			return true
		}
	}
	return false
}

// stableClass reports whether a class can name a list in a selector: not
// one that differs per item (digits, category-*, tag-*...).
func stableClass(c string) bool {
	if !cssIdent(c) || strings.ContainsAny(c, "0123456789") || len(c) < 2 {
		return false
	}
	lc := strings.ToLower(c)
	for _, p := range []string{"category-", "tag-", "post-", "format-", "status-", "type-", "author-", "id-", "is-", "has-", "js-", "active", "selected", "current", "odd", "even", "first", "last"} {
		if strings.HasPrefix(lc, p) {
			return false
		}
	}
	return true
}

func uniq(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// stableClasses are n's stable classes, sorted.
func stableClasses(n *html.Node) []string {
	var out []string
	for _, c := range classes(n) {
		if stableClass(c) {
			out = append(out, c)
		}
	}
	return uniq(out)
}

// pathKeys are n's ancestors path as a key: tags, ids and stable classes;
// and tags and ids alone.
func (sg *suggester) pathKeys(n *html.Node) [2]string {
	if k, ok := sg.keys[n]; ok {
		return k
	}
	var k [2]string
	if n.Type == html.ElementNode {
		var pk [2]string
		if n.Parent != nil {
			pk = sg.pathKeys(n.Parent)
		}
		part := n.Data
		if id := attrMatch(n, "id").s; id != "" && stableClass(id) {
			part += "#" + id
		}
		var cls []string
		for _, c := range classes(n) {
			if stableClass(c) {
				cls = append(cls, c)
			}
		}
		k[1] = pk[1] + "/" + part
		k[0] = pk[0] + "/" + part
		if len(cls) > 0 {
			k[0] += "." + strings.Join(uniq(cls), ".")
		}
	}
	sg.keys[n] = k
	return k
}

// isTitleElement reports whether e is a heading: h1–h6, or an element
// whose class or itemprop names a headline or title.
func isTitleElement(e *html.Node) bool {
	if isHeading(e.DataAtom) {
		return true
	}
	if strings.Contains(attrMatch(e, "itemprop").s, "headline") {
		return true
	}
	for _, c := range classes(e) {
		lc := strings.ToLower(c)
		if !strings.Contains(lc, "title") && !strings.Contains(lc, "headline") && !strings.Contains(lc, "heading") && !itemHeader(lc) {
			continue
		}
		if !slices.ContainsFunc(notTitleWords, func(w string) bool { return strings.Contains(lc, w) }) {
			return true
		}
	}
	return false
}

// titleClass reports whether a class names a title, not an item
// ("article-title").
func titleClass(c string) bool {
	lc := strings.ToLower(c)
	return strings.Contains(lc, "title") || strings.Contains(lc, "headline") || strings.Contains(lc, "heading")
}

// itemHeader reports whether a class names the header of an item
// ("release-header", "card-header"), not the page's ("site-header",
// "header" alone).
func itemHeader(c string) bool {
	words := strings.FieldsFunc(c, func(r rune) bool { return r == '-' || r == '_' })
	return len(words) == 2 && words[1] == "header" && !navTokens[words[0]] && words[0] != "site" && words[0] != "page" && words[0] != "main"
}

// notTitleWords mark a class that names a part of a heading, or what
// holds one, rather than the heading: "headline-intro", "title-wrapper".
var notTitleWords = []string{"sub", "wrap", "container", "intro", "kicker", "topline", "overline", "eyebrow",
	"label", "dachzeile", "roof", "super", "count", "icon", "section", "category", "meta", "bar", "box", "area", "block"}

// linkOf is the link of a heading: the heading itself, an <a href> in
// it, or one around it (up to the item).
func linkOf(h, item *html.Node) *html.Node {
	if h.DataAtom == atom.A && usableHref(attrMatch(h, "href")) {
		return h
	}
	var in *html.Node
	walkElements(h, func(e *html.Node) {
		if in == nil && e.DataAtom == atom.A && usableHref(attrMatch(e, "href")) {
			in = e
		}
	})
	if in != nil {
		return in
	}
	for p := h.Parent; p != nil && p.Type == html.ElementNode; p = p.Parent {
		if p.DataAtom == atom.A && usableHref(attrMatch(p, "href")) {
			return p
		}
		if p == item {
			break
		}
	}
	return nil
}

// factsOf reads a candidate item (memoized).
func (sg *suggester) factsOf(m *html.Node) *itemFacts {
	if f, ok := sg.facts[m]; ok {
		return f
	}
	f := &itemFacts{}
	sg.facts[m] = f
	if run, ok := sg.runs[m]; ok {
		sg.runFacts(m, run, f)
		return f
	}
	scope := []*html.Node{m}
	if m.DataAtom == atom.Dt {
		if dd := pairedSibling(m); dd != nil {
			scope = append(scope, dd)
		}
	}
	var heads, links []*html.Node
	for _, s := range scope {
		walkElements(s, func(e *html.Node) {
			if isTitleElement(e) && !blankText(e) {
				heads = append(heads, e)
			}
			if e.DataAtom == atom.A {
				h := attrMatch(e, "href")
				if usableHref(h) {
					links = append(links, e)
				} else if otherScheme(h.s) {
					f.mailto = true
				}
			}
		})
	}
	pages := map[string]bool{}
	var head, headLink *html.Node
	for _, h := range heads {
		if h == m {
			continue // the item itself: its text is more than a title
		}
		if l := linkOf(h, m); l != nil {
			pages[attrMatch(l, "href").s] = true
			// The first heading with a link, or a heading in it (the
			// h2 of a "post-title" div) with the same link.
			if head == nil || isAncestor(head, h) && l == headLink && len(textOf(h))*5 >= len(textOf(head))*4 {
				head, headLink = h, l
			}
		}
	}
	f.headLinks = len(pages)
	if head != nil {
		// A kicker heading, then the title's heading with the same link
		// ("<h1>Mobility</h1><h2>The mayor opens the day</h2>").
		short := utf8.RuneCountInString(textOf(head))
		href := attrMatch(headLink, "href").s
		for _, h := range heads {
			if h == head || isAncestor(h, head) || isAncestor(head, h) || short >= 30 || utf8.RuneCountInString(textOf(h)) < 2*short {
				continue
			}
			if l := linkOf(h, m); l != nil && attrMatch(l, "href").s == href {
				head, headLink = h, l
				break
			}
		}
	}
	switch {
	case head != nil:
		f.main, f.title, f.heading = headLink, head, true
		if isAncestor(head, headLink) && !wholeHeading(head) {
			// The link in the heading: the heading's text may hold more
			// (a site's name, a count) that is no part of the title.
			f.title = headLink
		}
	case len(links) > 0:
		// A heading without a link: the link that reads the same is its
		// link; else the heading is the title when it comes before the
		// main link (not a heading deep in the item's text).
		for _, h := range heads {
			ht := strings.ToLower(textOf(h))
			for _, a := range links {
				if strings.ToLower(textOf(a)) == ht {
					f.main, f.title, f.heading = a, h, true
					break
				}
			}
			if f.main != nil {
				break
			}
		}
		if f.main == nil {
			f.main = sg.longestLink(twiceLinked(links))
			if f.main == nil {
				return f // only a pager's or a menu's links: no item
			}
			if len(scope) == 2 && len(heads) > 0 && !isAncestor(m, heads[0]) {
				// A <dt> and its <dd>, the heading in the <dd>: the
				// term's link names the item (an arXiv identifier), not
				// the authors' links of the <dd>.
				var term []*html.Node
				for _, a := range links {
					if isAncestor(m, a) {
						term = append(term, a)
					}
				}
				if len(term) > 0 {
					f.main = sg.longestLink(term)
				}
				f.title, f.heading = heads[0], true
			} else {
				f.title = f.main
				if len(heads) > 0 && precedes(heads[0], f.main) {
					f.title, f.heading = heads[0], true
				}
			}
		}
	}
	if m.DataAtom == atom.A && usableHref(attrMatch(m, "href")) {
		f.main = m
		if f.title == nil || !f.heading {
			f.title = m
		}
	}
	if f.main == nil {
		return f
	}
	if f.title == f.main && !f.heading {
		f.title = cardTitle(f.main)
	}
	t := textOf(f.title)
	f.titleLen = titleWidth(t)
	all := 0
	for _, s := range scope {
		all += utf8.RuneCountInString(textOf(s))
	}
	f.extra = max(all-f.titleLen, 0)
	f.dated = sg.hasDate(scope)
	return f
}

// wholeHeading reports whether a heading's title is its whole text: a
// heading (h1–h6, or a title class) that is one line whose text is mostly
// that of two or more links ("<a>Phone $250 at</a> <a>Shop</a>").
func wholeHeading(h *html.Node) bool {
	if !isHeading(h.DataAtom) && !slices.ContainsFunc(classes(h), func(c string) bool {
		lc := strings.ToLower(c)
		return strings.Contains(lc, "title") || strings.Contains(lc, "headline")
	}) {
		return false
	}
	var links []*html.Node
	lines := false // a <br> or a block: the links are on lines of their own (a title, then "by: <a>author</a>")
	walkElements(h, func(e *html.Node) {
		if e.DataAtom == atom.A && usableHref(attrMatch(e, "href")) {
			links = append(links, e)
		}
		lines = lines || e != h && extractor.IsBlock(e.DataAtom)
	})
	if lines {
		return false
	}
	if len(links) < 2 {
		return false
	}
	all := utf8.RuneCountInString(textOf(h))
	in := 0
	for _, a := range links {
		in += utf8.RuneCountInString(textOf(a))
	}
	return all <= 300 && in*10 >= all*7
}

// titleWidth is a title's length in characters, a CJK character
// counting as two (it says as much as a short word).
func titleWidth(t string) int {
	n := 0
	for _, r := range t {
		n++
		if scriptOf(r) == scriptCJK {
			n++
		}
	}
	return n
}

// precedes reports whether a comes before b in the page (and does not
// hold it).
func precedes(a, b *html.Node) bool {
	if isAncestor(a, b) {
		return false
	}
	seen := false
	var walk func(n *html.Node, depth int) bool
	walk = func(n *html.Node, depth int) bool {
		if n == a {
			seen = true
			return false
		}
		if n == b || depth > extractor.MaxTreeDepth {
			return false
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if !walk(c, depth+1) {
				return false
			}
		}
		return true
	}
	root := a
	for root.Parent != nil && !isAncestor(root, b) {
		root = root.Parent
	}
	walk(root, 0)
	return seen
}

// twiceLinked are the links to the page an item links to twice (its
// picture and its title), when there is one such page; else all links.
func twiceLinked(links []*html.Node) []*html.Node {
	count := map[string]int{}
	for _, a := range links {
		count[strings.TrimSpace(attrMatch(a, "href").s)]++
	}
	var twice []*html.Node
	page := ""
	for _, a := range links {
		h := strings.TrimSpace(attrMatch(a, "href").s)
		if count[h] < 2 || blankText(a) {
			continue
		}
		if page != "" && h != page {
			return links // several: no telling
		}
		page = h
		twice = append(twice, a)
	}
	if twice == nil {
		return links
	}
	return twice
}

// leadStrong is the <strong> or <b> a link starts with (in a <span>
// or not): the name, then what may qualify it ("<strong>Band</strong>
// <span>with the support acts</span>"); nil when the link starts
// otherwise.
func leadStrong(a *html.Node) *html.Node {
	e := a
	for range 3 {
		var first *html.Node
		for c := e.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode && strings.TrimSpace(c.Data) != "" {
				return nil
			}
			if c.Type == html.ElementNode {
				first = c
				break
			}
		}
		switch {
		case first == nil:
			return nil
		case first.DataAtom == atom.Strong || first.DataAtom == atom.B:
			if utf8.RuneCountInString(textOf(first)) < 2 {
				return nil
			}
			return first
		case first.DataAtom != atom.Span:
			return nil
		}
		e = first
	}
	return nil
}

// cardTitle is the title inside a link that wraps a whole card: its first
// element with a title's text, when the link holds much more than that.
func cardTitle(a *html.Node) *html.Node {
	if s := leadStrong(a); s != nil {
		return s
	}
	all := utf8.RuneCountInString(textOf(a))
	blocks := false
	walkElements(a, func(e *html.Node) {
		blocks = blocks || e != a && extractor.IsBlock(e.DataAtom) && e.DataAtom != atom.Br
	})
	if all < 80 || !blocks {
		return a
	}
	var found *html.Node
	walkElements(a, func(e *html.Node) {
		if found != nil || e == a {
			return
		}
		n := utf8.RuneCountInString(textOf(e))
		if n >= 8 && n*10 < all*8 && !hasBlockChild(e) {
			found = e
		}
	})
	if found == nil {
		return a
	}
	return found
}

func hasBlockChild(e *html.Node) bool {
	for c := e.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && extractor.IsBlock(c.DataAtom) && c.DataAtom != atom.Br {
			return true
		}
	}
	return false
}

// longestLink is the link with the longest text that is no boilerplate
// ("Read more") and no text the page gives many links ("Source code
// (zip)" under every release), the first on a tie; else the first link;
// nil when every link is boilerplate (a pager's).
func (sg *suggester) longestLink(links []*html.Node) *html.Node {
	var best *html.Node
	bestLen := -1
	nav := 0
	for _, a := range links {
		t := textOf(a)
		if boilerplate(t) {
			nav++
			continue
		}
		if sg.genericText(t) {
			continue
		}
		if l := utf8.RuneCountInString(t); l > bestLen {
			best, bestLen = a, l
		}
	}
	if best == nil && nav == len(links) {
		return nil // a pager ("2", "›", "Next"), a view switch ("Gallery")
	}
	if best == nil {
		return links[0]
	}
	return best
}

// genericText reports whether the page has links with this text to three
// or more pages: an action or a label, not a title.
func (sg *suggester) genericText(t string) bool {
	if sg.generic == nil {
		pages := map[string]map[string]bool{}
		walkElements(sg.doc, func(e *html.Node) {
			if e.DataAtom != atom.A {
				return
			}
			h := attrMatch(e, "href")
			if !usableHref(h) {
				return
			}
			k := strings.ToLower(textOf(e))
			if pages[k] == nil {
				pages[k] = map[string]bool{}
			}
			if len(pages[k]) < 3 {
				pages[k][h.s] = true
			}
		})
		sg.generic = map[string]bool{}
		for k, ps := range pages {
			if len(ps) >= 3 && k != "" {
				sg.generic[k] = true
			}
		}
	}
	return sg.generic[strings.ToLower(t)]
}

func blankText(e *html.Node) bool {
	return strings.TrimSpace(textOf(e)) == ""
}

// otherScheme reports a link to something other than a page: mailto:,
// tel:, javascript:...
func otherScheme(h string) bool {
	h = strings.TrimSpace(strings.ToLower(h))
	for _, p := range []string{"mailto:", "tel:", "javascript:", "sms:", "callto:", "data:"} {
		if strings.HasPrefix(h, p) {
			return true
		}
	}
	return false
}

// score computes a group's quality and score; false: not a list.
func (sg *suggester) score(g *group) bool {
	for _, m := range g.members {
		if f := sg.factsOf(m); f.main != nil {
			g.linked = append(g.linked, m)
			g.facts = append(g.facts, f)
		}
	}
	n := len(g.linked)
	if n < minItems || n*2 < len(g.members) && (g.members[0].DataAtom != atom.Tr || n*3 < len(g.members)) {
		return false // most members have no link: no list (table rows: two, and a pager's, per item)
	}
	fn := float64(n)
	var titles, extra, dated, headed, blocks, section, foreign, boiler, nav, untitled, promo int
	var scripts scriptCounts
	hrefs := map[string]bool{}
	shapes := map[string]int{}
	navWhere := ""
	for i, f := range g.facts {
		titles += min(f.titleLen, 80)
		if f.titleLen < 2 {
			untitled++
		}
		extra += min(f.extra, 300)
		if f.dated {
			dated++
		}
		if f.heading {
			headed++
		}
		if f.headLinks >= 3 {
			blocks++
		}
		href := attrMatch(f.main, "href").s
		hrefs[sg.resolve(href)] = true
		switch sg.linkKind(href) {
		case linkSection:
			section++
		case linkForeign:
			foreign++
		}
		t := textOf(f.title)
		if boilerplate(t) || sg.genericText(t) {
			boiler++
		}
		scripts.add(t)
		if sg.promoted(g.linked[i]) {
			promo++
		}
		if w := sg.navAncestor(g.linked[i]); w != "" {
			nav++
			if navWhere == "" {
				navWhere = w
			}
		}
		shapes[shape(g.linked[i])]++
	}
	top := 0
	for _, c := range shapes {
		top = max(top, c)
	}
	// Members of one list have like classes (apart from the few that
	// mark a first or featured item); a group of every link of a table's
	// cells mixes titles, authors and actions.
	clsCount := map[string]int{}
	for _, m := range g.linked {
		for _, c := range stableClasses(m) {
			clsCount[c]++
		}
	}
	roles := map[string]int{}
	topRole := 0
	for _, m := range g.linked {
		var common []string
		for _, c := range stableClasses(m) {
			if clsCount[c]*100 >= n*15 {
				common = append(common, c)
			}
		}
		k := strings.Join(common, ".")
		roles[k]++
		topRole = max(topRole, roles[k])
	}
	if g.cls != "" && itemishClass(g.cls) && !titleClass(g.cls) {
		topRole = n // the page names them all items, whatever else their classes say
	}
	avgTitle := float64(titles) / fn
	avgExtra := float64(extra) / fn

	q := 0.3 + 0.7*math.Min(avgTitle, 40)/40
	q *= float64(len(hrefs)) / fn
	q *= 1 + 0.4*float64(dated)/fn
	q *= 1 + 0.3*float64(headed)/fn
	q *= 1 + 0.2*math.Min(avgExtra, 150)/150
	q *= 1 - 0.6*float64(section)/fn
	q *= 1 - 0.15*float64(foreign)/fn // aggregators link elsewhere
	q *= 1 - 0.8*float64(boiler)/fn
	q *= 1 - 0.75*float64(nav)/fn
	q *= 1 - 0.5*float64(promo)/fn
	other := sg.script != scriptNone && scripts.main() != scriptNone && scripts.main() != sg.script
	if other {
		q *= 0.3 // titles in another script than the page's language: a box for other readers
	}
	q *= 0.7 + 0.3*float64(top)/fn
	q *= 1 - 0.5*float64(blocks)/fn
	q *= 0.5 + 0.5*float64(topRole)/fn
	titled := 1 - float64(untitled)/fn
	q *= titled * titled
	g.score = q * math.Log2(1+fn)
	g.quality = q

	why := []string{"titles from their links"} // the count and the place are the proposal's (Page)
	if headed*2 >= n {
		why[0] = "titles from their headings"
	}
	if dated > 0 {
		why = append(why, fmt.Sprintf("%d dated", dated))
	}
	if avgTitle < 12 {
		why = append(why, "short titles")
	}
	if blocks*2 >= n {
		why = append(why, "each holds several headings")
	}
	if nav*2 >= n {
		why = append(why, "inside "+navWhere)
	}
	if other {
		why = append(why, "in another language than the page")
	}
	if promo*2 >= n {
		why = append(why, "in a promotion box")
	}
	if section*3 >= n {
		why = append(why, "links to site sections")
	}
	if foreign*2 >= n {
		why = append(why, "links to other sites")
	}
	if boiler*3 >= n {
		why = append(why, "navigation words")
	}
	if len(hrefs)*10 < n*9 {
		why = append(why, "repeated links")
	}
	g.why = strings.Join(why, ", ")
	return true
}

// resolve is href made absolute against the page (as written on error).
func (sg *suggester) resolve(href string) string {
	u, err := sg.page.Parse(strings.TrimSpace(href))
	if err != nil {
		return href
	}
	u.Fragment = ""
	return u.String()
}

// shape is a member's structure: the tags of its element children.
func shape(m *html.Node) string {
	var b strings.Builder
	for c := m.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			b.WriteString(c.Data)
			b.WriteByte(' ')
		}
	}
	return b.String()
}
