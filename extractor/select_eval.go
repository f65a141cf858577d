package extractor

import (
	"github.com/antchfx/htmlquery"
	"github.com/antchfx/xpath"
	"golang.org/x/net/html"

	"github.com/dynamo-rss/dynamo/extractor/cssmatch"
)

// evalCache holds what one extraction's selectors computed on its page:
// each CSS selector that needs a walk of the page is evaluated once, on the
// whole tree, and every item reads the result; each XPath selector has one
// budget of navigator moves for all its evaluations. A nil *evalCache
// evaluates afresh at every call. Not safe for concurrent use.
type evalCache struct {
	nodes map[*html.Node]int64 // nodes of a tree, by its root
	css   map[cssKey]*cssResult
	xp    map[*selector]*xpBudget
}

type cssKey struct {
	sel  *cssmatch.Selector
	root *html.Node
}

// cssResult is a selector's matches on a whole tree, in document order.
type cssResult struct {
	list []*html.Node
	set  map[*html.Node]struct{} // built on first need
	err  error
}

func newEvalCache() *evalCache {
	return &evalCache{nodes: map[*html.Node]int64{}, css: map[cssKey]*cssResult{}, xp: map[*selector]*xpBudget{}}
}

// Budgets: a selector may take this many units per node of the page, and
// this many more whatever the page.
const (
	budgetPerNode = 64
	cssBudgetBase = 1 << 20 // text bytes / 16 read by :contains() and :matches()
	xpBudgetBase  = 10_000  // navigator moves
)

// rootOf is the root of n's tree.
func rootOf(n *html.Node) *html.Node {
	for n.Parent != nil {
		n = n.Parent
	}
	return n
}

// countNodes is the number of nodes of root's tree (once per cache).
func (ec *evalCache) countNodes(root *html.Node) int64 {
	if n, ok := ec.nodes[root]; ok {
		return n
	}
	var n int64
	var walk func(*html.Node)
	walk = func(x *html.Node) {
		n++
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	ec.nodes[root] = n
	return n
}

// result evaluates c on the tree of root, once per cache.
func (ec *evalCache) result(c *cssmatch.Selector, root *html.Node) *cssResult {
	k := cssKey{c, root}
	if r, ok := ec.css[k]; ok {
		return r
	}
	var limit int64
	if c.Costly() {
		limit = budgetPerNode*ec.countNodes(root) + cssBudgetBase
	}
	list, err := c.Run(root, limit)
	r := &cssResult{list: list, err: err}
	ec.css[k] = r
	return r
}

// cssEach calls f with the nodes under ctx that the CSS selector matches,
// in document order, until f returns false: as cascadia.QueryAll finds
// them, or the elements only when elementsOnly.
func (s *selector) cssEach(ec *evalCache, ctx *html.Node, elementsOnly bool, f func(*html.Node) bool) error {
	if s.css.FastPath() != nil {
		queryFirst(ctx, s.css.FastPath(), !elementsOnly, f)
		return nil
	}
	if ec == nil {
		ec = newEvalCache()
	}
	root := rootOf(ctx)
	r := ec.result(s.css, root)
	if r.err != nil {
		return r.err
	}
	if ctx == root {
		for _, n := range r.list {
			if n != root && (!elementsOnly || n.Type == html.ElementNode) && !f(n) {
				return nil
			}
		}
		return nil
	}
	if len(r.list) == 0 {
		return nil
	}
	if r.set == nil {
		r.set = make(map[*html.Node]struct{}, len(r.list))
		for _, n := range r.list {
			r.set[n] = struct{}{}
		}
	}
	queryFirst(ctx, inSet(r.set), !elementsOnly, f)
	return nil
}

// inSet matches the nodes of a set.
type inSet map[*html.Node]struct{}

func (s inSet) Match(n *html.Node) bool {
	_, ok := s[n]
	return ok
}

// costPanic aborts an XPath evaluation that exceeded its budget.
type costPanic struct{}

// xpBudget is what an XPath selector may still spend on a page.
type xpBudget struct {
	left, limit int64
}

func (b *xpBudget) spend(units int64) {
	if b == nil {
		return
	}
	b.left -= units
	if b.left < 0 {
		panic(costPanic{})
	}
}

func (b *xpBudget) exceeded() bool { return b != nil && b.left < 0 }

// xpathBudget is the budget of s on the page of doc.
func (ec *evalCache) xpathBudget(s *selector, doc *html.Node) *xpBudget {
	if b, ok := ec.xp[s]; ok {
		return b
	}
	limit := budgetPerNode*ec.countNodes(rootOf(doc)) + xpBudgetBase
	b := &xpBudget{left: limit, limit: limit}
	ec.xp[s] = b
	return b
}

// countingNav is a navigator that spends its budget on every move: any
// XPath expression is then bounded by the budget, the library evaluating
// nothing but through its navigator.
type countingNav struct {
	*htmlquery.NodeNavigator
	b *xpBudget
}

func (c *countingNav) Value() string {
	c.b.spend(1)
	v := c.NodeNavigator.Value()
	c.b.spend(int64(len(v)) / 16)
	return v
}

func (c *countingNav) Copy() xpath.NodeNavigator {
	c.b.spend(1)
	return &countingNav{c.NodeNavigator.Copy().(*htmlquery.NodeNavigator), c.b}
}

func (c *countingNav) MoveToRoot() {
	c.b.spend(1)
	c.NodeNavigator.MoveToRoot()
}

func (c *countingNav) MoveToParent() bool {
	c.b.spend(1)
	return c.NodeNavigator.MoveToParent()
}

func (c *countingNav) MoveToNextAttribute() bool {
	c.b.spend(1)
	return c.NodeNavigator.MoveToNextAttribute()
}

func (c *countingNav) MoveToChild() bool {
	c.b.spend(1)
	return c.NodeNavigator.MoveToChild()
}

func (c *countingNav) MoveToFirst() bool {
	c.b.spend(1)
	return c.NodeNavigator.MoveToFirst()
}

func (c *countingNav) MoveToNext() bool {
	c.b.spend(1)
	return c.NodeNavigator.MoveToNext()
}

func (c *countingNav) MoveToPrevious() bool {
	c.b.spend(1)
	return c.NodeNavigator.MoveToPrevious()
}

func (c *countingNav) MoveTo(other xpath.NodeNavigator) bool {
	c.b.spend(1)
	if o, ok := other.(*countingNav); ok {
		other = o.NodeNavigator
	}
	return c.NodeNavigator.MoveTo(other)
}

// budgetNav is navigatorAt(doc, n) counting its moves against b.
func budgetNav(doc, n *html.Node, b *xpBudget) xpath.NodeNavigator {
	return &countingNav{navigatorAt(doc, n), b}
}

// unwrapNav is the htmlquery navigator of an XPath result.
func unwrapNav(n xpath.NodeNavigator) (*htmlquery.NodeNavigator, bool) {
	switch v := n.(type) {
	case *countingNav:
		return v.NodeNavigator, true
	case *htmlquery.NodeNavigator:
		return v, true
	}
	return nil, false
}
