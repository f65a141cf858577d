package extractor

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Suggestion is a select block proposed for a page nobody annotated.
type Suggestion struct {
	Spec  SelectSpec
	Score float64 // higher is better; only comparable within one page
	Items int     // elements the item selector matches
	Why   string  // what the score saw, for people
}

// maxSuggestions is how many suggestions [Suggest] returns at most.
const maxSuggestions = 6

// Suggest finds the repeated structures of a page (groups of sibling
// elements of the same tag, or tag and class, that carry a link and text),
// ranks them, and proposes a select block for each, best first. The page
// is decoded as for extraction (opts.ContentType, BOM, <meta>,
// detection); opts.URL tells same-site links from others. It returns no
// suggestion, and no error, for a page without such a structure.
//
// The score rewards longer link texts (titles), text besides the link
// (descriptions), dates, distinct links, consistent shapes and a count of
// items between 3 and 60; it penalizes what navigation looks like: an
// ancestor header, nav, aside, footer or menu (by tag, or by an id or
// class such as "nav", "menu", "sidebar", "footer", "breadcrumb",
// "pagination"), short link texts, links to site sections ("/contact.html",
// "/news/"), other sites' links, and boilerplate words ("Home", "Privacy",
// "Next").
func Suggest(r io.Reader, opts Options) ([]Suggestion, error) {
	b := newBuilder(opts)
	in, err := b.decoder(bufio.NewReaderSize(r, peekSize))
	if err != nil {
		return nil, fmt.Errorf("read page: %w", err)
	}
	doc, err := html.Parse(in)
	if err != nil {
		return nil, fmt.Errorf("read page: %w", err)
	}
	sg := &suggester{doc: doc, page: b.page, dates: opts}
	sg.collect(doc, 0)
	var out []Suggestion
	seen := map[string]bool{}
	slices.SortStableFunc(sg.groups, func(x, y *group) int {
		switch {
		case x.score > y.score:
			return -1
		case x.score < y.score:
			return 1
		}
		return 0
	})
	for _, g := range sg.groups {
		if g.score <= 0 || len(out) >= maxSuggestions {
			break
		}
		spec, n, ok := sg.spec(g)
		if !ok || seen[spec.Item] {
			continue
		}
		seen[spec.Item] = true
		out = append(out, Suggestion{Spec: spec, Score: math.Round(g.score*100) / 100, Items: n, Why: g.why})
	}
	return out, nil
}

// suggester holds what Suggest works on.
type suggester struct {
	doc    *html.Node
	page   *url.URL
	dates  Options
	groups []*group
}

// group is a candidate: siblings under one parent with the same tag (and
// class, when cls is set).
type group struct {
	parent  *html.Node
	tag     string
	cls     string
	members []*html.Node
	linked  []*html.Node // the members with a link
	main    []*html.Node // each linked member's main link (its longest-text <a href>)
	score   float64
	why     string
}

// minItems is the fewest repeated siblings a structure needs.
const minItems = 3

// collect walks the tree and scores every group of repeated siblings.
func (sg *suggester) collect(n *html.Node, depth int) {
	if depth > maxTreeDepth {
		return
	}
	byKey := map[string][]*html.Node{}
	var keys []string
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || isHidden(c.DataAtom) {
			continue
		}
		add := func(k string) {
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], c)
		}
		add(c.Data)
		for _, cl := range classes(c) {
			if cssIdent(cl) {
				add(c.Data + "." + cl)
			}
		}
	}
	// Tag and class first: when a class covers the same members as the tag
	// alone, the selector with the class is the one people expect.
	slices.SortStableFunc(keys, func(x, y string) int {
		return boolInt(!strings.Contains(x, ".")) - boolInt(!strings.Contains(y, "."))
	})
	seen := map[string]bool{}
	for _, k := range keys {
		ms := byKey[k]
		if len(ms) < minItems {
			continue
		}
		sig := fmt.Sprint(ms) // the same members under another key: keep the first
		if seen[sig] {
			continue
		}
		seen[sig] = true
		tag, cls, _ := strings.Cut(k, ".")
		g := &group{parent: n, tag: tag, cls: cls, members: ms}
		sg.score(g)
		if g.score > 0 {
			sg.groups = append(sg.groups, g)
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			sg.collect(c, depth+1)
		}
	}
}

