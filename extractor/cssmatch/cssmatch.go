// Package cssmatch evaluates CSS selectors in time linear in the page
// (github.com/andybalholm/cascadia backtracks on combinators); the
// extractor's selectors use it. See [Compile] and [Selector.Run].
package cssmatch

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
)

// This file evaluates CSS selectors in time linear in the page.
//
// github.com/andybalholm/cascadia matches a selector against one element
// at a time, and matches a combinator by backtracking: "b span span span"
// on an element checks every way of picking its ancestors, C(depth, k)
// ways, and :has() walks the subtree of every element it is asked about.
// A 300-byte page could cost seconds. Here a selector is split at its
// combinators into compound selectors, each compound into its simple
// selectors (each compiled by cascadia on its own, constant time on one
// element), and the whole page is walked once per selector group in
// document order, every node getting one bit per step of each chain: the
// step matches at a node when its compound matches there and the step
// before matched at an ancestor (a counter kept while walking), at the
// parent, at the previous element sibling or at an earlier sibling. The
// simple selectors whose cascadia matcher is not constant time are
// evaluated here too: :not(), :has() and :haschild() from a walk of their
// argument done first (descendant and child results gathered on the way
// up), :nth-*, :first-*, :last-* and :only-* from positions counted while
// walking. The cost is O(nodes × steps) for a selector; what remains
// counted against a budget is what depends on text or on ancestors in
// cascadia: :contains() and :matches() read an element's whole text,
// :lang(), :enabled and :disabled walk its ancestors.
//
// The results are cascadia's exactly (QueryAll: descendants of the
// context, document order, no duplicates, ancestors above the context
// counting for combinators): the compiled form is checked against
// cascadia's own parse of the selector (their serializations must be
// equal), and tests compare both on many pages and selectors.

// maxChainSteps bounds the compound selectors of one chain (one bit each).
const maxChainSteps = 64

// Selector is a compiled CSS selector group.
type Selector struct {
	groups   []*cssGroup // inner groups (arguments of :not, :has, :haschild) before the groups that use them; the last is the selector
	nth      bool        // some step uses sibling positions
	nthType  bool        // ... of the same type
	costly   bool        // some step reads text or ancestors (counted against the budget)
	fastPath cascadia.Matcher
}

// cssGroup is a selector list: it matches a node when one chain does.
type cssGroup struct {
	id              int
	chains          [][]cssStep
	needHas, needCh bool // a :has() / :haschild() reads it
}

// cssStep is a compound selector and the combinator before it (0 for
// the first of a chain).
type cssStep struct {
	comb  byte
	parts []cssSimple // none: any element
}

type cssKind uint8

const (
	kindPlain    cssKind = iota // cascadia's matcher, constant time on one node
	kindNot                     // :not(g)
	kindHas                     // :has(g)
	kindHasChild                // :haschild(g)
	kindNth                     // :nth-*(an+b), :first-*, :last-*
	kindOnly                    // :only-child, :only-of-type
	kindContains                // :contains(text)
	kindMatches                 // :matches(regexp)
	kindAncestor                // :lang(), :enabled, :disabled: cascadia's matcher, walks ancestors
)

type cssSimple struct {
	kind         cssKind
	m            cascadia.Sel
	g            *cssGroup
	a, b         int
	last, ofType bool
	text         string
	rx           *regexp.Regexp
}

// Compile compiles a selector group (already accepted by cascadia.ParseGroup
// as whole, which is passed as want) for linear evaluation.
func Compile(src string, want cascadia.SelectorGroup) (*Selector, error) {
	c := &Selector{}
	p := &cssParser{s: src, sel: c}
	g, err := p.group(0)
	if err == nil && p.i < len(p.s) {
		err = fmt.Errorf("unexpected %q", p.s[p.i:])
	}
	if err == nil && g.String() != want.String() {
		err = fmt.Errorf("read as %q, cascadia reads %q", g.String(), want.String())
	}
	if err != nil {
		return nil, fmt.Errorf("this form of selector cannot be evaluated in bounded time (%v): write it another way", err)
	}
	// One compound of cheap simple selectors: cascadia's own matcher is
	// linear (one constant-time test per node) and needs no walk of the page.
	if len(c.groups) == 1 && len(g.chains) == 1 && len(g.chains[0]) == 1 {
		plain := true
		for _, s := range g.chains[0][0].parts {
			plain = plain && s.kind == kindPlain
		}
		if plain {
			c.fastPath = want
		}
	}
	return c, nil
}

