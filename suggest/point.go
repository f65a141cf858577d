package suggest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/antchfx/htmlquery"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dynamo-rss/dynamo/extractor"
)

// Pointing at the list (API.md, "Point at the list"): a person clicks an
// element of the page, on its screenshot or its outline, and dynamo takes
// the repeated structure that holds it. Elements are named by number:
// the element nodes of [extractor.ParsePage]'s tree in document order,
// <html> being 0. Every block is written by the suggester's own code
// (spec.go) and checked by extraction, as [Page]'s are.

// ErrNoList is [Like]'s error when no repeated structure holds the
// element pointed at.
var ErrNoList = errors.New("no repeated structure contains that element; try an element inside one item of the list")

// Bounds of pointing.
const (
	MaxStarts       = 5000 // elements [Starts] returns at the most
	MaxOutlineLists = 40   // lists an outline shows at the most
	maxSections     = 300  // sections of an outline
	markWindow      = 8    // siblings Marks looks ahead to realign two trees
	// maxOutlineBlocks bounds the blocks an outline writes (each
	// tries a few selectors on the whole page).
	maxOutlineBlocks = 2 * MaxOutlineLists
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

// pointer is a page parsed once for pointing, its elements numbered.
type pointer struct {
	page  []byte
	opts  extractor.Options
	sg    *suggester
	nodes []*html.Node       // by number
	num   map[*html.Node]int // element numbers
	end   []int              // the number of each element's last descendant
	// Filled by rank, for Like, Starts and Outline:
	groups []*group
	parts  map[*html.Node][]itemRef // an item, or a part of one (a run's sibling, a second row, a <dd>)
	specs  map[*group]written       // the blocks written so far
}

// written is a group's block, and whether its item selector matches
// each item of the group.
type written struct {
	spec  extractor.SelectSpec
	ok    bool
	items map[*html.Node]bool
}

// written writes g's block once (spec.go) and finds its items.
func (pt *pointer) written(g *group) written {
	if w, ok := pt.specs[g]; ok {
		return w
	}
	var w written
	w.spec, w.ok = pt.sg.spec(g)
	if w.ok {
		w.items = map[*html.Node]bool{}
		for _, n := range pt.query(w.spec.Item) {
			w.items[n] = true
		}
	}
	if pt.specs == nil {
		pt.specs = map[*group]written{}
	}
	pt.specs[g] = w
	return w
}

// itemRef is an item of a candidate list: the group and its member.
type itemRef struct {
	g int // index in groups
	m *html.Node
}

func newPointer(page []byte, opts extractor.Options) (*pointer, error) {
	opts.Select = nil
	doc, pageURL, err := extractor.ParsePage(page, opts)
	if err != nil {
		return nil, err
	}
	pt := &pointer{page: page, opts: opts, sg: newSuggester(doc, pageURL, opts)}
	pt.sg.script = pageScript(doc)
	pt.sg.pointing = true
	pt.nodes, pt.num, pt.end = numberElements(doc)
	return pt, nil
}

// numberElements numbers the elements under doc in document order, and
// tells each one's last descendant.
func numberElements(doc *html.Node) ([]*html.Node, map[*html.Node]int, []int) {
	var nodes []*html.Node
	for n := doc; n != nil; n = nextNode(n, doc) {
		if n.Type == html.ElementNode {
			nodes = append(nodes, n)
		}
	}
	num := make(map[*html.Node]int, len(nodes))
	end := make([]int, len(nodes))
	for i, n := range nodes {
		num[n] = i
		end[i] = i
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		if p, ok := num[nodes[i].Parent]; ok {
			end[p] = max(end[p], end[i])
		}
	}
	return nodes, num, end
}

// nextNode is the node after n in document order under root.
func nextNode(n, root *html.Node) *html.Node {
	if n.FirstChild != nil {
		return n.FirstChild
	}
	for ; n != nil && n != root; n = n.Parent {
		if n.NextSibling != nil {
			return n.NextSibling
		}
	}
	return nil
}

// element is the element numbered i.
func (pt *pointer) element(i int) (*html.Node, error) {
	if i < 0 || i >= len(pt.nodes) {
		return nil, fmt.Errorf("element %d is not on the page (it has %d elements)", i, len(pt.nodes))
	}
	return pt.nodes[i], nil
}

// holds reports whether a is n or an ancestor of n, by their numbers.
func (pt *pointer) holds(a, n *html.Node) bool {
	i, ok := pt.num[a]
	j, ok2 := pt.num[n]
	return ok && ok2 && i <= j && j <= pt.end[i]
}

// under counts the nodes of ms (in page order) that a holds and skip
// (nil: none) does not, up to 2.
func (pt *pointer) under(a, skip *html.Node, ms []*html.Node) int {
	lo, hi := pt.num[a], pt.end[pt.num[a]]
	k := sort.Search(len(ms), func(i int) bool { return pt.num[ms[i]] >= lo })
	n := 0
	for ; k < len(ms) && n < 2 && pt.num[ms[k]] <= hi; k++ {
		if skip == nil || !pt.holds(skip, ms[k]) {
			n++
		}
	}
	return n
}

// rank finds the candidate lists, as Page does, and the items and parts
// of items of each.
func (pt *pointer) rank() {
	sg := pt.sg
	pt.groups = sg.ranked()
	pt.parts = map[*html.Node][]itemRef{}
	for gi, g := range pt.groups {
		for i, m := range g.linked {
			ref := itemRef{gi, m}
			for _, p := range itemParts(sg, g, i) {
				pt.parts[p] = append(pt.parts[p], ref)
			}
		}
	}
}

// itemParts are the elements that make the i-th item of g: the member,
// and the siblings that belong to it (a heading's run, the <dd> of a
// <dt>, the rows of a table item after its first, up to the next item).
func itemParts(sg *suggester, g *group, i int) []*html.Node {
	m := g.linked[i]
	out := append([]*html.Node{m}, sg.runs[m]...)
	switch m.DataAtom {
	case atom.Dt:
		if dd := pairedSibling(m); dd != nil {
			out = append(out, dd)
		}
	case atom.Tr:
		var next *html.Node
		if i+1 < len(g.linked) {
			next = g.linked[i+1]
		}
		k := 0
		for s := m.NextSibling; s != nil && s != next && k < 3; s = s.NextSibling {
			if s.Type != html.ElementNode {
				continue
			}
			if s.DataAtom != atom.Tr || slices.Contains(g.members, s) && sg.factsOf(s).main != nil {
				break
			}
			out = append(out, s)
			k++
		}
	}
	return out
}

// candidate is a list that holds an element: its group and the item
// the element is in.
type candidate struct {
	g  *group
	gi int
	m  *html.Node
}

// candidates are the lists that hold e (as an item, or inside one),
// best first as items of a list: no section that holds several items
// of another, then by quality times log2(1+items), the widest run of
// like items (the same item, more of them) before a part of it.
func (pt *pointer) candidates(e *html.Node) []candidate {
	var cs []candidate
	seen := map[int]bool{}
	for a := e; a != nil; a = a.Parent {
		for _, r := range pt.parts[a] {
			if !seen[r.g] {
				seen[r.g] = true
				cs = append(cs, candidate{pt.groups[r.g], r.g, r.m})
			}
		}
	}
	// A section holding two or more items of another list that holds e
	// is not an item (two links of a card's heading are no two items).
	kept := cs[:0:0]
	for _, c := range cs {
		section := false
		title := pt.sg.factsOf(c.m).title
		for _, o := range cs {
			if o.m != c.m && pt.holds(c.m, o.m) && o.g.quality >= 0.5*c.g.quality && pt.under(c.m, title, o.g.linked) >= 2 {
				section = true
				break
			}
		}
		if !section {
			kept = append(kept, c)
		}
	}
	cs = kept
	value := func(c candidate) float64 { return c.g.quality * math.Log2(1+float64(len(c.g.linked))) }
	slices.SortStableFunc(cs, func(x, y candidate) int {
		switch vx, vy := value(x), value(y); {
		case vx > vy:
			return -1
		case vx < vy:
			return 1
		}
		return x.gi - y.gi
	})
	// The item that holds the one pointed at, when it is no section (the
	// card, not its title link); the same item read by another list: the
	// wider one (every day's posts, not one day's), or the one that names
	// the item better.
	// Qualities are weighed against the best's, so that no chain of
	// steps drifts to a poorer list.
	if len(cs) == 0 {
		return nil
	}
	q := cs[0].g.quality
	for range len(cs) {
		changed := false
		for i := 1; i < len(cs); i++ {
			b, o := cs[0], cs[i]
			outer := o.m != b.m && pt.holds(o.m, b.m) && o.g.quality >= 0.5*q && pt.covered(b.g.linked, o.g.linked)*5 >= len(b.g.linked)*4
			same := pt.mainOf(o) == pt.mainOf(b) && o.g.quality >= 0.85*q && len(o.g.linked) >= len(b.g.linked)
			if outer || same && (len(o.g.linked) > len(b.g.linked) || pt.sg.preferGroup(o.g, b.g)) {
				cs[0], cs[i] = o, b
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	return cs
}

// covered counts the nodes of ms inside one of outer (both in page order).
func (pt *pointer) covered(ms, outer []*html.Node) int {
	n := 0
	for _, m := range ms {
		k := pt.num[m]
		i := sort.Search(len(outer), func(i int) bool { return pt.num[outer[i]] > k }) - 1
		if i >= 0 && k <= pt.end[pt.num[outer[i]]] {
			n++
		}
	}
	return n
}

// mainOf is the main link of a candidate's item.
func (pt *pointer) mainOf(c candidate) *html.Node {
	return pt.sg.factsOf(c.m).main
}

// Like returns the list that holds the element numbered element (its
// item is the element, or the element is inside one of its items,
// including an item that is a heading's run of siblings or two rows of a
// table): the widest list of like items, chosen among all candidate
// lists by its quality as an item list. Its block is written as Page
// writes one and checked by extraction; Count, Items, Where and Reason
// are as Page gives them. The error is [ErrNoList] when no list holds
// the element, another for an element number not on the page.
func Like(page []byte, opts extractor.Options, element int) (Proposal, error) {
	pt, err := newPointer(page, opts)
	if err != nil {
		return Proposal{}, err
	}
	e, err := pt.element(element)
	if err != nil {
		return Proposal{}, err
	}
	pt.rank()
	p, _, ok := pt.like(e)
	if !ok {
		return Proposal{}, ErrNoList
	}
	return p, nil
}

// like is Like on a parsed page: the proposal and its group.
func (pt *pointer) like(e *html.Node) (Proposal, *group, bool) {
	var cs []candidate
	if d := pt.firstItemIn(e); d != nil && !pt.isItem(e) {
		cs = pt.candidates(d) // the list it holds, not one it is part of (a day of posts)
	} else if cs = pt.candidates(e); len(cs) == 0 {
		if d := pt.oneItemIn(e); d != nil {
			cs = pt.candidates(d)
		}
	}
	for i, c := range cs {
		if i == maxTries {
			break
		}
		w := pt.written(c.g)
		if !w.ok || !w.items[c.m] {
			continue
		}
		if p, ok := pt.sg.proposal(pt.page, pt.opts, c.g, w.spec); ok {
			// Not a section, whatever the ranking said: pointing knows
			// better (candidates).
			p.Reason = strings.Replace(p.Reason, ", each holds several items", "", 1)
			placed(&p)
			return p, c.g, true
		}
	}
	return Proposal{}, nil, false
}

// oneItemIn is, for an element that wraps one item of a list (an <li>
// around the <article>), that item; nil when it wraps none or several.
func (pt *pointer) oneItemIn(e *html.Node) *html.Node {
	i := pt.num[e]
	for j := i + 1; j <= pt.end[i] && j < i+2000; j++ {
		for _, r := range pt.parts[pt.nodes[j]] {
			if r.m == pt.nodes[j] && pt.under(e, nil, pt.groups[r.g].linked) == 1 {
				return pt.nodes[j]
			}
		}
	}
	return nil
}

// firstItemIn is, for the container of several items of a list (the
// <ul> itself, clicked between two of its items; a table around its
// rows), the first of them: an item whose parent or grandparent e is; nil
// when there is none. like takes that list for a container that is no
// item itself (a day's <ul> of posts: every day's posts, not the days).
func (pt *pointer) firstItemIn(e *html.Node) *html.Node {
	i := pt.num[e]
	for j := i + 1; j <= pt.end[i] && j < i+2000; j++ {
		n := pt.nodes[j]
		if n.Parent != e && (n.Parent == nil || n.Parent.Parent != e) {
			continue
		}
		for _, r := range pt.parts[n] {
			if r.m == n && pt.under(e, nil, pt.groups[r.g].linked) >= 2 {
				return n
			}
		}
	}
	return nil
}

// isItem reports whether e is an item of a candidate list.
func (pt *pointer) isItem(e *html.Node) bool {
	return slices.ContainsFunc(pt.parts[e], func(r itemRef) bool { return r.m == e })
}

// query returns the elements an item selector matches (CSS, or
// "xpath:EXPR"), in page order; nil when it matches none or is not one.
func (pt *pointer) query(item string) []*html.Node {
	s := strings.TrimSpace(item)
	if expr, ok := strings.CutPrefix(s, "xpath:"); ok {
		ns, err := htmlquery.QueryAll(pt.sg.doc, strings.TrimSpace(expr))
		if err != nil {
			return nil
		}
		var out []*html.Node
		for _, n := range ns {
			if n.Type == html.ElementNode {
				out = append(out, n)
			}
		}
		return out
	}
	if s == "" {
		return nil
	}
	got, _ := pt.sg.queryAll(s)
	return got
}

// Items returns the element numbers of the items spec's item selector
// matches, in page order (for an item that is a heading's run of
// siblings, the heading). The error is a block that is no select block
// of selectors, or one that matches nothing.
func Items(page []byte, opts extractor.Options, spec extractor.SelectSpec) ([]int, error) {
	pt, items, err := pointerItems(page, opts, spec)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(items))
	for i, n := range items {
		out[i] = pt.num[n]
	}
	return out, nil
}

// pointerItems parses the page and finds spec's items.
func pointerItems(page []byte, opts extractor.Options, spec extractor.SelectSpec) (*pointer, []*html.Node, error) {
	if spec.From != "" || strings.TrimSpace(spec.Item) == "" {
		return nil, nil, errors.New("the block has no item selector: only a block of selectors has items on the page")
	}
	if _, err := extractor.CompileSelectors(spec); err != nil {
		return nil, nil, fmt.Errorf("the block does not compile: %w", err)
	}
	pt, err := newPointer(page, opts)
	if err != nil {
		return nil, nil, err
	}
	items := pt.query(spec.Item)
	if len(items) == 0 {
		return nil, nil, fmt.Errorf("the item selector %q matches nothing on the page", spec.Item)
	}
	return pt, items, nil
}

// pointedItem parses the page, finds spec's items, the element numbered
// element and the item x it is in.
func pointedItem(page []byte, opts extractor.Options, spec extractor.SelectSpec, element int) (pt *pointer, items []*html.Node, x, e *html.Node, err error) {
	pt, items, err = pointerItems(page, opts, spec)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if e, err = pt.element(element); err != nil {
		return nil, nil, nil, nil, err
	}
	if x = pt.itemAround(items, e); x == nil {
		return nil, nil, nil, nil, errors.New("that element is in none of the list's items: point at an element inside one item")
	}
	return pt, items, x, e, nil
}

// itemAround is the item of items that e is in: an item that holds it,
// else the item whose following siblings hold it, up to the next item (a
// heading's run, a table item's second row); nil when none.
func (pt *pointer) itemAround(items []*html.Node, e *html.Node) *html.Node {
	is := make(map[*html.Node]bool, len(items))
	for _, n := range items {
		is[n] = true
	}
	for a := e; a != nil && a.Type == html.ElementNode; a = a.Parent {
		if is[a] {
			return a
		}
	}
	for a := e; a != nil && a.Type == html.ElementNode; a = a.Parent {
		k := 0
		level := 7 // of the highest heading on the way: a heading item's run ends before one of its level
		if isHeading(a.DataAtom) {
			level = headingLevel(a.DataAtom)
		}
		for s := a.PrevSibling; s != nil && k < 50; s = s.PrevSibling {
			if s.Type != html.ElementNode {
				continue
			}
			k++
			if is[s] {
				if isHeading(s.DataAtom) && headingLevel(s.DataAtom) < level || s.DataAtom == atom.Tr || s.DataAtom == atom.Dt {
					return s
				}
				break
			}
			if isHeading(s.DataAtom) {
				level = min(level, headingLevel(s.DataAtom))
			}
			if slices.ContainsFunc(items, func(n *html.Node) bool { return isAncestor(s, n) }) {
				break // a block of items before: e is between lists
			}
		}
	}
	return nil
}

// Exclude returns spec with an item selector that leaves out the item
// the element numbered element is in, and the items of its kind, and
// nothing else: by a class or attribute that item has and the others do
// not (":not(.ad)"), else by a descendant that marks it
// (":not(:has(.sponsored))", or its text), else, last, by naming it (its
// id, its link). The result is checked by extraction. The error is an
// element in no item of spec, or an exclusion that would leave no item.
func Exclude(page []byte, opts extractor.Options, spec extractor.SelectSpec, element int) (Proposal, error) {
	pt, items, x, _, err := pointedItem(page, opts, spec, element)
	if err != nil {
		return Proposal{}, err
	}
	if strings.HasPrefix(strings.TrimSpace(spec.Item), "xpath:") {
		return Proposal{}, errors.New("the item selector is an XPath expression: write the exclusion into it by hand")
	}
	if len(items) == 1 {
		return Proposal{}, errors.New("the list has one item: leaving it out would leave none")
	}
	before, ok := tryProposal(page, opts, &spec)
	if !ok {
		return Proposal{}, errors.New("the block yields no items on this page")
	}
	for _, f := range exclusions(x, items) {
		out := spec
		out.Item = withNot(spec.Item, f)
		got := pt.query(out.Item)
		if len(got) == 0 || len(got) == len(items) || slices.Contains(got, x) || !subsequence(got, items) {
			continue
		}
		p, ok := tryProposal(page, opts, &out)
		dropped := len(items) - len(got)
		if !ok || p.Count >= before.Count || before.Count == len(items) && p.Count != before.Count-dropped {
			continue
		}
		p.Kind = KindSelectors
		p.Where = pt.sg.where(got)
		p.Reason = reason(p.Count, p.Where, fmt.Sprintf("without %d like the one pointed at (%s)", dropped, f))
		return p, nil
	}
	return Proposal{}, errors.New("no selector leaves out that item and keeps the others: every other item looks the same")
}

// exclusions are the selectors that may name x's kind among items, the
// best first: x's classes the others lack (an ad's word first, then the
// rarest), its attributes, a descendant's class, a descendant's short
// text, then x itself (its id, its link).
func exclusions(x *html.Node, items []*html.Node) []string {
	var out []string
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	holders := func(f func(*html.Node) bool) int { return countIf(items, f) }
	cls := uniq(classes(x))
	cls = slices.DeleteFunc(cls, func(c string) bool {
		return !cssIdent(c) || !stableClass(c) && !adWord(c) || holders(func(n *html.Node) bool { return slices.Contains(classes(n), c) }) == len(items)
	})
	slices.SortStableFunc(cls, func(a, b string) int {
		if d := boolInt(!adWord(a)) - boolInt(!adWord(b)); d != 0 {
			return d
		}
		return holders(func(n *html.Node) bool { return slices.Contains(classes(n), a) }) -
			holders(func(n *html.Node) bool { return slices.Contains(classes(n), b) })
	})
	for _, c := range cls {
		add("." + c)
	}
	for _, a := range x.Attr {
		if a.Namespace != "" || a.Key == "id" || a.Key == "class" || a.Key == "style" || a.Key == "href" || !cssIdent(a.Key) || len(a.Val) > 60 || strings.ContainsAny(a.Val, "\"\\\n") {
			continue
		}
		add("[" + a.Key + "=" + strconv.Quote(a.Val) + "]")
	}
	// A descendant that marks it: a class only such items have, then a
	// short text of its own ("Sponsored", "Anzeige").
	k := 0
	var marks, texts []string
	walkElements(x, func(d *html.Node) {
		if d == x || k > 200 {
			return
		}
		k++
		for _, c := range classes(d) {
			if cssIdent(c) && (stableClass(c) || adWord(c)) {
				marks = append(marks, c)
			}
		}
		if t, ok := shortText(d, 20); ok && t != "" && !hasElementChild(d) && !strings.ContainsAny(t, "\"\\") {
			texts = append(texts, ":has("+d.Data+":contains("+strconv.Quote(t)+"))")
		}
	})
	slices.SortStableFunc(marks, func(a, b string) int { return boolInt(!adWord(a)) - boolInt(!adWord(b)) })
	for _, c := range marks {
		add(":has(." + c + ")")
	}
	for _, t := range texts {
		add(t)
	}
	if id := attrMatch(x, "id").s; cssIdent(id) {
		add("#" + id)
	}
	for _, c := range uniq(classes(x)) {
		if cssIdent(c) {
			add("." + c) // a class that differs per item: this one alone
		}
	}
	if a := extractor.FindElement(x, atom.A, "href"); a != nil {
		if h := attrMatch(a, "href").s; !strings.ContainsAny(h, "\"\\\n") {
			add(":has(a[href=" + strconv.Quote(h) + "])")
		}
	}
	return out
}

// adWords mark an advertisement's class.
var adWords = []string{"ad", "ads", "advert", "advertisement", "sponsored", "sponsor", "promo", "promoted", "promotion", "anzeige", "pub"}

func adWord(c string) bool {
	return slices.ContainsFunc(identWords(c), func(w string) bool { return slices.Contains(adWords, w) })
}

func hasElementChild(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			return true
		}
	}
	return false
}

// withNot appends :not(f) to each selector of a selector list.
func withNot(item, f string) string {
	var parts []string
	depth, start := 0, 0
	quote := rune(0)
	for i, r := range item {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '(' || r == '[':
			depth++
		case r == ')' || r == ']':
			depth--
		case r == ',' && depth == 0:
			parts = append(parts, item[start:i])
			start = i + 1
		}
	}
	parts = append(parts, item[start:])
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p) + ":not(" + f + ")"
	}
	return strings.Join(parts, ", ")
}