// score computes a group's features and score (0: not a candidate).
func (sg *suggester) score(g *group) {
	var linkText, extra, dated, section, foreign, boiler, images int
	hrefs := map[string]bool{}
	shapes := map[string]int{}
	for _, m := range g.members {
		a := mainLink(m)
		if a == nil {
			continue
		}
		g.linked = append(g.linked, m)
		g.main = append(g.main, a)
		lt := textOf(a)
		all := textOf(m)
		if pair := pairedSibling(m); pair != nil {
			all += " " + textOf(pair)
		}
		linkText += min(utf8.RuneCountInString(lt), 120)
		extra += min(max(utf8.RuneCountInString(all)-utf8.RuneCountInString(lt), 0), 400)
		href := attrMatch(a, "href").s
		hrefs[href] = true
		switch sg.linkKind(href) {
		case linkSection:
			section++
		case linkForeign:
			foreign++
		}
		if boilerplate(lt) {
			boiler++
		}
		if sg.hasDate(m) {
			dated++
		}
		if findElement(m, atom.Img, "src") != nil {
			images++
		}
		shapes[shape(m)]++
	}
	n := len(g.linked)
	if n < minItems || float64(n) < 0.5*float64(len(g.members)) {
		return
	}
	fn := float64(n)
	avgLink := float64(linkText) / fn
	avgExtra := float64(extra) / fn
	top := 0
	for _, c := range shapes {
		top = max(top, c)
	}
	consistency := float64(top) / fn

	s := math.Log1p(avgLink) * (1 + 0.6*math.Log1p(avgExtra/10))
	s *= float64(n) / float64(len(g.members))
	s *= float64(len(hrefs)) / fn
	s *= 1 + 0.5*float64(dated)/fn
	s *= 1 - 0.6*float64(section)/fn
	s *= 1 - 0.5*float64(foreign)/fn
	s *= 1 - 0.8*float64(boiler)/fn
	s *= 0.6 + 0.4*consistency
	switch {
	case n > 200:
		s *= 0.4
	case n > 60:
		s *= 0.7
	case n == minItems:
		s *= 0.85
	}
	why := []string{fmt.Sprintf("%d items", n), fmt.Sprintf("link text %.0f chars", avgLink), fmt.Sprintf("other text %.0f chars", avgExtra)}
	if avgLink < 12 {
		s *= 0.5
		why = append(why, "short link texts")
	}
	if nav := navAncestor(g.members[0]); nav != "" {
		s *= 0.25
		why = append(why, "inside "+nav)
	}
	if dated > 0 {
		why = append(why, fmt.Sprintf("%d dated", dated))
	}
	if section > 0 {
		why = append(why, fmt.Sprintf("%d section links", section))
	}
	if boiler > 0 {
		why = append(why, fmt.Sprintf("%d boilerplate", boiler))
	}
	_ = images
	g.score = s
	g.why = strings.Join(why, ", ")
}

// mainLink is a member's link with the longest text (the first on a tie).
func mainLink(m *html.Node) *html.Node {
	var best *html.Node
	bestLen := -1
	walkElements(m, func(n *html.Node) {
		if n.DataAtom != atom.A || !usableHref(attrMatch(n, "href")) {
			return
		}
		if l := utf8.RuneCountInString(textOf(n)); l > bestLen {
			best, bestLen = n, l
		}
	})
	return best
}

func usableHref(m match) bool {
	h := strings.TrimSpace(m.s)
	return m.found() && h != "" && !strings.HasPrefix(h, "#") && !hasPrefixFold([]byte(h), "javascript:") && !hasPrefixFold([]byte(h), "mailto:")
}

// pairedSibling is the <dd> after a <dt> (or the <dt> before a <dd>): the
// other half of a definition-list item.
func pairedSibling(m *html.Node) *html.Node {
	switch m.DataAtom {
	case atom.Dt:
		return nextElement(m, atom.Dd, true)
	case atom.Dd:
		return nextElement(m, atom.Dt, false)
	}
	return nil
}

