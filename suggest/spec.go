package suggest

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/extractor"
)

// spec writes the select block of a list: the item selector (the stable
// kind a person writes), then title, link, description, date and image
// selectors relative to the item, each checked on the page.
func (sg *suggester) spec(g *group) (extractor.SelectSpec, bool) {
	item := sg.itemSelector(g)
	if item == "" {
		return extractor.SelectSpec{}, false
	}
	spec := extractor.SelectSpec{Item: item}
	if _, ok := sg.runs[g.linked[0]]; ok {
		// A heading and its run of siblings: the heading is the title,
		// the link and the day are beside it.
		spec.Title = "xpath:."
		if g.facts[0].main.Parent == nil || !isAncestor(g.linked[0], g.facts[0].main) {
			spec.Link = sg.runLink(g)
			if spec.Link == "" {
				return extractor.SelectSpec{}, false
			}
		} else {
			spec.Link = "a @href"
		}
		spec.Date = sg.runDate(g)
		return spec, true
	}
	spec.Title, spec.Link = sg.titleLink(g)
	if spec.Title == "" {
		return extractor.SelectSpec{}, false // the whole card's text is never a title
	}
	if t := spec.Title; !strings.HasPrefix(t, "xpath:") && !strings.Contains(t, ",") && !sg.matchesExactly(item, g.linked) {
		// Rows that are no items (a pager's, a second row per item):
		// the items are those that have a title.
		if s := strings.TrimSuffix(item, ":has(a[href])") + ":has(" + t + ")"; sg.matchesExactly(s, g.linked) {
			spec.Item = s
		}
	}
	spec.Description = sg.descriptionSelector(g)
	spec.Date = sg.dateSelector(g.linked)
	if spec.Date == spec.Description || spec.Date == spec.Title {
		spec.Date = ""
	}
	if spec.Date == "" && g.linked[0].DataAtom == atom.Dd {
		if prev := nextElement(g.linked[0], atom.Dt, false); prev != nil && sg.readsAsDate(textOf(prev)) {
			spec.Date = "xpath:preceding-sibling::dt[1]"
		}
	}
	if spec.Date == "" && g.linked[0].DataAtom == atom.Dt && !isAncestor(g.linked[0], g.facts[0].title) {
		// A changelog's <dt> date with its <dd> entry: the item's own text,
		// which the title does not come from, is the date.
		if countIf(g.linked, func(m *html.Node) bool { return sg.readsAsDate(textOf(m)) })*2 >= len(g.linked) {
			spec.Date = "xpath:."
		}
	}
	if imgs := countIf(g.linked, func(m *html.Node) bool { return picture(extractor.FindElement(m, atom.Img, "src")) }); imgs*2 >= len(g.linked) {
		spec.Image = "img @src"
	}
	return spec, true
}

// matchesExactly reports whether a CSS selector matches exactly ms.
func (sg *suggester) matchesExactly(src string, ms []*html.Node) bool {
	got, err := sg.queryAll(src)
	return err == nil && slices.Equal(got, ms)
}

// queryAll returns the elements a CSS selector matches in the page, in
// page order (memoized: the blocks of a page's lists try many of the
// same selectors).
func (sg *suggester) queryAll(src string) ([]*html.Node, error) {
	if q, ok := sg.queried[src]; ok {
		return q.nodes, q.err
	}
	var q queried
	sel, err := cascadia.ParseGroup(src)
	if err != nil {
		q.err = err
	} else {
		q.nodes = cascadia.QueryAll(sg.doc, sel)
	}
	sg.queried[src] = q
	return q.nodes, q.err
}

// queried is what a selector matched in the page.
type queried struct {
	nodes []*html.Node
	err   error
}

// picture reports whether an <img> is a picture, not a decoration: a
// bullet, a spacer, an icon (small by its width or height, or by its
// file's name).
func picture(img *html.Node) bool {
	if img == nil {
		return false
	}
	for _, d := range []string{"width", "height"} {
		if v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(attrMatch(img, d).s), "px")); err == nil && v < 48 {
			return false
		}
	}
	src := strings.ToLower(attrMatch(img, "src").s)
	for _, w := range []string{"spacer", "pixel", "blank", "trans", "1x1", "bullet", "dot.", "icon", "arrow"} {
		if strings.Contains(src, w) {
			return false
		}
	}
	return true
}

