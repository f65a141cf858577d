package suggest

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/publicsuffix"

	"github.com/dynamo-rss/dynamo/extractor"
)

func usableHref(m match) bool {
	h := strings.TrimSpace(m.s)
	return m.found() && h != "" && !strings.HasPrefix(h, "#") && !otherScheme(h)
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

// sameSite reports whether two hosts are of one site: equal, or under
// one registrable domain (news.example.com and www.example.com).
func sameSite(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	da, err := publicsuffix.EffectiveTLDPlusOne(strings.ToLower(a))
	if err != nil {
		return false
	}
	db, err := publicsuffix.EffectiveTLDPlusOne(strings.ToLower(b))
	return err == nil && da == db
}

// linkKind tells an article's link from a site section's or another site's.
func (sg *suggester) linkKind(href string) linkKind {
	u, err := sg.page.Parse(strings.TrimSpace(href))
	if err != nil {
		return linkSection
	}
	if !sameSite(u.Hostname(), sg.page.Hostname()) || u.Port() != sg.page.Port() {
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
	// Pagers and view switches.
	"next page": true, "previous page": true, "older": true, "newer": true, "older posts": true, "newer posts": true,
	"older entries": true, "newer entries": true, "first": true, "last": true, "show all": true, "view all": true,
	"weiter": true, "zurück": true, "vorige": true, "nächste": true, "suivant": true, "précédent": true,
	"siguiente": true, "anterior": true, "successivo": true, "precedente": true,
}

// viewWords make a short link text a view switch ("Gallery", "List
// view", "Galerieansicht", "Vue mosaïque"), not an item.
var viewWords = []string{"gallery", "galerie", "galería", "galleria", "view", "ansicht", "vue", "vista"}

// viewSwitch reports whether a lower-case link text of at most three
// words names a view of the page.
func viewSwitch(s string) bool {
	words := strings.Fields(s)
	if len(words) > 3 {
		return false
	}
	for _, w := range words {
		for _, v := range viewWords {
			if w == v || strings.HasSuffix(w, v) && len(w) > len(v)+3 {
				return true
			}
		}
	}
	return false
}

func boilerplate(s string) bool {
	raw := strings.TrimSpace(s)
	s = strings.ToLower(strings.Trim(s, " »«›‹<>|-·←→…"))
	if s == "" {
		return raw != "" // arrows alone: a pager's
	}
	if boilerplateWords[s] || viewSwitch(s) {
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
func (sg *suggester) navAncestor(n *html.Node) string {
	for p := n; p != nil && p.Type == html.ElementNode; p = p.Parent {
		switch p.DataAtom {
		case atom.Header, atom.Nav, atom.Aside, atom.Footer, atom.Menu:
			return "<" + p.Data + ">"
		}
		if sg.holdsContent(p) {
			continue // a page's wrapper whose class happens to say "nav"
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

// promotedWords are id and class words of a promotion box beside a
// page's main list (not "carousel" or "slider": a page's main list may
// scroll sideways).
var promotedWords = []string{"featured", "promo", "promoted", "promotion", "sponsored", "sponsor", "spotlight"}

// promoted reports whether an element is in a promotion box: an ancestor whose id or class has one of promotedWords (words
// split at '-', '_' and lower-to-upper case changes).
func (sg *suggester) promoted(n *html.Node) bool {
	for p := n; p != nil && p.Type == html.ElementNode; p = p.Parent {
		if v, ok := sg.promo[p]; ok {
			if v {
				return true
			}
			continue
		}
		v := false
		for _, a := range p.Attr {
			if a.Key == "id" || a.Key == "class" {
				for _, w := range identWords(a.Val) {
					v = v || slices.Contains(promotedWords, w)
				}
			}
		}
		sg.promo[p] = v
		if v {
			return true
		}
	}
	return false
}

// identWords splits an id or class list into lower-case words: at
// spaces, '-', '_' and where a lower-case letter meets an upper-case one
// ("featuredContents": featured, contents).
func identWords(s string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, strings.ToLower(b.String()))
			b.Reset()
		}
	}
	prevLower := false
	for _, r := range s {
		switch {
		case r == ' ' || r == '-' || r == '_' || r == '\t' || r == '\n':
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		b.WriteRune(r)
		prevLower = unicode.IsLower(r)
	}
	flush()
	return out
}

// holdsContent reports whether an element holds the page's content (a
// <main>, an <h1>, several <article>s), so that it is no navigation
// whatever its class says (memoized).
func (sg *suggester) holdsContent(p *html.Node) bool {
	if v, ok := sg.content[p]; ok {
		return v
	}
	articles := 0
	v := false
	walkElements(p, func(e *html.Node) {
		switch e.DataAtom {
		case atom.Main, atom.H1:
			v = true
		case atom.Article:
			articles++
		}
	})
	v = v || articles >= 3
	sg.content[p] = v
	return v
}

// hasDate reports whether an item shows a date: a <time datetime>, or a
// short element (no link) whose text reads as one.
func (sg *suggester) hasDate(scope []*html.Node) bool {
	found := false
	for _, s := range scope {
		walkElements(s, func(e *html.Node) {
			if !found && ((e.DataAtom == atom.Time || e.DataAtom == 0) && attrMatch(e, "datetime").found() || sg.dateElement(e)) {
				found = true
			}
		})
	}
	return found
}

// timeOfDay is a time alone, as a ticker shows it: "23:53", "(9:05
// pm)", "18:00 Uhr".
var timeOfDay = regexp.MustCompile(`(?i)^[(\[]?\d{1,2}[:.]\d{2}(\s?([ap]\.?m\.?|uhr|h))?[)\]]?$`)

// dateElement reports whether e's text is short and reads as a date or a
// time of day (memoized: an element is looked at once per page).
func (sg *suggester) dateElement(e *html.Node) bool {
	if v, ok := sg.dated[e]; ok {
		return v
	}
	v := false
	if e.DataAtom != atom.A {
		if t, ok := shortText(e, 40); ok {
			v = sg.readsAsDate(t) || timeOfDay.MatchString(t)
		}
	}
	sg.dated[e] = v
	return v
}

// shortText is e's text when it has at most limit characters (false
// when it has more: the walk stops there).
func shortText(e *html.Node, limit int) (string, bool) {
	var raw strings.Builder
	over := false
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		if over || depth > extractor.MaxTreeDepth {
			return
		}
		switch n.Type {
		case html.TextNode:
			raw.WriteString(n.Data)
			raw.WriteByte(' ')
			if len(strings.TrimSpace(raw.String())) > 4*limit {
				over = true
			}
			return
		case html.ElementNode:
			if extractor.IsHidden(n.DataAtom) {
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth+1)
		}
	}
	walk(e, 0)
	if over {
		return "", false
	}
	t := extractor.CleanText(raw.String())
	return t, utf8.RuneCountInString(t) <= limit
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
	times := countIf(ms, func(m *html.Node) bool { return extractor.FindElement(m, atom.Time, "datetime") != nil })
	if times*2 >= len(ms) && times > 0 {
		return "time @datetime"
	}
	// Custom elements that carry a datetime: <relative-time>, <local-time>.
	tags := map[string]int{}
	for _, m := range ms {
		seen := map[string]bool{}
		walkElements(m, func(e *html.Node) {
			if d := attrMatch(e, "datetime"); e.DataAtom == 0 && d.found() && strings.TrimSpace(d.s) != "" && !seen[e.Data] && cssIdent(e.Data) {
				seen[e.Data] = true
				tags[e.Data]++
			}
		})
	}
	bestTag := ""
	for t, n := range tags {
		if n*2 >= len(ms) && (bestTag == "" || n > tags[bestTag] || n == tags[bestTag] && t < bestTag) {
			bestTag = t
		}
	}
	if bestTag != "" {
		return bestTag + " @datetime"
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
		if depth > extractor.MaxTreeDepth {
			return
		}
		if n.Type == html.ElementNode {
			if extractor.IsHidden(n.DataAtom) {
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
	return extractor.Text(n)
}

// match is an attribute's value, when the element has the attribute.
type match struct {
	s   string
	str bool
}

func (m match) found() bool { return m.str }

// attrMatch is n's attribute name (no namespace).
func attrMatch(n *html.Node, name string) match {
	if n == nil || n.Type != html.ElementNode {
		return match{}
	}
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == name {
			return match{s: a.Val, str: true}
		}
	}
	return match{}
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