// nextElement returns the next (or previous) element sibling if it is a.
func nextElement(m *html.Node, a atom.Atom, forward bool) *html.Node {
	for c := step(m, forward); c != nil; c = step(c, forward) {
		if c.Type == html.ElementNode {
			if c.DataAtom == a {
				return c
			}
			return nil
		}
	}
	return nil
}

func step(n *html.Node, forward bool) *html.Node {
	if forward {
		return n.NextSibling
	}
	return n.PrevSibling
}

type linkKind int

const (
	linkArticle linkKind = iota
	linkSection
	linkForeign
)

// linkKind tells an article's link from a site section's or another site's.
func (sg *suggester) linkKind(href string) linkKind {
	u, err := sg.page.Parse(strings.TrimSpace(href))
	if err != nil {
		return linkSection
	}
	if !strings.EqualFold(u.Host, sg.page.Host) {
		return linkForeign
	}
	if u.RawQuery != "" || strings.ContainsAny(u.Path, "0123456789") {
		return linkArticle
	}
	segs := strings.FieldsFunc(u.Path, func(r rune) bool { return r == '/' })
	if len(segs) == 0 {
		return linkSection
	}
	last := segs[len(segs)-1]
	if len(segs) == 1 && (strings.HasSuffix(u.Path, "/") || len(last) < 16) {
		return linkSection
	}
	if len(segs) <= 2 && len(last) < 12 {
		return linkSection
	}
	return linkArticle
}

// boilerplateWords are link texts of navigation, not of items.
var boilerplateWords = map[string]bool{
	"home": true, "homepage": true, "contact": true, "contacts": true, "about": true, "about us": true,
	"login": true, "log in": true, "sign in": true, "register": true, "privacy": true, "privacy policy": true,
	"terms": true, "imprint": true, "impressum": true, "datenschutz": true, "sitemap": true, "site map": true,
	"next": true, "previous": true, "prev": true, "more": true, "read more": true, "back": true, "top": true,
	"startseite": true, "kontakt": true, "accueil": true, "mentions légales": true, "plan du site": true,
	"contatti": true, "note legali": true, "inicio": true, "contacto": true, "rss": true, "feeds": true,
}

func boilerplate(s string) bool {
	s = strings.ToLower(strings.Trim(s, " »«›‹>|-·"))
	if boilerplateWords[s] {
		return true
	}
	_, err := strconv.Atoi(s) // page numbers
	return err == nil
}

// navTokens are id and class words of navigation and page furniture.
var navTokens = map[string]bool{
	"nav": true, "navbar": true, "navi": true, "navigation": true, "menu": true, "menubar": true, "submenu": true,
	"header": true, "masthead": true, "banner": true, "footer": true, "foot": true, "sidebar": true, "aside": true,
	"breadcrumb": true, "breadcrumbs": true, "pagination": true, "pager": true, "pagenav": true, "toolbar": true,
	"topbar": true, "widget": true, "social": true, "share": true, "copyright": true, "legal": true, "skip": true,
	"tabs": true, "tagcloud": true,
}

// navAncestor names the first ancestor (or the element itself) that looks
// like navigation or page furniture, "" when none does.
func navAncestor(n *html.Node) string {
	for p := n; p != nil && p.Type == html.ElementNode; p = p.Parent {
		switch p.DataAtom {
		case atom.Header, atom.Nav, atom.Aside, atom.Footer, atom.Menu:
			return "<" + p.Data + ">"
		}
		for _, a := range p.Attr {
			if a.Key != "id" && a.Key != "class" && a.Key != "role" {
				continue
			}
			for _, w := range strings.FieldsFunc(strings.ToLower(a.Val), func(r rune) bool {
				return r == ' ' || r == '-' || r == '_' || r == '\t' || r == '\n'
			}) {
				if navTokens[w] || w == "navigation" || w == "contentinfo" {
					return fmt.Sprintf("<%s %s=%q>", p.Data, a.Key, a.Val)
				}
			}
		}
	}
	return ""
}