// itemSelector returns a CSS selector that matches exactly the group's
// linked members: a class they share, their parents' class or id, an
// ancestor's; positions only as a last resort.
func (sg *suggester) itemSelector(g *group) string {
	want := g.linked
	first := want[0]
	tag := first.Data
	base := tag
	if g.cls != "" {
		base += "." + g.cls
	}
	var cands []string
	add := func(s string) {
		if s != "" && !slices.Contains(cands, s) {
			cands = append(cands, s)
		}
	}
	// A class every item has and the list's parents or an ancestor.
	var itemCls []string
	for _, c := range classes(first) {
		if !stableClass(c) {
			continue
		}
		all := true
		for _, m := range want[1:] {
			if !slices.Contains(classes(m), c) {
				all = false
				break
			}
		}
		if all {
			itemCls = append(itemCls, c)
		}
	}
	slices.SortStableFunc(itemCls, func(x, y string) int { return boolInt(!itemishClass(x)) - boolInt(!itemishClass(y)) })
	bases := []string{base}
	for _, c := range itemCls {
		if b := tag + "." + c; b != base {
			bases = append(bases, b)
		}
	}
	parents := map[*html.Node]bool{}
	for _, m := range want {
		parents[m.Parent] = true
	}
	pSel := sharedSelector(keys(parents))
	anc := commonAncestor(want)
	var aSels []string
	named := 0
	for p := anc; p != nil && p.Type == html.ElementNode && named < 3; p = p.Parent {
		if s := stableSelector(p); s != "" {
			aSels = append(aSels, s)
			named++
			// Layout tables name themselves by their attributes only:
			// the others too (the list's cellpadding, not the page's
			// width).
			for _, a := range attrSelectors(p) {
				if a != s {
					aSels = append(aSels, a)
				}
			}
		}
	}
	for _, b := range bases {
		if strings.Contains(b, ".") {
			add(b)
		}
		if pSel != "" {
			add(pSel + " > " + b)
		}
		for _, aSel := range aSels {
			add(aSel + " " + b)
			add(aSel + " " + first.Parent.Data + " > " + b)
			if pSel != "" {
				add(aSel + " " + pSel + " > " + b)
			}
		}
		add(b)
	}
	// Parents without a name under named ones: one <ul> a day, each in
	// a <div class="day">; when pointing only (Page's ranking is tuned
	// without such lists, which would outrank some of its right ones).
	gparents := map[*html.Node]bool{}
	for p := range parents {
		if p.Parent != nil && p.Parent.Type == html.ElementNode {
			gparents[p.Parent] = true
		}
	}
	if gSel := sharedSelector(keys(gparents)); sg.pointing && len(parents) > 1 && len(gparents) == len(parents) && gSel != "" {
		for _, b := range bases {
			add(gSel + " > " + first.Parent.Data + " > " + b)
		}
	}
	if len(parents) == 1 {
		add(pathSelector(first.Parent) + " > " + base)
	}
	filter := ":has(a[href])"
	if len(g.linked) < len(g.members) {
		for _, m := range g.members {
			if sg.factsOf(m).mailto {
				filter = `:has(a[href]:not([href^="mailto:"]):not([href^="tel:"]):not([href^="javascript:"]):not([href^="#"]))`
				break
			}
		}
	}
	// The first candidate that matches exactly the items, else the one
	// that matches them best: nearly all of them, and few others (a
	// teaser more in another box is an item too).
	inWant := make(map[*html.Node]bool, len(want))
	for _, m := range want {
		inWant[m] = true
	}
	best, bestJ, position := "", 0.0, ""
	for _, c := range cands {
		for _, s := range []string{c, c + filter} {
			got, err := sg.queryAll(s)
			if err != nil {
				continue
			}
			if slices.Equal(got, want) {
				if strings.Contains(s, "nth-of-type") {
					position = s // a position: only when nothing else fits
					continue
				}
				return s
			}
			inter := 0
			for _, n := range got {
				if inWant[n] {
					inter++
				}
			}
			j := float64(inter) / float64(len(got)+len(want)-inter)
			if inter*10 >= len(want)*9 && len(got)*4 <= len(want)*5 && j > bestJ && strings.ContainsAny(s, ".#[") && !strings.Contains(s, "nth-of-type") {
				best, bestJ = s, j
			}
		}
	}
	if best == "" {
		return position
	}
	return best
}

