package suggest

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

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

// ItemParts tells, for each element of the page (numbered as [Like]
// numbers them), which of spec's items it is part of: the index, in page
// order, of the item whose element holds it, or, for an item that is a
// heading, a table row or a <dt>, whose following siblings hold it up to
// the next item (the heading's run, the item's second row, its <dd>);
// -1 when none. The page shows with it which elements a click picks in
// a chosen list, and outlines each item whole. Linear in the page.
func ItemParts(page []byte, opts extractor.Options, spec extractor.SelectSpec) ([]int, error) {
	pt, items, err := pointerItems(page, opts, spec)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(pt.nodes))
	for i := range out {
		out[i] = -1
	}
	mark := func(n *html.Node, item int) {
		a := pt.num[n]
		if out[a] >= 0 {
			return // inside an item before it: that one's
		}
		for j := a; j <= pt.end[a]; j++ {
			if out[j] < 0 {
				out[j] = item
			}
		}
	}
	for i, it := range items {
		mark(it, i)
		a := it.DataAtom
		if !isHeading(a) && a != atom.Tr && a != atom.Dt {
			continue
		}
		k := 0
		for sib := it.NextSibling; sib != nil && k < 50; sib = sib.NextSibling {
			if sib.Type != html.ElementNode {
				continue
			}
			k++
			if pt.under(sib, nil, items) > 0 || a == atom.Dt && sib.DataAtom == atom.Dt ||
				isHeading(a) && isHeading(sib.DataAtom) && headingLevel(sib.DataAtom) <= headingLevel(a) {
				break // the next item, or the end of this one's run
			}
			mark(sib, i)
		}
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