// hasDate reports whether a member shows a date: a <time>, or a short
// element whose text reads as one.
func (sg *suggester) hasDate(m *html.Node) bool {
	return sg.dateSelector([]*html.Node{m}) != ""
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

// spec builds the select block of a group and checks its item selector
// matches exactly the group's items.
func (sg *suggester) spec(g *group) (SelectSpec, int, bool) {
	want := g.members
	has := ""
	if len(g.linked) < len(g.members) {
		want, has = g.linked, ":has(a[href])"
	}
	item := sg.itemSelector(g, has, want)
	if item == "" {
		return SelectSpec{}, 0, false
	}
	spec := SelectSpec{Item: item}
	title, link := sg.titleSelectors(g)
	spec.Title, spec.Link = title, link
	spec.Description = sg.descriptionSelector(g)
	spec.Date = sg.dateSelector(g.linked)
	if spec.Date == spec.Description {
		spec.Date = ""
	}
	if g.tag == "dd" && spec.Date == "" {
		if prev := nextElement(g.linked[0], atom.Dt, false); prev != nil && sg.readsAsDate(textOf(prev)) {
			spec.Date = "xpath:preceding-sibling::dt[1]"
		}
	}
	if imgs := countIf(g.linked, func(m *html.Node) bool { return findElement(m, atom.Img, "src") != nil }); imgs*2 >= len(g.linked) {
		spec.Image = "img @src"
	}
	return spec, len(want), true
}

// itemSelector returns the simplest CSS selector that matches exactly want.
func (sg *suggester) itemSelector(g *group, has string, want []*html.Node) string {
	base := g.tag
	if g.cls != "" {
		base += "." + g.cls
	}
	var cands []string
	if g.cls != "" {
		cands = append(cands, base+has)
	}
	parent := elementSelector(g.parent)
	cands = append(cands, parent+" > "+base+has)
	for p := g.parent.Parent; p != nil && p.Type == html.ElementNode; p = p.Parent {
		if s := elementSelector(p); strings.ContainsAny(s, "#.") {
			cands = append(cands, s+" "+base+has, s+" "+parent+" > "+base+has)
			break
		}
	}
	cands = append(cands, pathSelector(g.parent)+" > "+base+has)
	for _, c := range cands {
		sel, err := cascadia.ParseGroup(c)
		if err != nil {
			continue
		}
		if slices.Equal(cascadia.QueryAll(sg.doc, sel), want) {
			return c
		}
	}
	return ""
}

// elementSelector is "tag#id", "tag.class" or "tag" for an element.
func elementSelector(n *html.Node) string {
	if id := attrMatch(n, "id").s; id != "" && cssIdent(id) {
		return "#" + id
	}
	for _, c := range classes(n) {
		if cssIdent(c) {
			return n.Data + "." + c
		}
	}
	return n.Data
}

// pathSelector is the child path from <html> (or the nearest ancestor with
// an id) down to n, with :nth-of-type where a tag repeats.
func pathSelector(n *html.Node) string {
	var parts []string
	for p := n; p != nil && p.Type == html.ElementNode; p = p.Parent {
		if id := attrMatch(p, "id").s; id != "" && cssIdent(id) {
			parts = append(parts, "#"+id)
			break
		}
		part := p.Data
		same, k := 0, 0
		for c := firstSibling(p); c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.Data == p.Data {
				same++
				if c == p {
					k = same
				}
			}
		}
		if same > 1 {
			part += ":nth-of-type(" + strconv.Itoa(k) + ")"
		}
		parts = append(parts, part)
	}
	slices.Reverse(parts)
	return strings.Join(parts, " > ")
}

// firstSibling is the first child of n's parent (n itself without one).
func firstSibling(n *html.Node) *html.Node {
	if n.Parent == nil {
		return n
	}
	return n.Parent.FirstChild
}

