// Package xpathcall evaluates an XPath expression whose outermost part is
// a call of a string function (concat, normalize-space, substring-after…)
// as XPath 1.0 says: every argument from the same context node. The
// extractor's field selectors use it (see [Call]).
package xpathcall

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/antchfx/htmlquery"
	"github.com/antchfx/xpath"
	"golang.org/x/net/html"
)

// Call is an XPath expression whose outermost part is a call of a
// string function (concat, normalize-space, substring-after…), evaluated
// here rather than by github.com/antchfx/xpath. That library evaluates a
// function's arguments one after the other on one navigator, which a
// predicate moves and does not move back: in concat(.//span[@class='d'],
// ' ', .//span[@class='t']) the second path starts from the first one's
// span, finds nothing, and the date loses its time. XPath 1.0 evaluates
// every argument with the same context node, so here each argument that is
// not a literal or another such call is compiled apart and evaluated on a
// fresh navigator at the context node.
type Call struct {
	name string
	args []arg
}

// arg is one argument: a literal, a nested call, or any other
// expression.
type arg struct {
	lit  *string
	call *Call
	expr *xpath.Expr
}

// stringFuncs are the functions evaluated here, with their arity
// (max -1: any number).
var stringFuncs = map[string]struct{ min, max int }{
	"concat":           {2, -1},
	"normalize-space":  {0, 1},
	"substring-after":  {2, 2},
	"substring-before": {2, 2},
	"substring":        {2, 3},
	"translate":        {3, 3},
	"string":           {0, 1},
	"contains":         {2, 2},
	"starts-with":      {2, 2},
}

// Parse reads expr as a call of one of stringFuncs; ok is
// false when it is anything else (the library evaluates it then). Each
// argument is compiled, so an error is a real one.
func Parse(expr string) (c *Call, ok bool, err error) {
	expr = strings.TrimSpace(expr)
	open := strings.IndexByte(expr, '(')
	if open < 0 || !strings.HasSuffix(expr, ")") {
		return nil, false, nil
	}
	name := strings.TrimSpace(expr[:open])
	arity, known := stringFuncs[name]
	if !known {
		return nil, false, nil
	}
	parts, whole := splitXPathArgs(expr[open+1:])
	if !whole {
		return nil, false, nil // "concat(a, b) = 'x'": the call is not the whole expression
	}
	if len(parts) < arity.min || arity.max >= 0 && len(parts) > arity.max {
		return nil, false, fmt.Errorf("%s() takes %s arguments, not %d", name, arityText(arity.min, arity.max), len(parts))
	}
	c = &Call{name: name}
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, false, fmt.Errorf("%s(): an empty argument", name)
		}
		if lit, isLit := xpathLiteral(p); isLit {
			c.args = append(c.args, arg{lit: &lit})
			continue
		}
		inner, isCall, err := Parse(p)
		if err != nil {
			return nil, false, err
		}
		if isCall {
			c.args = append(c.args, arg{call: inner})
			continue
		}
		xp, err := Compile(p)
		if err != nil {
			return nil, false, err
		}
		c.args = append(c.args, arg{expr: xp})
	}
	return c, true, nil
}

func arityText(min, max int) string {
	switch {
	case max < 0:
		return fmt.Sprintf("at least %d", min)
	case min == max:
		return strconv.Itoa(min)
	}
	return fmt.Sprintf("%d to %d", min, max)
}

// splitXPathArgs splits the text after a call's "(" at its top-level
// commas, up to the ")" that closes the call; whole reports that this ")"
// ends s. Literals, brackets and parentheses nest.
func splitXPathArgs(s string) (parts []string, whole bool) {
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, false
			}
			i += j + 1
		case '(', '[':
			depth++
		case ']':
			depth--
		case ')':
			if depth == 0 {
				if strings.TrimSpace(s[start:i]) != "" || len(parts) > 0 {
					parts = append(parts, s[start:i])
				}
				return parts, i == len(s)-1
			}
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return nil, false
}

// xpathLiteral reads a string literal: '…' or "…".
func xpathLiteral(s string) (string, bool) {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] && !strings.ContainsRune(s[1:len(s)-1], rune(s[0])) {
		return s[1 : len(s)-1], true
	}
	return "", false
}