// Costly reports whether some step reads an element's text or walks its
// ancestors (:contains, :matches, :lang, :enabled, :disabled): such a
// selector is counted against the limit given to [Selector.Run].
func (c *Selector) Costly() bool { return c.costly }

// FastPath is cascadia's own matcher when the selector is one compound of
// simple selectors that each test one element in constant time (no walk
// of the page is needed: match each node); nil otherwise.
func (c *Selector) FastPath() cascadia.Matcher { return c.fastPath }

// String writes the group as cascadia's serialization does.
func (g *cssGroup) String() string {
	var b strings.Builder
	for i, ch := range g.chains {
		if i > 0 {
			b.WriteString(", ")
		}
		for j, st := range ch {
			if j > 0 {
				b.WriteString(" " + string(st.comb) + " ")
			}
			if len(st.parts) == 0 {
				b.WriteString("*")
			}
			for _, s := range st.parts {
				switch s.kind {
				case kindNot, kindHas, kindHasChild:
					name := map[cssKind]string{kindNot: "not", kindHas: "has", kindHasChild: "haschild"}[s.kind]
					b.WriteString(":" + name + "(" + s.g.String() + ")")
				default:
					b.WriteString(s.m.String())
				}
			}
		}
	}
	return b.String()
}

// cssParser splits a selector as cascadia's parser reads it.
type cssParser struct {
	s     string
	i     int
	sel   *Selector
	depth int
}

var errCSSSyntax = errors.New("unexpected end of selector")

func (p *cssParser) skipWS() bool {
	i := p.i
	for i < len(p.s) {
		switch p.s[i] {
		case ' ', '\t', '\r', '\n', '\f':
			i++
			continue
		case '/':
			if strings.HasPrefix(p.s[i:], "/*") {
				if end := strings.Index(p.s[i+2:], "*/"); end != -1 {
					i += end + 4
					continue
				}
			}
		}
		break
	}
	moved := i > p.i
	p.i = i
	return moved
}

func (p *cssParser) group(depth int) (*cssGroup, error) {
	if depth > 64 {
		return nil, errors.New("nested more than 64 levels")
	}
	g := &cssGroup{}
	for {
		ch, err := p.chain(depth)
		if err != nil {
			return nil, err
		}
		g.chains = append(g.chains, ch)
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		break
	}
	g.id = len(p.sel.groups)
	p.sel.groups = append(p.sel.groups, g)
	return g, nil
}

func (p *cssParser) chain(depth int) ([]cssStep, error) {
	p.skipWS()
	st, err := p.compound(depth)
	if err != nil {
		return nil, err
	}
	ch := []cssStep{st}
	for {
		var comb byte
		if p.skipWS() {
			comb = ' '
		}
		if p.i >= len(p.s) {
			break
		}
		switch c := p.s[p.i]; c {
		case '+', '>', '~':
			comb = c
			p.i++
			p.skipWS()
		case ',', ')':
			comb = 0
		}
		if comb == 0 {
			break
		}
		st, err := p.compound(depth)
		if err != nil {
			return nil, err
		}
		st.comb = comb
		ch = append(ch, st)
	}
	if len(ch) > maxChainSteps {
		return nil, fmt.Errorf("%d compound selectors joined by combinators, more than %d", len(ch), maxChainSteps)
	}
	return ch, nil
}

func (p *cssParser) compound(depth int) (cssStep, error) {
	var st cssStep
	if p.i >= len(p.s) {
		return st, errCSSSyntax
	}
	switch p.s[p.i] {
	case '*':
		p.i++
		if p.i+2 < len(p.s) && p.s[p.i:p.i+2] == "|*" {
			p.i += 2
		}
	case '#', '.', '[', ':':
	default:
		start := p.i
		if !p.ident() {
			return st, errCSSSyntax
		}
		s, err := p.simple(p.s[start:p.i])
		if err != nil {
			return st, err
		}
		st.parts = append(st.parts, s)
	}
	for p.i < len(p.s) {
		start := p.i
		var ok bool
		switch p.s[p.i] {
		case '#':
			p.i++
			ok = p.name()
		case '.':
			p.i++
			ok = p.ident()
		case '[':
			ok = p.attr()
		case ':':
			s, err := p.pseudo(depth)
			if err != nil {
				return st, err
			}
			if s != nil {
				st.parts = append(st.parts, *s)
				continue
			}
			ok = true
		default:
			return st, nil
		}
		if !ok {
			return st, errCSSSyntax
		}
		s, err := p.simple(p.s[start:p.i])
		if err != nil {
			return st, err
		}
		st.parts = append(st.parts, s)
	}
	return st, nil
}