// titleSelectors finds, relative to the items, a selector whose first
// match is the main link in most items: the title and the link.
func (sg *suggester) titleSelectors(g *group) (title, link string) {
	a := g.main[0]
	var cands []string
	if p := a.Parent; p != nil && isHeading(p.DataAtom) && p != g.linked[0] {
		cands = append(cands, p.Data+"|"+p.Data+" a")
	}
	cands = append(cands, "a")
	if cls := classes(a); len(cls) > 0 && cssIdent(cls[0]) {
		cands = append(cands, "a."+cls[0])
	}
	if p := a.Parent; p != nil && p != g.linked[0] {
		cands = append(cands, p.Data+" a")
		if s := elementSelector(p); s != p.Data && !strings.HasPrefix(s, "#") {
			cands = append(cands, s+" a")
		}
		if p.DataAtom == atom.Td {
			cands = append(cands, "td:nth-child("+strconv.Itoa(childIndex(p))+") a")
		}
	}
	for _, c := range cands {
		t, l, ok := strings.Cut(c, "|")
		if !ok {
			l = t
		}
		sel, err := cascadia.ParseGroup(l)
		if err != nil {
			continue
		}
		hits := 0
		for i, m := range g.linked {
			var first *html.Node
			queryFirst(m, sel, func(n *html.Node) bool {
				if usableHref(attrMatch(n, "href")) {
					first = n
					return false
				}
				return true
			})
			if first == g.main[i] {
				hits++
			}
		}
		if hits*5 >= len(g.linked)*4 {
			return t, l + " @href"
		}
	}
	return "", ""
}

func isHeading(a atom.Atom) bool {
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return false
}

// childIndex is n's 1-based position among its parent's element children.
func childIndex(n *html.Node) int {
	k := 0
	for c := n.Parent.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			k++
		}
		if c == n {
			break
		}
	}
	return k
}

// descriptionSelector finds the element, relative to the items, with the
// most text besides the title in most items (the <dd> of a <dt>).
func (sg *suggester) descriptionSelector(g *group) string {
	if g.tag == "dt" && countIf(g.linked, func(m *html.Node) bool { return nextElement(m, atom.Dd, true) != nil })*2 >= len(g.linked) {
		return "xpath:following-sibling::dd[1]"
	}
	type stat struct {
		hits, chars int
	}
	stats := map[string]*stat{}
	var order []string
	for i, m := range g.linked {
		a := g.main[i]
		seen := map[string]bool{}
		walkElements(m, func(e *html.Node) {
			if e == m || isAncestor(e, a) || isAncestor(a, e) || e.DataAtom == atom.A {
				return
			}
			t := textOf(e)
			if utf8.RuneCountInString(t) < 20 {
				return
			}
			for _, k := range descriptors(e) {
				if seen[k] {
					continue
				}
				seen[k] = true
				st := stats[k]
				if st == nil {
					st = &stat{}
					stats[k] = st
					order = append(order, k)
				}
				st.hits++
				st.chars += utf8.RuneCountInString(t)
			}
		})
	}
	best, bestChars := "", 0
	for _, k := range order {
		st := stats[k]
		if st.hits*2 < len(g.linked) {
			continue
		}
		// The selector's first match must be the element counted.
		sel, err := cascadia.ParseGroup(k)
		if err != nil {
			continue
		}
		ok := 0
		for i, m := range g.linked {
			f := cascadia.Query(m, sel)
			if f != nil && !isAncestor(f, g.main[i]) && utf8.RuneCountInString(textOf(f)) >= 20 {
				ok++
			}
		}
		if ok*2 < len(g.linked) {
			continue
		}
		if c := st.chars / st.hits; c > bestChars {
			best, bestChars = k, c
		}
	}
	return best
}

// descriptors are the relative selectors that may name an element: its
// tag and class, its tag, and for table cells its column.
func descriptors(e *html.Node) []string {
	var out []string
	if cls := classes(e); len(cls) > 0 && cssIdent(cls[0]) {
		out = append(out, e.Data+"."+cls[0])
	}
	if e.DataAtom == atom.Td || e.DataAtom == atom.Th {
		out = append(out, e.Data+":nth-child("+strconv.Itoa(childIndex(e))+")")
	}
	return append(out, e.Data)
}

