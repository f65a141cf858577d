package extractor

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/andybalholm/cascadia"
	"github.com/antchfx/htmlquery"
	"github.com/antchfx/xpath"
	"golang.org/x/net/html"

	"github.com/dynamo-rss/dynamo/extractor/cssmatch"
	"github.com/dynamo-rss/dynamo/extractor/xpathcall"
)

// SelectSpec is a resource's select block as written (SELECTORS.md): where
// a page nobody annotated keeps its items. Item is required; the other
// fields are relative to each item; Channel's are relative to the page.
// The zero value means "no selectors" (the page's annotations are used).
type SelectSpec struct {
	// From names another source of items than selectors: "schema.org",
	// the page's JSON-LD and microdata items (see schemaorg.go). With
	// From, Item and the item fields stay empty.
	From        string            `yaml:"from,omitempty" json:"from,omitempty"`
	Item        string            `yaml:"item,omitempty" json:"item,omitempty"`
	Title       string            `yaml:"title,omitempty" json:"title,omitempty"`
	Link        string            `yaml:"link,omitempty" json:"link,omitempty"`
	Description string            `yaml:"description,omitempty" json:"description,omitempty"`
	Date        string            `yaml:"date,omitempty" json:"date,omitempty"`
	Image       string            `yaml:"image,omitempty" json:"image,omitempty"`
	ID          string            `yaml:"id,omitempty" json:"id,omitempty"`
	Channel     ChannelSelectSpec `yaml:"channel,omitzero" json:"channel,omitzero"`
	// Mapped are the fields written as mappings (select lists, join,
	// pattern, format; see [FieldSpec]), by name: "title", "date",
	// "channel.title". Such a field's string above is empty. nil: none.
	// A block is read and written (YAML, JSON) with each field a selector
	// or a mapping, as SELECTORS.md shows (selectfield.go).
	Mapped map[string]FieldSpec `yaml:"-" json:"-"`
}