// simple compiles one simple selector with cascadia and sorts it by kind.
func (p *cssParser) simple(src string) (cssSimple, error) {
	m, err := cascadia.Parse(src)
	if err != nil {
		return cssSimple{}, err
	}
	s := cssSimple{kind: kindPlain, m: m}
	str := m.String()
	switch {
	case str == ":first-child", str == ":last-child", str == ":first-of-type", str == ":last-of-type":
		s.kind, s.b = kindNth, 1
		s.last, s.ofType = strings.HasPrefix(str, ":last"), strings.HasSuffix(str, "of-type")
	case str == ":only-child", str == ":only-of-type":
		s.kind, s.ofType = kindOnly, str == ":only-of-type"
	case strings.HasPrefix(str, ":nth-"):
		name, arg, _ := strings.Cut(strings.TrimSuffix(str[1:], ")"), "(")
		as, bs, ok := strings.Cut(arg, "n")
		a, err1 := strconv.Atoi(as)
		b, err2 := strconv.Atoi(bs)
		if !ok || err1 != nil || err2 != nil {
			return s, fmt.Errorf("unexpected %s", str)
		}
		s.kind, s.a, s.b = kindNth, a, b
		s.last, s.ofType = strings.Contains(name, "last"), strings.HasSuffix(name, "of-type")
	case strings.HasPrefix(str, `:contains("`):
		s.kind, s.text = kindContains, strings.TrimSuffix(strings.TrimPrefix(str, `:contains("`), `")`)
	case strings.HasPrefix(str, ":matches("):
		rx, err := regexp.Compile(strings.TrimSuffix(strings.TrimPrefix(str, ":matches("), ")"))
		if err != nil {
			return s, err
		}
		s.kind, s.rx = kindMatches, rx
	case strings.HasPrefix(str, ":lang("), str == ":enabled", str == ":disabled":
		s.kind = kindAncestor
	}
	switch s.kind {
	case kindNth, kindOnly:
		p.sel.nth = true
		p.sel.nthType = p.sel.nthType || s.ofType
	case kindContains, kindMatches, kindAncestor:
		p.sel.costly = true
	}
	return s, nil
}

func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c > 127 || c == '-' || '0' <= c && c <= '9'
}

// escape skips a backslash escape at p.i.
func (p *cssParser) escape() bool {
	if len(p.s) < p.i+2 || p.s[p.i] != '\\' {
		return false
	}
	c := p.s[p.i+1]
	switch {
	case c == '\r' || c == '\n' || c == '\f':
		return false
	case hexByte(c):
		i := p.i + 1
		for i < p.i+7 && i < len(p.s) && hexByte(p.s[i]) {
			i++
		}
		if i < len(p.s) {
			switch p.s[i] {
			case '\r':
				i++
				if i < len(p.s) && p.s[i] == '\n' {
					i++
				}
			case ' ', '\t', '\n', '\f':
				i++
			}
		}
		p.i = i
		return true
	}
	p.i += 2
	return true
}

func hexByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func (p *cssParser) name() bool {
	start := p.i
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case nameByte(c):
			p.i++
		case c == '\\':
			if !p.escape() {
				return false
			}
		default:
			return p.i > start
		}
	}
	return p.i > start
}

func (p *cssParser) ident() bool {
	for p.i < len(p.s) && p.s[p.i] == '-' {
		p.i++
	}
	if p.i >= len(p.s) {
		return false
	}
	if c := p.s[p.i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c > 127 || c == '\\') {
		return false
	}
	return p.name()
}