// subsequence reports whether every node of a is in b, in b's order.
func subsequence(a, b []*html.Node) bool {
	j := 0
	for _, n := range a {
		for j < len(b) && b[j] != n {
			j++
		}
		if j == len(b) {
			return false
		}
		j++
	}
	return true
}

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

// Starts returns the elements that could start an item (the ones for
// which [Like] may give a list), in page order: the items of the
// candidate lists and their parts (a heading's run of siblings), and
// the elements inside them with text of their own or a picture. At most
// [MaxStarts]: the items of the best lists first.
func Starts(page []byte, opts extractor.Options) []int {
	pt, err := newPointer(page, opts)
	if err != nil {
		return nil
	}
	pt.rank()
	root := make([]bool, len(pt.nodes))
	roots := 0
	for _, g := range pt.groups {
		for i := range g.linked {
			for _, p := range itemParts(pt.sg, g, i) {
				if k := pt.num[p]; !root[k] && roots < MaxStarts/2 {
					root[k] = true
					roots++
				}
			}
		}
	}
	inside := make([]bool, len(pt.nodes))
	var out []int
	extra := MaxStarts - roots
	for i, n := range pt.nodes {
		if p, ok := pt.num[n.Parent]; ok && inside[p] {
			inside[i] = true
		}
		if root[i] {
			inside[i] = true
			out = append(out, i)
			continue
		}
		if inside[i] && extra > 0 && !extractor.IsHidden(n.DataAtom) && (n.DataAtom == atom.Img || ownText(n)) {
			out = append(out, i)
			extra--
		}
	}
	return out
}