func keys(m map[*html.Node]bool) []*html.Node {
	out := make([]*html.Node, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// sharedSelector is a selector that names every one of ns: their one id,
// or a tag and stable class they all have ("" when none).
func sharedSelector(ns []*html.Node) string {
	if len(ns) == 1 {
		return stableSelector(ns[0])
	}
	tag := ns[0].Data
	for _, n := range ns {
		if n.Data != tag {
			return ""
		}
	}
	for _, c := range classes(ns[0]) {
		if !stableClass(c) {
			continue
		}
		all := true
		for _, n := range ns[1:] {
			if !slices.Contains(classes(n), c) {
				all = false
				break
			}
		}
		if all {
			return tag + "." + c
		}
	}
	return ""
}

// attrSelectors are the selectors of n by the attributes that name an
// element on pages without ids or classes, one per attribute.
func attrSelectors(n *html.Node) []string {
	if n.DataAtom == atom.Body || n.DataAtom == atom.Html || attrMatch(n, "id").s != "" || attrMatch(n, "class").s != "" {
		return nil
	}
	var out []string
	for _, name := range namingAttrs {
		if v := attrMatch(n, name); v.found() && v.s != "" && !strings.ContainsAny(v.s, "\"\\\n") && len(v.s) < 40 {
			out = append(out, n.Data+"["+name+"="+strconv.Quote(v.s)+"]")
		}
	}
	return out
}

// namingAttrs are the attributes that may name an element without an id
// or a class.
var namingAttrs = []string{"role", "aria-label", "summary", "name", "width", "align", "bgcolor", "cellpadding"}

// stableSelector is "#id" or "tag.class" for an element with a stable id
// or class, "" for one without.
func stableSelector(n *html.Node) string {
	if n.DataAtom == atom.Body || n.DataAtom == atom.Html {
		return ""
	}
	if id := attrMatch(n, "id").s; id != "" && stableClass(id) {
		return "#" + id
	}
	for _, c := range classes(n) {
		if stableClass(c) {
			return n.Data + "." + c
		}
	}
	// Pages without ids or classes: an attribute that names the element
	// (a role, a label, a table's summary or width).
	for _, name := range namingAttrs {
		if v := attrMatch(n, name); v.found() && v.s != "" && !strings.ContainsAny(v.s, "\"\\\n") && len(v.s) < 40 {
			return n.Data + "[" + name + "=" + strconv.Quote(v.s) + "]"
		}
	}
	// A data attribute whose value is a name ("THE LATEST", "top-news"),
	// not a number or a tracking code.
	for _, a := range n.Attr {
		if strings.HasPrefix(a.Key, "data-") && cssIdent(a.Key) && dataName(a.Val) {
			return n.Data + "[" + a.Key + "=" + strconv.Quote(a.Val) + "]"
		}
	}
	return ""
}

// dataName reports whether a data attribute's value reads as a name:
// letters, spaces, '-' and '_', 3 to 39 of them, no digits.
func dataName(v string) bool {
	if len(v) < 3 || len(v) >= 40 || strings.TrimSpace(v) != v {
		return false
	}
	for _, r := range v {
		if !unicode.IsLetter(r) && r != ' ' && r != '-' && r != '_' {
			return false
		}
	}
	return true
}

// commonAncestor is the deepest element that holds all of ns.
func commonAncestor(ns []*html.Node) *html.Node {
	a := ns[0].Parent
	for _, n := range ns[1:] {
		for a != nil && !isAncestor(a, n) {
			a = a.Parent
		}
	}
	return a
}

// pathSelector is the child path from <html> (or the nearest ancestor with
// an id) down to n, with :nth-of-type where a tag repeats: the last resort.
func pathSelector(n *html.Node) string {
	var parts []string
	for p := n; p != nil && p.Type == html.ElementNode; p = p.Parent {
		if id := attrMatch(p, "id").s; id != "" && cssIdent(id) {
			parts = append(parts, "#"+id)
			break
		}
		part := p.Data
		same, k := 0, 0
		for c := p.Parent.FirstChild; p.Parent != nil && c != nil; c = c.NextSibling {
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
		if p.Parent == nil {
			break
		}
	}
	slices.Reverse(parts)
	return strings.Join(parts, " > ")
}

// titleLink finds the title and link selectors: relative to the item, a
// selector whose first match is the item's title element (its link's
// href) in most items.
func (sg *suggester) titleLink(g *group) (title, link string) {
	titles := make([]*html.Node, len(g.linked))
	mains := make([]*html.Node, len(g.linked))
	for i, f := range g.facts {
		titles[i], mains[i] = f.title, f.main
	}
	var tc []string
	add := func(s string) {
		if s != "" && !slices.Contains(tc, s) {
			tc = append(tc, s)
		}
	}
	for i := 0; i < min(3, len(titles)); i++ {
		t, m := titles[i], g.linked[i]
		if t == m {
			add("xpath:.")
			continue
		}
		if !isAncestor(m, t) { // in the <dd> of a <dt>
			for _, d := range descriptors(t) {
				add("xpath:(following-sibling::dd[1]" + strings.TrimPrefix(strings.TrimSuffix(descriptorXPath(d), ")[1]"), "(.") + ")[1]")
			}
			continue
		}
		if t.DataAtom != atom.A {
			for _, c := range classes(t) {
				if stableClass(c) {
					add(t.Data + "." + c)
				}
			}
			add(t.Data)
			continue
		}
		// A link: the heading it is in, its class, its parent, then any
		// link (the most precise selector first).
		for h := t.Parent; h != nil && h != m; h = h.Parent {
			if isTitleElement(h) {
				for _, c := range classes(h) {
					if stableClass(c) {
						add(h.Data + "." + c + " a")
					}
				}
				add(h.Data + " a")
				break
			}
		}
		for _, c := range classes(t) {
			if stableClass(c) {
				add("a." + c)
			}
		}
		if p := t.Parent; p != nil && p != m {
			for _, c := range classes(p) {
				if stableClass(c) {
					add(p.Data + "." + c + " a")
				}
			}
			add(p.Data + " a")
			if p.DataAtom == atom.Td {
				add("td:nth-child(" + strconv.Itoa(childIndex(p)) + ") a")
			}
		}
		add("a")
	}
	add("h1, h2, h3, h4, h5, h6")
	for _, c := range tc {
		if sg.firstIs(c, g.linked, titles, false) {
			title = c
			break
		}
	}
	if title == "" {
		return "", ""
	}
	title = stripLabel(title, titles)
	var lc []string
	addL := func(s string) {
		if s != "" && !slices.Contains(lc, s) {
			lc = append(lc, s)
		}
	}
	if g.linked[0].DataAtom == atom.A {
		addL("@href")
	}
	if titles[0].DataAtom == atom.A && title != "xpath:." {
		addL(title + " @href")
	}
	if !strings.HasPrefix(title, "xpath:") && !strings.Contains(title, ",") {
		addL(title + " a @href")
		addL("a:has(" + title + ") @href")
	}
	for _, c := range classes(mains[0]) {
		if stableClass(c) {
			addL("a." + c + " @href")
		}
	}
	addL("a @href")
	for _, c := range lc {
		if sg.firstIs(c, g.linked, mains, true) {
			return title, c
		}
	}
	return title, ""
}

// stripLabel leaves out of the title a label that most titles start
// with, as an element of its own ("<span>Title:</span> Real title").
func stripLabel(title string, titles []*html.Node) string {
	label := ""
	hits := 0
	for _, t := range titles {
		var first *html.Node
		for c := t.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode {
				first = c
				break
			}
			if c.Type == html.TextNode && strings.TrimSpace(c.Data) != "" {
				break
			}
		}
		if first == nil {
			continue
		}
		l := textOf(first)
		if !strings.HasSuffix(l, ":") || utf8.RuneCountInString(l) > 20 || strings.ContainsAny(l, "'") {
			continue
		}
		if label == "" {
			label = l
		}
		if l == label {
			hits++
		}
	}
	if label == "" || hits*5 < len(titles)*4 {
		return title
	}
	xp := ""
	switch {
	case strings.HasPrefix(title, "xpath:"):
		xp = strings.TrimPrefix(title, "xpath:")
	case !strings.ContainsAny(title, " ,>:[#"):
		xp = descriptorXPath(title)
	default:
		return title
	}
	return "xpath:normalize-space(substring-after(" + xp + ", '" + label + "'))"
}

// firstIs reports whether the selector's first match in most items (4 in
// 5) is the element wanted of that item; with href, the first match
// whose href is wanted's.
func (sg *suggester) firstIs(src string, items, wanted []*html.Node, href bool) bool {
	first, err := sg.fieldFirst(src)
	if err != nil {
		return false
	}
	hits := 0
	for i, m := range items {
		got := first(m)
		if href {
			if got.IsStr && got.Value == attrMatch(wanted[i], "href").s {
				hits++
			}
			continue
		}
		if got.Node == wanted[i] || got.Node != nil && textOf(got.Node) == textOf(wanted[i]) {
			hits++
		}
	}
	return hits*5 >= len(items)*4
}

// fieldFirst compiles a field selector into the function that finds its
// first match in an item, as extraction does: a CSS selector (with
// " @attr") is run by cascadia here, the first matching descendant in
// document order (with an attribute, the first that has it), which is
// the extractor's rule and cheap for the many candidates tried; XPath
// goes to the extractor.
func (sg *suggester) fieldFirst(src string) (func(item *html.Node) extractor.FieldMatch, error) {
	f, err := extractor.CompileField(src) // validates, as extraction will
	if err != nil {
		return nil, err
	}
	s := strings.TrimSpace(src)
	if strings.HasPrefix(s, "xpath:") {
		return func(item *html.Node) extractor.FieldMatch { return f.First(sg.doc, item) }, nil
	}
	css, attr := s, ""
	if i := strings.LastIndexAny(s, " \t\r\n"); i >= 0 || strings.HasPrefix(s, "@") {
		if name, ok := strings.CutPrefix(s[i+1:], "@"); ok {
			css, attr = strings.TrimSpace(s[:i+1]), strings.ToLower(name)
		}
	}
	if css == "" {
		return func(item *html.Node) extractor.FieldMatch {
			m := attrMatch(item, attr)
			return extractor.FieldMatch{Value: m.s, IsStr: m.str}
		}, nil
	}
	sel, err := cascadia.ParseGroup(css)
	if err != nil {
		return func(item *html.Node) extractor.FieldMatch { return f.First(sg.doc, item) }, nil
	}
	return func(item *html.Node) extractor.FieldMatch {
		var out extractor.FieldMatch
		var walk func(n *html.Node) bool
		walk = func(n *html.Node) bool {
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && sel.Match(c) {
					if attr == "" {
						out = extractor.FieldMatch{Node: c}
						return false
					}
					if m := attrMatch(c, attr); m.found() {
						out = extractor.FieldMatch{Value: m.s, IsStr: true}
						return false
					}
				}
				if !walk(c) {
					return false
				}
			}
			return true
		}
		walk(item)
		return out
	}, nil
}

// descriptionSelector finds the element, relative to the items, with the
// most text besides the title in most items (the <dd> of a <dt>).
func (sg *suggester) descriptionSelector(g *group) string {
	if g.linked[0].DataAtom == atom.Dt && countIf(g.linked, func(m *html.Node) bool { return nextElement(m, atom.Dd, true) != nil })*2 >= len(g.linked) {
		if !g.facts[0].heading || isAncestor(g.linked[0], g.facts[0].title) {
			return "xpath:following-sibling::dd[1]"
		}
	}
	type stat struct {
		hits, chars int
	}
	stats := map[string]*stat{}
	var order []string
	near := func(e *html.Node, f *itemFacts) bool {
		return isAncestor(e, f.title) || isAncestor(f.title, e) || isAncestor(e, f.main) || isAncestor(f.main, e)
	}
	for i, m := range g.linked {
		f := g.facts[i]
		seen := map[string]bool{}
		walkElements(m, func(e *html.Node) {
			if e == m || near(e, f) || e.DataAtom == atom.A {
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
		sel, err := cascadia.ParseGroup(k)
		if err != nil {
			continue
		}
		ok := 0
		for i, m := range g.linked {
			e := cascadia.Query(m, sel)
			if e != nil && !near(e, g.facts[i]) && utf8.RuneCountInString(textOf(e)) >= 20 {
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