// ChannelSelectSpec are the channel's selectors, relative to the page.
// Title defaults to the page's <title>, Link to the page's URL.
type ChannelSelectSpec struct {
	Title       string `yaml:"title,omitempty" json:"title,omitempty"`
	Link        string `yaml:"link,omitempty" json:"link,omitempty"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	Image       string `yaml:"image,omitempty" json:"image,omitempty"`
}

// IsZero reports whether no selector is set: the resource uses annotations.
func (s SelectSpec) IsZero() bool { return s.Equal(SelectSpec{}) }

// IsZero reports whether no channel selector is set.
func (c ChannelSelectSpec) IsZero() bool { return c == ChannelSelectSpec{} }

// SelectorError is an invalid selector of a select block. Field is its key
// as written, dotted under channel: "title", "channel.description".
type SelectorError struct {
	Field    string
	Selector string
	Err      error
}

func (e *SelectorError) Error() string {
	if e.Selector == "" {
		return fmt.Sprintf("select.%s: %v", e.Field, e.Err)
	}
	return fmt.Sprintf("select.%s %q: %v", e.Field, e.Selector, e.Err)
}

func (e *SelectorError) Unwrap() error { return e.Err }

// fieldKind names the selectors of a [Selectors], in the order of the block.
type fieldKind int

const (
	selTitle fieldKind = iota
	selLink
	selDescription
	selDate
	selImage
	selID
	selChannelTitle
	selChannelLink
	selChannelDescription
	selChannelImage
	numSel
)

var selNames = [numSel]string{"title", "link", "description", "date", "image", "id",
	"channel.title", "channel.link", "channel.description", "channel.image"}

// Selectors is a compiled select block: compile once with
// [CompileSelectors], use for every poll. It is immutable and safe for
// concurrent use.
type Selectors struct {
	spec   SelectSpec
	from   string // SchemaOrg, or "" for the item selector
	item   *selector
	fields [numSel]*fieldSel // nil: not set
}

// CompileSelectors checks and compiles every selector of spec. The error
// joins one [*SelectorError] per invalid selector (errors.As finds the
// first); item is required.
func CompileSelectors(spec SelectSpec) (*Selectors, error) {
	s := &Selectors{spec: spec}
	var errs []error
	if spec.From != "" {
		errs = append(errs, s.compileFrom(spec)...)
	} else if strings.TrimSpace(spec.Item) == "" {
		errs = append(errs, &SelectorError{Field: "item", Err: errors.New("required: the selector of the page's items")})
	} else if sel, err := compileSelector(spec.Item); err != nil {
		errs = append(errs, &SelectorError{Field: "item", Selector: spec.Item, Err: err})
	} else if sel.attr != "" || sel.empty {
		errs = append(errs, &SelectorError{Field: "item", Selector: spec.Item, Err: errors.New("must select elements, not an attribute")})
	} else {
		s.item = sel
	}
	src := [numSel]string{spec.Title, spec.Link, spec.Description, spec.Date, spec.Image, spec.ID,
		spec.Channel.Title, spec.Channel.Link, spec.Channel.Description, spec.Channel.Image}
	for k, v := range src {
		if m, ok := spec.Mapped[selNames[k]]; ok {
			f, ferrs := compileField(selNames[k], m)
			errs = append(errs, ferrs...)
			if v != "" {
				errs = append(errs, &SelectorError{Field: selNames[k], Err: errors.New("given both as a selector and as a mapping")})
			}
			s.fields[k] = f
			continue
		}
		if v == "" {
			continue
		}
		sel, err := compileSelector(v)
		if err != nil {
			errs = append(errs, &SelectorError{Field: selNames[k], Selector: v, Err: err})
			continue
		}
		s.fields[k] = &fieldSel{sels: []*selector{sel}}
	}
	for name := range spec.Mapped {
		if !slices.Contains(selNames[:], name) {
			errs = append(errs, &SelectorError{Field: name, Err: errors.New("not a field of a select block")})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// Spec returns the block the selectors were compiled from.
func (s *Selectors) Spec() SelectSpec { return s.spec }

// selector is one compiled selector: CSS or XPath, and the attribute to
// take instead of the matched element's content.
type selector struct {
	src   string
	css   *cssmatch.Selector // evaluated by package cssmatch, linear in the page
	xp    *xpath.Expr
	call  *xpathcall.Call // xp is a call of a string function, evaluated by package xpathcall
	attr  string          // lower case; "" for the element itself
	empty bool            // only "@attr": the attribute of the context element itself
}

// maxSelectorLen bounds a selector's source, which comes from configuration
// or a preview request.
const maxSelectorLen = 4096

// compileSelector parses "CSS [@attr]", "xpath:EXPR [@attr]" or "@attr".
func compileSelector(src string) (*selector, error) {
	s := strings.TrimSpace(src)
	if len(s) > maxSelectorLen {
		return nil, fmt.Errorf("longer than %d bytes", maxSelectorLen)
	}
	sel := &selector{src: s}
	if i := strings.LastIndexAny(s, " \t\r\n"); i >= 0 || strings.HasPrefix(s, "@") {
		last := s[i+1:]
		if name, ok := strings.CutPrefix(last, "@"); ok && isAttrName(name) {
			sel.attr = strings.ToLower(name)
			s = strings.TrimSpace(s[:i+1])
		}
	}
	if s == "" {
		if sel.attr == "" {
			return nil, errors.New("empty selector")
		}
		sel.empty = true
		return sel, nil
	}
	if expr, ok := strings.CutPrefix(s, "xpath:"); ok {
		expr = strings.TrimSpace(expr)
		if expr == "" {
			return nil, errors.New("empty XPath expression")
		}
		xp, err := xpathcall.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("invalid XPath: %w", err)
		}
		call, _, err := xpathcall.Parse(expr)
		if err != nil {
			return nil, fmt.Errorf("invalid XPath: %w", err)
		}
		sel.xp, sel.call = xp, call
		return sel, nil
	}
	group, err := cascadia.ParseGroup(s)
	if err != nil {
		return nil, fmt.Errorf("invalid CSS selector: %w", err)
	}
	css, err := cssmatch.Compile(s, group)
	if err != nil {
		return nil, err
	}
	sel.css = css
	return sel, nil
}

// isAttrName reports whether s can be an HTML attribute name in a selector.
func isAttrName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == ':', c == '.':
		default:
			return false
		}
	}
	return true
}

// match is what a selector found: an element (whose content is the value)
// or a string (an attribute's value, or what an XPath expression computed).
type match struct {
	n   *html.Node
	s   string
	str bool
	el  *html.Node // for a string: the node it came from (its position)
}

func (m match) found() bool { return m.n != nil || m.str }

// node is the node the match is or came from.
func (m match) node() *html.Node {
	if m.n != nil {
		return m.n
	}
	return m.el
}

// elements returns the elements the selector matches under ctx, in
// document order (the item selector; attributes are not allowed there).
// The error is a selector that costs too much on this page (cssmatch.ErrCost).
func (s *selector) elements(ec *evalCache, doc, ctx *html.Node) ([]*html.Node, error) {
	var out []*html.Node
	if s.css != nil {
		err := s.cssEach(ec, ctx, false, func(n *html.Node) bool {
			out = append(out, n)
			return true
		})
		return out, err
	}
	_, _, err := s.eachXPath(ec, doc, ctx, func(nav *htmlquery.NodeNavigator) bool {
		if nav.NodeType() == xpath.ElementNode {
			out = append(out, nav.Current())
		}
		return true
	})
	return out, err
}

// first returns the first match of the selector under ctx, as firstIn
// with nothing cached; a selector that costs too much matches nothing.
func (s *selector) first(doc, ctx *html.Node) match {
	m, _ := s.firstIn(nil, doc, ctx)
	return m
}

// firstIn returns the first match of the selector under ctx (ctx itself
// for "@attr"): with an attribute, the first matched element that has it.
func (s *selector) firstIn(ec *evalCache, doc, ctx *html.Node) (match, error) {
	if s.empty {
		return attrMatch(ctx, s.attr), nil
	}
	if s.css != nil {
		var m match
		err := s.cssEach(ec, ctx, true, func(n *html.Node) bool {
			if s.attr == "" {
				m = match{n: n}
				return false
			}
			m = attrMatch(n, s.attr)
			return !m.found()
		})
		return m, err
	}
	var m match
	scalar, ok, err := s.eachXPath(ec, doc, ctx, func(nav *htmlquery.NodeNavigator) bool {
		m = s.navMatch(nav)
		return !m.found()
	})
	if err != nil {
		return match{}, err
	}
	if ok && s.attr == "" {
		return match{s: scalar, str: true, el: ctx}, nil
	}
	return m, nil
}

// navMatch is what an XPath node gives: an attribute's, a text's or a
// comment's value, or an element (with the selector's attribute, that
// attribute's value); nothing when it does not apply.
func (s *selector) navMatch(nav *htmlquery.NodeNavigator) match {
	switch nav.NodeType() {
	case xpath.AttributeNode, xpath.TextNode, xpath.CommentNode:
		if s.attr == "" {
			return match{s: nav.Value(), str: true, el: nav.Current()}
		}
	case xpath.ElementNode, xpath.RootNode:
		if s.attr == "" {
			return match{n: nav.Current()}
		}
		return attrMatch(nav.Current(), s.attr)
	}
	return match{}
}

// all returns every match of the selector under ctx, in document order:
// elements, or with an attribute the values of the matched elements that
// have it, or what an XPath expression computed.
func (s *selector) all(ec *evalCache, doc, ctx *html.Node) ([]match, error) {
	if s.empty {
		if m := attrMatch(ctx, s.attr); m.found() {
			return []match{m}, nil
		}
		return nil, nil
	}
	var out []match
	if s.css != nil {
		err := s.cssEach(ec, ctx, false, func(n *html.Node) bool {
			if s.attr == "" {
				out = append(out, match{n: n})
			} else if m := attrMatch(n, s.attr); m.found() {
				out = append(out, m)
			}
			return true
		})
		return out, err
	}
	scalar, ok, err := s.eachXPath(ec, doc, ctx, func(nav *htmlquery.NodeNavigator) bool {
		if m := s.navMatch(nav); m.found() {
			out = append(out, m)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if ok && s.attr == "" {
		return []match{{s: scalar, str: true, el: ctx}}, nil
	}
	return out, nil
}

// queryFirst calls f with the descendants of n that match m, in document
// order, until f returns false: the elements only, or with all every
// node (as cascadia.QueryAll finds them, text nodes for :contains()).
func queryFirst(n *html.Node, m cascadia.Matcher, all bool, f func(*html.Node) bool) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if (all || c.Type == html.ElementNode) && m.Match(c) && !f(c) {
			return false
		}
		if !queryFirst(c, m, all, f) {
			return false
		}
	}
	return true
}

func attrMatch(n *html.Node, name string) match {
	if n == nil || n.Type != html.ElementNode {
		return match{}
	}
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == name {
			return match{s: a.Val, str: true, el: n}
		}
	}
	return match{}
}

// eachXPath evaluates the expression with ctx as the context node (in the
// whole document, so absolute paths and the axes that leave the item work)
// and calls f on each node of a node-set until it returns false. An
// expression that computes a string, number or boolean returns it instead,
// with ok true.
//
// Every move of the library's navigator is counted against the selector's
// budget on this page (see evalCache): beyond it the evaluation stops
// with an error wrapping cssmatch.ErrCost.
func (s *selector) eachXPath(ec *evalCache, doc, ctx *html.Node, f func(*htmlquery.NodeNavigator) bool) (scalar string, ok bool, err error) {
	if ec == nil {
		ec = newEvalCache()
	}
	b := ec.xpathBudget(s, doc)
	if b.exceeded() {
		return "", false, cssmatch.CostError(b.limit)
	}
	if s.call != nil {
		v := s.call.Eval(ctx, func() xpath.NodeNavigator { return budgetNav(doc, ctx, b) })
		if b.exceeded() {
			return "", false, cssmatch.CostError(b.limit)
		}
		return v, true, nil
	}
	nav := budgetNav(doc, ctx, b)
	defer func() {
		if r := recover(); r != nil { // the library panics on some type errors at run time
			scalar, ok = "", false
			if b.exceeded() {
				err = cssmatch.CostError(b.limit)
			}
		}
	}()
	switch v := s.xp.Evaluate(nav).(type) {
	case *xpath.NodeIterator:
		for v.MoveNext() {
			n, isNav := unwrapNav(v.Current())
			if isNav && !f(n) {
				break
			}
		}
		return "", false, nil
	case string:
		return v, true, nil
	case float64:
		return xpathcall.Number(v), true, nil
	case bool:
		if v {
			return "true", true, nil
		}
		return "false", true, nil
	}
	return "", false, nil
}

// navigatorAt returns a navigator rooted at doc and positioned on n (a
// navigator created on n would take n for the root of the document).
func navigatorAt(doc, n *html.Node) *htmlquery.NodeNavigator {
	nav := htmlquery.CreateXPathNavigator(doc)
	if n == doc || n == nil {
		return nav
	}
	var path []*html.Node
	for p := n; p != nil && p != doc; p = p.Parent {
		path = append(path, p)
	}
	for i := len(path) - 1; i >= 0; i-- {
		if !nav.MoveToChild() {
			return htmlquery.CreateXPathNavigator(n)
		}
		for nav.Current() != path[i] {
			if !nav.MoveToNext() {
				return htmlquery.CreateXPathNavigator(n) // n is not under doc: its own tree
			}
		}
	}
	return nav
}