// ownText reports whether n has text of its own (not only its children's).
func ownText(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode && strings.TrimSpace(c.Data) != "" {
			return true
		}
	}
	return false
}

// Marks maps the elements of page to the marks a browser put on the same
// elements: marked is the page's DOM as the browser serialized it, with
// data-dynamo-box="i" on its elements. It returns, for each element
// number of page, the mark of its element in marked, -1 when there is
// none or the two trees differ there past telling. The trees are walked
// side by side, elements matched by tag in sibling order; an element
// only one side has (a script's, a re-serialization's) is skipped when
// the next few siblings realign, else both are given up. Linear in the
// pages.
func Marks(page []byte, opts extractor.Options, marked []byte) []int {
	opts.Select = nil
	doc, _, err := extractor.ParsePage(page, opts)
	if err != nil {
		return nil
	}
	nodes, num, _ := numberElements(doc)
	out := make([]int, len(nodes))
	for i := range out {
		out[i] = -1
	}
	mdoc, err := html.Parse(bytes.NewReader(marked))
	if err != nil {
		return out
	}
	type pair struct{ a, b *html.Node }
	stack := []pair{{doc, mdoc}}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if p.a.Type == html.ElementNode {
			out[num[p.a]] = markOf(p.b)
		}
		as, bs := elementChildren(p.a), elementChildren(p.b)
		i, j := 0, 0
		for i < len(as) && j < len(bs) {
			if as[i].Data == bs[j].Data {
				stack = append(stack, pair{as[i], bs[j]})
				i++
				j++
				continue
			}
			// Realign: the fewest siblings skipped on one side, extra
			// elements of the browser's first.
			skipB, skipA := -1, -1
			for k := 1; k <= markWindow; k++ {
				if skipB < 0 && j+k < len(bs) && bs[j+k].Data == as[i].Data {
					skipB = k
				}
				if skipA < 0 && i+k < len(as) && as[i+k].Data == bs[j].Data {
					skipA = k
				}
			}
			switch {
			case skipB > 0 && (skipA < 0 || skipB <= skipA):
				j += skipB
			case skipA > 0:
				i += skipA
			default:
				i++
				j++
			}
		}
	}
	return out
}

func elementChildren(n *html.Node) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			out = append(out, c)
		}
	}
	return out
}

// markOf is an element's data-dynamo-box number, -1 when it has none.
func markOf(n *html.Node) int {
	v := attrMatch(n, "data-dynamo-box")
	if !v.found() {
		return -1
	}
	i, err := strconv.Atoi(strings.TrimSpace(v.s))
	if err != nil || i < 0 {
		return -1
	}
	return i
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
