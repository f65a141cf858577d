package api

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/antchfx/xmlquery"
	"github.com/antchfx/xpath"

	"github.com/dynamo-rss/dynamo/schema"
)

// Bounds of xpath evaluation for one request.
const (
	maxXPathItems = 10000           // items evaluated at most
	xpathTimeout  = 2 * time.Second // total evaluation time
)

// selectItems returns, in order, the indexes of the items that match the
// keyword terms (when applyTerms; storage may have applied them already) and
// every xpath expression, at most limit of them (0: no limit).
func (q *feedQuery) selectItems(ctx context.Context, items []schema.Item, applyTerms bool, limit int) ([]int, error) {
	var xctx context.Context
	timeout := q.xpathTimeout
	if timeout <= 0 {
		timeout = xpathTimeout
	}
	if len(q.xpaths) > 0 {
		var cancel context.CancelFunc
		xctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	size := len(items)
	if limit > 0 {
		size = min(size, limit)
	}
	keep := make([]int, 0, size)
	evaluated := 0
	for i := range items {
		if limit > 0 && len(keep) == limit {
			break
		}
		it := &items[i]
		if applyTerms && !q.terms.Match(it.Title, it.Link, it.Description) {
			continue
		}
		if len(q.xpaths) > 0 {
			if evaluated == maxXPathItems {
				return nil, errBadParam("xpath", "xpath was evaluated on %d items without finding enough matches; narrow the request with index, max or keyword terms", maxXPathItems)
			}
			if err := xctx.Err(); err != nil {
				if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
					return nil, errBadParam("xpath", "xpath evaluation took longer than %s; use a simpler expression or narrow the request with index, max or keyword terms", timeout)
				}
				return nil, fmt.Errorf("xpath: %w", err)
			}
			evaluated++
			ok, err := q.matchXPath(it)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		keep = append(keep, i)
	}
	return keep, nil
}

// matchXPath evaluates every expression with the item's XMLData <item> element
// as context node; all must be true.
func (q *feedQuery) matchXPath(it *schema.Item) (bool, error) {
	var buf bytes.Buffer
	if err := xml.NewEncoder(&buf).EncodeElement(it, xml.StartElement{Name: xml.Name{Local: "item"}}); err != nil {
		return false, fmt.Errorf("xpath: marshal item %q: %w", it.ID, err)
	}
	doc, err := xmlquery.Parse(&buf)
	if err != nil {
		return false, fmt.Errorf("xpath: parse item %q: %w", it.ID, err)
	}
	node := doc.FirstChild
	for node != nil && node.Type != xmlquery.ElementNode {
		node = node.NextSibling
	}
	if node == nil {
		return false, fmt.Errorf("xpath: item %q has no element", it.ID)
	}
	for i, expr := range q.xpaths {
		ok, err := evalBool(expr, node)
		if err != nil {
			return false, errBadParam("xpath", "xpath %q cannot be evaluated: %v", q.xsrc[i], err)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// evalBool evaluates expr at node and converts the result as XPath's boolean() does.
func evalBool(expr *xpath.Expr, node *xmlquery.Node) (ok bool, err error) {
	defer func() { // antchfx/xpath panics on some type errors at evaluation
		if r := recover(); r != nil {
			ok, err = false, errXPathPanic{r}
		}
	}()
	switch v := expr.Evaluate(xmlquery.CreateXPathNavigator(node)).(type) {
	case bool:
		return v, nil
	case float64:
		return v != 0 && !math.IsNaN(v), nil
	case string:
		return v != "", nil
	case *xpath.NodeIterator:
		return v.MoveNext(), nil
	default:
		return false, fmt.Errorf("unexpected result %T", v)
	}
}
