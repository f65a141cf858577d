package api

import (
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/antchfx/xpath"

	"github.com/dynamo-rss/dynamo/schema"
)

// maxXPathLen bounds the length of an xpath expression.
const maxXPathLen = 2048

// feedQuery is a parsed feed request: what the query string selects, filters
// and asks for, with unknown parameters dropped.
type feedQuery struct {
	index  int          // n-th newest version; 0: none
	max    int          // at most this many items; 0: none
	terms  schema.Terms // keyword terms in query-string order
	xpaths []*xpath.Expr
	xsrc   []string // the xpath sources, for the canonical form
	format string   // explicit type=…; "": negotiate
	// xpathTimeout bounds the evaluation of xpaths; 0: the default
	// (xpathTimeout). Tests on a loaded machine give more.
	xpathTimeout time.Duration
}

// parseFeedQuery reads the raw query string in order, so that repeated
// keyword terms and the op before each keep their meaning. Parameters are
// separated by & or ;. Unknown parameters are ignored (readers add cache
// busters); known ones with a bad value are a 400 naming what is allowed.
// The query is returned by value: a cached feed's answer needs no copy of it
// on the heap.
func parseFeedQuery(raw string) (feedQuery, error) {
	var q feedQuery
	pendingOp := schema.And
	for part := range strings.FieldsFuncSeq(raw, func(r rune) bool { return r == '&' || r == ';' }) {
		rawKey, rawVal, _ := strings.Cut(part, "=")
		key, err := url.QueryUnescape(rawKey)
		if err != nil {
			continue // not a parameter we could know
		}
		switch key {
		case "index", "max", "op", "type", "xpath", "title", "link", "description", "desc":
		default:
			continue
		}
		val, err := url.QueryUnescape(rawVal)
		if err != nil {
			return feedQuery{}, errBadParam(key, "the value of %s is not correctly percent-encoded", key)
		}
		switch key {
		case "index", "max":
			n, ok := positiveInt(val)
			if !ok {
				return feedQuery{}, errBadParam(key, "%s must be a positive integer (1, 2, …), not %q", key, val)
			}
			if key == "index" {
				q.index = n
			} else {
				q.max = n
			}
		case "op":
			op, ok := schema.ParseOp(val)
			if !ok {
				return feedQuery{}, errBadParam(key, "op must be and or or, not %q", val)
			}
			pendingOp = op
		case "type":
			f := strings.ToLower(val)
			if _, ok := formatByName(f); !ok {
				return feedQuery{}, errBadParam(key, "type must be one of %s, not %q", strings.Join(formatNames(), ", "), val)
			}
			q.format = f
		case "xpath":
			if strings.TrimSpace(val) == "" {
				return feedQuery{}, errBadParam(key, "xpath must be a non-empty XPath 1.0 expression")
			}
			if len(val) > maxXPathLen {
				return feedQuery{}, errBadParam(key, "xpath must be at most %d bytes long", maxXPathLen)
			}
			expr, err := compileXPath(val)
			if err != nil {
				return feedQuery{}, errBadParam(key, "xpath %q is not a valid XPath 1.0 expression: %v", val, err)
			}
			q.xpaths = append(q.xpaths, expr)
			q.xsrc = append(q.xsrc, val)
		default: // a keyword term
			field, _ := schema.ParseField(key)
			if val == "" {
				return feedQuery{}, errBadParam(key, "the keyword of %s must not be empty", key)
			}
			q.terms = append(q.terms, schema.NewTerm(pendingOp, field, val))
			pendingOp = schema.And
		}
	}
	return q, nil
}

// compileXPath compiles expr, turning a panic of the compiler into an error.
func compileXPath(expr string) (e *xpath.Expr, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, errXPathPanic{r}
		}
	}()
	return xpath.Compile(expr)
}

// positiveInt accepts only decimal digits (no sign, no spaces) with a value
// ≥ 1. A value too large for an int is still a positive integer: it is
// clamped to math.MaxInt32, far beyond any history or page (so an index past
// the history stays a 404, not a 400).
func positiveInt(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > math.MaxInt32 {
		return math.MaxInt32, true // only digits: the error can only be a range error
	}
	return n, n > 0
}

// canonical returns the query in a normal form: known parameters only, in a
// fixed order (terms keep theirs), with format the resolved one. It is part
// of the ETag and of the cache key, and it is the query of the self link.
func (q *feedQuery) canonical(format string) string {
	return string(q.appendCanonical(nil, format))
}

// appendCanonical appends q.canonical(format) to dst: a cached feed's key is
// built without a string per part.
func (q *feedQuery) appendCanonical(dst []byte, format string) []byte {
	start := len(dst)
	add := func(k, v string) {
		if len(dst) > start {
			dst = append(dst, '&')
		}
		dst = append(dst, k...)
		dst = append(dst, '=')
		dst = append(dst, url.QueryEscape(v)...) // v itself when nothing needs escaping
	}
	addInt := func(k string, n int) {
		if len(dst) > start {
			dst = append(dst, '&')
		}
		dst = append(dst, k...)
		dst = append(dst, '=')
		dst = strconv.AppendInt(dst, int64(n), 10)
	}
	if q.index > 0 {
		addInt("index", q.index)
	}
	if q.max > 0 {
		addInt("max", q.max)
	}
	for i, t := range q.terms {
		if i > 0 {
			add("op", t.Op.String())
		}
		add(t.Field.String(), t.Value)
	}
	for _, x := range q.xsrc {
		add("xpath", x)
	}
	if format != "" {
		add("type", format)
	}
	return dst
}

type errXPathPanic struct{ v any }

func (e errXPathPanic) Error() string {
	return "xpath: internal error: " + strings.TrimSpace(fmtAny(e.v))
}

func fmtAny(v any) string {
	switch x := v.(type) {
	case error:
		return x.Error()
	case string:
		return x
	}
	return "unexpected panic"
}