// Eval evaluates the call with ctx as the context node; nav gives a fresh
// navigator positioned on ctx (in ctx's whole document) for each argument
// that is a path, so that the caller can count its moves.
func (c *Call) Eval(ctx *html.Node, nav func() xpath.NodeNavigator) string {
	args := make([]string, len(c.args))
	for i, a := range c.args {
		args[i] = a.eval(ctx, nav)
	}
	switch c.name {
	case "concat":
		return strings.Join(args, "")
	case "normalize-space":
		if len(args) == 0 {
			return strings.Join(strings.Fields(nodeString(ctx)), " ")
		}
		return strings.Join(strings.Fields(args[0]), " ")
	case "string":
		if len(args) == 0 {
			return nodeString(ctx)
		}
		return args[0]
	case "substring-after":
		if _, after, ok := strings.Cut(args[0], args[1]); ok {
			return after
		}
		return ""
	case "substring-before":
		if before, _, ok := strings.Cut(args[0], args[1]); ok {
			return before
		}
		return ""
	case "substring":
		return xpathSubstring(args)
	case "translate":
		return xpathTranslate(args[0], args[1], args[2])
	case "contains":
		return strconv.FormatBool(strings.Contains(args[0], args[1]))
	case "starts-with":
		return strconv.FormatBool(strings.HasPrefix(args[0], args[1]))
	}
	return ""
}

// eval returns the argument's string value (XPath's string()): a node-set
// gives its first node's string value.
func (a arg) eval(ctx *html.Node, nav func() xpath.NodeNavigator) (s string) {
	switch {
	case a.lit != nil:
		return *a.lit
	case a.call != nil:
		return a.call.Eval(ctx, nav)
	}
	defer func() {
		if recover() != nil { // the library panics on some type errors at run time
			s = ""
		}
	}()
	switch v := a.expr.Evaluate(nav()).(type) { // nav may count and bound its moves
	case *xpath.NodeIterator:
		if v.MoveNext() {
			return v.Current().Value()
		}
		return ""
	case string:
		return v
	case float64:
		return Number(v)
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// nodeString is the string value of a node: the text it contains.
func nodeString(n *html.Node) string {
	if n == nil {
		return ""
	}
	return htmlquery.CreateXPathNavigator(n).Value()
}

// xpathSubstring is XPath 1.0's substring(s, start, length?): the
// characters whose 1-based position p has round(start) <= p <
// round(start)+round(length).
func xpathSubstring(args []string) string {
	num := func(s string) float64 {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return math.NaN()
		}
		return f
	}
	start := xpathRound(num(args[1]))
	end := math.Inf(1)
	if len(args) == 3 {
		end = start + xpathRound(num(args[2]))
	}
	if math.IsNaN(start) || math.IsNaN(end) {
		return ""
	}
	var b strings.Builder
	p := 1.0
	for _, r := range args[0] {
		if p >= start && p < end {
			b.WriteRune(r)
		}
		p++
	}
	return b.String()
}

// xpathRound is XPath's round(): the closest integer, halves up.
func xpathRound(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return f
	}
	return math.Floor(f + 0.5)
}

// xpathTranslate is XPath 1.0's translate(s, from, to).
func xpathTranslate(s, from, to string) string {
	m := make(map[rune]rune, utf8.RuneCountInString(from))
	toR := []rune(to)
	i := 0
	for _, r := range from {
		if _, seen := m[r]; !seen {
			if i < len(toR) {
				m[r] = toR[i]
			} else {
				m[r] = -1
			}
		}
		i++
	}
	var b strings.Builder
	for _, r := range s {
		if t, ok := m[r]; ok {
			if t >= 0 {
				b.WriteRune(t)
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Number formats a number as XPath's string() does for the usual cases.
func Number(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%g", v)
}

// Compile compiles an expression with github.com/antchfx/xpath,
// turning the library's panics on hostile input into errors.
func Compile(expr string) (xp *xpath.Expr, err error) {
	defer func() {
		if r := recover(); r != nil {
			xp, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return xpath.Compile(expr)
}