// dateSelector finds, relative to the items, a <time> or a short element
// whose text reads as a date in at least half of them.
func (sg *suggester) dateSelector(ms []*html.Node) string {
	times := countIf(ms, func(m *html.Node) bool { return findElement(m, atom.Time, "datetime") != nil })
	if times*2 >= len(ms) && times > 0 {
		return "time @datetime"
	}
	counts := map[string]int{}
	var order []string
	for _, m := range ms {
		seen := map[string]bool{}
		walkElements(m, func(e *html.Node) {
			if e == m || e.DataAtom == atom.A {
				return
			}
			t := textOf(e)
			if utf8.RuneCountInString(t) > 40 || !sg.readsAsDate(t) {
				return
			}
			for _, k := range descriptors(e) {
				if !seen[k] {
					seen[k] = true
					if counts[k] == 0 {
						order = append(order, k)
					}
					counts[k]++
				}
			}
		})
	}
	for _, k := range order {
		if counts[k]*2 >= len(ms) && counts[k] > 0 {
			sel, err := cascadia.ParseGroup(k)
			if err != nil {
				continue
			}
			ok, raw := 0, 0
			for _, m := range ms {
				if f := cascadia.Query(m, sel); f != nil && sg.readsAsDate(textOf(f)) {
					ok++
					if _, plain := sg.dates.Dates.Parse(textOf(f)); plain {
						raw++
					}
				}
			}
			if ok*2 >= len(ms) {
				if raw*2 < ok {
					// Dates in brackets or after a word ("(21.11.2026)"): the
					// selector leaves the brackets out.
					return "xpath:translate(normalize-space(" + descriptorXPath(k) + "), '()[]', '')"
				}
				return k
			}
		}
	}
	return ""
}

// readsAsDate reports whether a short text is a date the resource's rules
// read (brackets and a leading "le", "am", "on"... aside).
func (sg *suggester) readsAsDate(t string) bool {
	t = strings.Trim(t, " ()[]|-–,")
	if t == "" || !strings.ContainsAny(t, "0123456789") {
		return false
	}
	if _, ok := sg.dates.Dates.Parse(t); ok {
		return true
	}
	if _, rest, ok := strings.Cut(t, " "); ok {
		_, ok := sg.dates.Dates.Parse(rest)
		return ok
	}
	return false
}

func countIf(ms []*html.Node, f func(*html.Node) bool) int {
	n := 0
	for _, m := range ms {
		if f(m) {
			n++
		}
	}
	return n
}

// isAncestor reports whether a is n or an ancestor of n.
func isAncestor(a, n *html.Node) bool {
	for p := n; p != nil; p = p.Parent {
		if p == a {
			return true
		}
	}
	return false
}

// walkElements calls f on n and every element under it, in document order,
// skipping hidden elements.
func walkElements(n *html.Node, f func(*html.Node)) {
	var walk func(*html.Node, int)
	walk = func(n *html.Node, depth int) {
		if depth > maxTreeDepth {
			return
		}
		if n.Type == html.ElementNode {
			if isHidden(n.DataAtom) {
				return
			}
			f(n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
}

// textOf is an element's text by the value rules.
func textOf(n *html.Node) string {
	v := value{limit: 4096}
	nodeText(&v, n, 0)
	return v.String()
}

// classes are an element's class names.
func classes(n *html.Node) []string {
	return strings.Fields(attrMatch(n, "class").s)
}

// cssIdent reports whether s can be written in a selector unescaped.
func cssIdent(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' || s[0] == '-' && (len(s) == 1 || s[1] >= '0' && s[1] <= '9') {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// descriptorXPath is the XPath of a descriptor's first match in an item.
func descriptorXPath(k string) string {
	if tag, n, ok := strings.Cut(k, ":nth-child("); ok {
		return "./" + tag + "[" + strings.TrimSuffix(n, ")") + "]"
	}
	if tag, cls, ok := strings.Cut(k, "."); ok {
		return "(.//" + tag + "[contains(concat(' ', normalize-space(@class), ' '), ' " + cls + " ')])[1]"
	}
	return "(.//" + k + ")[1]"
}