func (p *cssParser) str() bool {
	if p.i >= len(p.s) {
		return false
	}
	quote := p.s[p.i]
	p.i++
	for p.i < len(p.s) {
		switch c := p.s[p.i]; c {
		case '\\':
			if p.i+1 < len(p.s) {
				switch p.s[p.i+1] {
				case '\r':
					if p.i+2 < len(p.s) && p.s[p.i+2] == '\n' {
						p.i += 3
						continue
					}
					p.i += 2
					continue
				case '\n', '\f':
					p.i += 2
					continue
				}
			}
			if !p.escape() {
				return false
			}
		case quote:
			p.i++
			return true
		case '\r', '\n', '\f':
			return false
		default:
			p.i++
		}
	}
	return false
}

// regex skips a regular expression: up to an unmatched ')' or ']'.
func (p *cssParser) regex() bool {
	open := 0
	for ; p.i < len(p.s); p.i++ {
		switch p.s[p.i] {
		case '(', '[':
			open++
		case ')', ']':
			open--
			if open < 0 {
				return true
			}
		}
	}
	return false
}

func (p *cssParser) attr() bool {
	p.i++ // [
	p.skipWS()
	if !p.ident() {
		return false
	}
	p.skipWS()
	if p.i >= len(p.s) {
		return false
	}
	if p.s[p.i] == ']' {
		p.i++
		return true
	}
	if p.i+2 >= len(p.s) {
		return false
	}
	op := p.s[p.i : p.i+2]
	if op[0] == '=' {
		op = "="
	}
	p.i += len(op)
	p.skipWS()
	if p.i >= len(p.s) {
		return false
	}
	var ok bool
	switch {
	case op == "#=":
		ok = p.regex()
	case p.s[p.i] == '\'' || p.s[p.i] == '"':
		ok = p.str()
	default:
		ok = p.ident()
	}
	if !ok {
		return false
	}
	p.skipWS()
	if p.i < len(p.s) && (p.s[p.i] == 'i' || p.s[p.i] == 'I') {
		p.i++
	}
	p.skipWS()
	if p.i >= len(p.s) || p.s[p.i] != ']' {
		return false
	}
	p.i++
	return true
}

// pseudo reads a pseudo-class: a *cssSimple for :not(), :has() and
// :haschild() (their argument compiled here), nil for the others (the
// caller compiles p.s[start:p.i] with cascadia).
func (p *cssParser) pseudo(depth int) (*cssSimple, error) {
	p.i++ // :
	start := p.i
	if !p.ident() {
		return nil, errCSSSyntax
	}
	name := strings.ToLower(p.s[start:p.i])
	open := func() bool {
		if p.i >= len(p.s) || p.s[p.i] != '(' {
			return false
		}
		p.i++
		p.skipWS()
		return true
	}
	closing := func() bool {
		p.skipWS()
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return false
		}
		p.i++
		return true
	}
	ok := true
	switch name {
	case "not", "has", "haschild":
		if !open() {
			return nil, errCSSSyntax
		}
		g, err := p.group(depth + 1)
		if err != nil {
			return nil, err
		}
		if !closing() {
			return nil, errCSSSyntax
		}
		s := &cssSimple{g: g}
		switch name {
		case "not":
			s.kind = kindNot
		case "has":
			s.kind, g.needHas = kindHas, true
		default:
			s.kind, g.needCh = kindHasChild, true
		}
		return s, nil
	case "contains", "containsown":
		ok = open() && p.i < len(p.s)
		if ok && (p.s[p.i] == '\'' || p.s[p.i] == '"') {
			ok = p.str()
		} else if ok {
			ok = p.ident()
		}
		ok = ok && closing()
	case "matches", "matchesown":
		ok = open() && p.regex() && closing()
	case "nth-child", "nth-last-child", "nth-of-type", "nth-last-of-type":
		ok = open()
		for ok && p.i < len(p.s) && p.s[p.i] != ')' {
			p.i++
		}
		ok = ok && closing()
	case "lang":
		ok = open() && p.ident() && closing()
	}
	if !ok {
		return nil, errCSSSyntax
	}
	return nil, nil
}

// ErrCost is a selector's evaluation stopped by its budget.
var ErrCost = errors.New("the selector costs too much on this page")

// CostError says what was too costly and what to do.
func CostError(budget int64) error {
	return fmt.Errorf("%w: it needs more than %d steps (a bound proportional to the page's nodes); use fewer nested predicates, :has(), :contains() or descendant steps", ErrCost, budget)
}

// costPanic aborts a walk that exceeded its budget.
type costPanic struct{}

// cssRun is one evaluation of a selector over a whole tree.
type cssRun struct {
	sel    *Selector
	root   *html.Node
	budget int64 // units left for the costly pseudo-classes
	limit  int64
	res    [][]bool // per group: does the node (preorder index) match
	has    [][]bool // per group: does a descendant match
	hasCh  [][]bool // per group: does a child match
	out    []*html.Node

	// the walk of one group
	g      *cssGroup
	idx    int
	cnt    [][]int32  // per chain, per step: ancestors in the step's set
	anc    []uint64   // per chain: steps with an ancestor in their set
	levels [][]uint64 // per depth: the node's masks, the previous element sibling's, the OR of the earlier siblings'
}

// positions are a node's place among its parent's element children.
type positions struct {
	parent             bool
	pos, total         int
	posType, totalType int
}

// Run evaluates the selector on the tree of root: the nodes it matches in
// document order (root itself included when it matches).
func (c *Selector) Run(root *html.Node, limit int64) (out []*html.Node, err error) {
	r := &cssRun{sel: c, root: root, budget: limit, limit: limit}
	r.res = make([][]bool, len(c.groups))
	r.has = make([][]bool, len(c.groups))
	r.hasCh = make([][]bool, len(c.groups))
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(costPanic); !ok {
				panic(v)
			}
			out, err = nil, CostError(r.limit)
		}
	}()
	for _, g := range c.groups {
		r.walkGroup(g, g == c.groups[len(c.groups)-1])
	}
	return r.out, nil
}

func (r *cssRun) walkGroup(g *cssGroup, top bool) {
	r.g, r.idx = g, 0
	r.cnt = make([][]int32, len(g.chains))
	for i, ch := range g.chains {
		r.cnt[i] = make([]int32, len(ch))
	}
	r.anc = make([]uint64, len(g.chains))
	r.levels = r.levels[:0]
	if !top {
		r.res[g.id] = []bool{}
		if g.needHas {
			r.has[g.id] = []bool{}
		}
		if g.needCh {
			r.hasCh[g.id] = []bool{}
		}
	}
	r.visit(r.root, nil, nil, nil, positions{}, 0, top)
}

// visit evaluates n (parent's masks, the previous element sibling's and
// the earlier siblings' OR given) and its subtree; it returns n's masks
// (valid until the next visit at this depth), whether n matches the group
// and whether a descendant does.
func (r *cssRun) visit(n *html.Node, parent, prev, earlier []uint64, pos positions, depth int, top bool) (mask []uint64, match, desc bool) {
	g := r.g
	nc := len(g.chains)
	for len(r.levels) <= depth {
		r.levels = append(r.levels, make([]uint64, 3*nc))
	}
	lv := r.levels[depth]
	mask = lv[:nc]
	idx := r.idx
	r.idx++
	if !top {
		r.res[g.id] = append(r.res[g.id], false)
		if g.needHas {
			r.has[g.id] = append(r.has[g.id], false)
		}
		if g.needCh {
			r.hasCh[g.id] = append(r.hasCh[g.id], false)
		}
	}
	for c, ch := range g.chains {
		var m uint64
		for j := range ch {
			st := &ch[j]
			if j > 0 {
				bit := uint64(1) << (j - 1)
				var from uint64
				switch st.comb {
				case ' ':
					from = r.anc[c]
				case '>':
					if parent != nil {
						from = parent[c]
					}
				case '+':
					if prev != nil {
						from = prev[c]
					}
				case '~':
					if earlier != nil {
						from = earlier[c]
					}
				}
				if from&bit == 0 {
					continue
				}
			}
			if r.matchStep(st, n, idx, pos, depth) {
				m |= 1 << j
			}
		}
		mask[c] = m
		if m&(1<<(len(ch)-1)) != 0 {
			match = true
		}
	}
	if match && top {
		r.out = append(r.out, n)
	}
	if n.FirstChild == nil {
		if !top {
			r.res[g.id][idx] = match
		}
		return mask, match, false
	}
	// n is an ancestor of what follows.
	for c := range mask {
		for m := mask[c]; m != 0; m &= m - 1 {
			j := trailingZeros(m)
			if r.cnt[c][j] == 0 {
				r.anc[c] |= 1 << j
			}
			r.cnt[c][j]++
		}
	}
	sibPrev, sibEarlier := lv[nc:2*nc], lv[2*nc:]
	clear(sibPrev)
	clear(sibEarlier)
	var childPos positions
	childPos.parent = true
	var typeTotal, typeSeen map[string]int
	if r.sel.nth {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode {
				childPos.total++
				if r.sel.nthType {
					if typeTotal == nil {
						typeTotal, typeSeen = map[string]int{}, map[string]int{}
					}
					typeTotal[c.Data]++
				}
			}
		}
	}
	var hasChild, hasDesc bool
	first := true
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		p := childPos
		if r.sel.nth && c.Type == html.ElementNode {
			childPos.pos++
			p.pos = childPos.pos
			if typeSeen != nil {
				typeSeen[c.Data]++
				p.posType, p.totalType = typeSeen[c.Data], typeTotal[c.Data]
			}
		}
		var pv, ea []uint64
		if !first {
			pv, ea = sibPrev, sibEarlier
		}
		cm, cmatch, cdesc := r.visit(c, mask, pv, ea, p, depth+1, top)
		first = false
		for i := range cm {
			sibEarlier[i] |= cm[i]
		}
		if c.Type != html.TextNode && c.Type != html.CommentNode {
			copy(sibPrev, cm)
		}
		hasChild = hasChild || cmatch
		hasDesc = hasDesc || cmatch || cdesc
	}
	for c := range mask {
		for m := mask[c]; m != 0; m &= m - 1 {
			j := trailingZeros(m)
			r.cnt[c][j]--
			if r.cnt[c][j] == 0 {
				r.anc[c] &^= 1 << j
			}
		}
	}
	if !top {
		r.res[g.id][idx] = match
		if g.needHas {
			r.has[g.id][idx] = hasDesc
		}
		if g.needCh {
			r.hasCh[g.id][idx] = hasChild
		}
	}
	return mask, match, hasDesc
}

func trailingZeros(m uint64) int {
	n := 0
	for m&1 == 0 {
		m >>= 1
		n++
	}
	return n
}

// matchStep reports whether n matches a compound selector.
func (r *cssRun) matchStep(st *cssStep, n *html.Node, idx int, pos positions, depth int) bool {
	if len(st.parts) == 0 {
		return n.Type == html.ElementNode
	}
	for i := range st.parts {
		if !r.matchSimple(&st.parts[i], n, idx, pos, depth) {
			return false
		}
	}
	return true
}

func (r *cssRun) matchSimple(s *cssSimple, n *html.Node, idx int, pos positions, depth int) bool {
	switch s.kind {
	case kindPlain:
		return s.m.Match(n)
	case kindNot:
		return n.Type == html.ElementNode && !r.res[s.g.id][idx]
	case kindHas:
		return n.Type == html.ElementNode && r.has[s.g.id][idx]
	case kindHasChild:
		return n.Type == html.ElementNode && r.hasCh[s.g.id][idx]
	case kindNth, kindOnly:
		if n.Type != html.ElementNode || !pos.parent {
			return false
		}
		p, total := pos.pos, pos.total
		if s.ofType {
			p, total = pos.posType, pos.totalType
		}
		if s.kind == kindOnly {
			return total == 1
		}
		if s.last {
			p = total - p + 1
		}
		if s.a == 0 {
			return p == s.b
		}
		p -= s.b
		return p%s.a == 0 && p/s.a >= 0
	case kindContains, kindMatches:
		var b strings.Builder
		cssText(&b, n)
		r.spend(1 + int64(b.Len())/16)
		if s.kind == kindContains {
			return strings.Contains(strings.ToLower(b.String()), s.text)
		}
		return s.rx.MatchString(b.String())
	case kindAncestor:
		r.spend(1 + int64(depth))
		return s.m.Match(n)
	}
	return false
}

func (r *cssRun) spend(units int64) {
	r.budget -= units
	if r.budget < 0 {
		panic(costPanic{})
	}
}

// cssText writes the text of n as cascadia's :contains() reads it.
func cssText(b *strings.Builder, n *html.Node) {
	switch n.Type {
	case html.TextNode:
		b.WriteString(n.Data)
	case html.ElementNode:
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			cssText(b, c)
		}
	}
}
