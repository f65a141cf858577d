package config

// Bounds on what a document may cost before the YAML library reads it
// (API.md, Security promises): goccy/go-yaml has no depth option for its
// parser, and its cost grows with the square of the nesting (every node
// keeps its path), so nesting is measured here first, in one pass over
// the bytes; and aliases, which the library follows, may not expand a
// document beyond a few times its size.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// MaxDepth is how deeply a YAML or JSON document may nest collections
// (mappings, sequences, JSON objects and arrays), the root counting as
// one. A configuration needs 7 at most (resources, an entry, select, a
// field, its mapping, its list); a deeper document is refused before it is
// parsed.
const MaxDepth = 64

// maxPathSegments bounds the field path shown for a document nested too
// deeply: the first keys say where; the rest would be [0][0][0]….
const maxPathSegments = 8

// errTooDeep words the nesting problem, for people.
var errTooDeep = fmt.Errorf("nested deeper than %d levels: mappings, lists, {…} and […] are read at most %d inside one another, and a resource or a select block needs fewer than 10; remove the extra nesting", MaxDepth, MaxDepth)

// level is one open collection of a document being scanned.
type level struct {
	seq    bool
	flow   bool
	indent int    // a block collection's column (of its keys or dashes)
	key    string // a mapping's current key
	idx    int    // a sequence's current entry
}

// nestingProblem reports a document nested deeper than [MaxDepth], at
// the first collection past the bound: its line, column and field path.
// It reads data once, in time linear in its length, without parsing it:
// JSON with a token scan, YAML by its brackets, indentation, dashes and
// question marks, skipping quoted strings, comments and block scalars.
// A malformed document is left to the parser, which then reads a
// document whose nesting is bounded.
func nestingProblem(data []byte) *FieldError {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		if fe, isJSON := jsonNesting(data); isJSON {
			return fe
		}
	}
	s := yamlScan{data: data}
	return s.scan()
}

// CheckNesting refuses a YAML or JSON document nested deeper than
// [MaxDepth] with a [*FieldError] naming the first collection past the
// bound (its field path, line and column); nil otherwise. It takes time
// linear in len(data) and parses nothing, so a request body can be checked
// before any parser reads it. [Parse], [ParseResource], [DecodeResource]
// and [ParseSelect] check their input with it.
func CheckNesting(data []byte) error {
	if fe := nestingProblem(data); fe != nil {
		return fe
	}
	return nil
}

// tooDeep is the problem of a collection opened at off under the levels.
func tooDeep(data []byte, off int, levels []level) *FieldError {
	var b strings.Builder
	b.WriteString("$")
	for i, l := range levels {
		if i == maxPathSegments {
			b.WriteString("…")
			break
		}
		if l.seq {
			b.WriteString("[" + strconv.Itoa(l.idx) + "]")
			continue
		}
		key := l.key
		if len(key) > 40 {
			key = key[:40] + "…"
		}
		b.WriteString("." + key)
	}
	line, col := lineCol(data, off)
	return &FieldError{Path: b.String(), Line: line, Col: col, Err: errTooDeep}
}

// jsonNesting measures a JSON document with a token scan; isJSON is false
// when data is not JSON (a YAML flow collection, say) before the bound.
func jsonNesting(data []byte) (fe *FieldError, isJSON bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []level
	wantKey := false // the next string of an object is a key
	value := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].seq {
				stack[n-1].idx++
			} else {
				wantKey = true
			}
		}
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil, true
		}
		if err != nil {
			return nil, false
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '[', '{':
				if len(stack) == MaxDepth {
					return tooDeep(data, int(dec.InputOffset())-1, stack), true
				}
				stack = append(stack, level{seq: t == '['})
				wantKey = t == '{'
			default:
				stack = stack[:len(stack)-1]
				value()
			}
		case string:
			if wantKey {
				stack[len(stack)-1].key, wantKey = t, false
				continue
			}
			value()
		default:
			value()
		}
	}
}

// yamlScan measures the nesting of a YAML document (JSON included) in one
// pass. Block collections open at a column and close when a line comes
// back to it; flow collections open and close with brackets.
type yamlScan struct {
	data      []byte
	p         int // the byte being read
	lineStart int // the offset of its line
	stack     []level
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func isEOL(c byte) bool { return c == '\n' || c == '\r' }

// blankAfter reports whether the byte after i ends a token (white space,
// a line's end, the document's end).
func (s *yamlScan) blankAfter(i int) bool {
	return i+1 >= len(s.data) || isBlank(s.data[i+1]) || isEOL(s.data[i+1])
}

// push opens a collection at off.
func (s *yamlScan) push(off int, l level) *FieldError {
	if len(s.stack) == MaxDepth {
		return tooDeep(s.data, off, s.stack)
	}
	s.stack = append(s.stack, l)
	return nil
}

// top is the innermost open collection (nil at the root).
func (s *yamlScan) top() *level {
	if len(s.stack) == 0 {
		return nil
	}
	return &s.stack[len(s.stack)-1]
}

// skipSpaces moves past blanks on the line.
func (s *yamlScan) skipSpaces() {
	for s.p < len(s.data) && isBlank(s.data[s.p]) {
		s.p++
	}
}

// nextLine moves to the start of the next line.
func (s *yamlScan) nextLine() {
	for s.p < len(s.data) && s.data[s.p] != '\n' {
		s.p++
	}
	if s.p < len(s.data) {
		s.p++
	}
	s.lineStart = s.p
}

func (s *yamlScan) scan() *FieldError {
	scalarAbove := -2 // inside a block scalar: its lines are indented more than this
	for s.p < len(s.data) {
		start := s.p
		for s.p < len(s.data) && s.data[s.p] == ' ' {
			s.p++
		}
		ind := s.p - start
		if s.p >= len(s.data) || isEOL(s.data[s.p]) {
			s.nextLine() // a blank line
			continue
		}
		if scalarAbove > -2 {
			if ind > scalarAbove {
				s.nextLine()
				continue
			}
			scalarAbove = -2
		}
		c := s.data[s.p]
		switch {
		case c == '#':
			s.nextLine()
			continue
		case ind == 0 && c == '%':
			s.nextLine() // a directive
			continue
		case ind == 0 && (bytes.HasPrefix(s.data[s.p:], []byte("---")) || bytes.HasPrefix(s.data[s.p:], []byte("..."))) && s.blankAfter(s.p+2):
			s.stack = s.stack[:0] // a new document
			s.p += 3
			s.skipSpaces()
			if s.p >= len(s.data) || isEOL(s.data[s.p]) {
				s.nextLine()
				continue
			}
			c = s.data[s.p]
		}
		dash := c == '-' && s.blankAfter(s.p)
		for t := s.top(); t != nil && (t.indent > ind || (t.indent == ind && t.seq && !dash)); t = s.top() {
			s.stack = s.stack[:len(s.stack)-1]
		}
		scalar, fe := s.line()
		if fe != nil {
			return fe
		}
		if scalar {
			scalarAbove = -1
			if t := s.top(); t != nil {
				scalarAbove = t.indent
			}
		}
		if s.p < len(s.data) {
			s.nextLine()
		}
	}
	return nil
}

// line reads the nodes of a line from s.p: dashes and question marks open
// collections at their columns, then a node (a key and its value, or a
// value). scalar reports a block scalar (| or >), whose lines follow.
func (s *yamlScan) line() (scalar bool, fe *FieldError) {
	for s.p < len(s.data) {
		c := s.data[s.p]
		col := s.p - s.lineStart
		switch {
		case (c == '-' || c == '?') && s.blankAfter(s.p):
			if t := s.top(); t != nil && !t.flow && t.indent == col && t.seq == (c == '-') {
				t.idx++
			} else if fe := s.push(s.p, level{seq: c == '-', indent: col}); fe != nil {
				return false, fe
			}
			s.p++
			s.skipSpaces()
		case c == ':' && s.blankAfter(s.p):
			s.p++ // an explicit key's value
			s.skipSpaces()
		default:
			return s.node(col, true)
		}
	}
	return false, nil
}

// node reads one node at s.p (column col), and its value when it is a
// key (keys only where a block mapping may start).
func (s *yamlScan) node(col int, keyAllowed bool) (scalar bool, fe *FieldError) {
	for s.p < len(s.data) && (s.data[s.p] == '&' || s.data[s.p] == '!') { // an anchor or a tag
		for s.p < len(s.data) && !isBlank(s.data[s.p]) && !isEOL(s.data[s.p]) {
			s.p++
		}
		s.skipSpaces()
	}
	if s.p >= len(s.data) {
		return false, nil
	}
	keyStart := s.p
	switch c := s.data[s.p]; c {
	case '#':
		return false, nil
	case '|', '>':
		return true, nil
	case '[', '{':
		if fe := s.flow(); fe != nil {
			return false, fe
		}
	case '"', '\'':
		s.quoted()
	default: // a plain scalar, or a key
		for ; s.p < len(s.data) && !isEOL(s.data[s.p]); s.p++ {
			if s.data[s.p] == '#' && s.p > keyStart && isBlank(s.data[s.p-1]) {
				return false, nil
			}
			if s.data[s.p] == ':' && s.blankAfter(s.p) {
				break
			}
		}
	}
	s.skipSpaces()
	if s.p >= len(s.data) || s.data[s.p] != ':' || !s.blankAfter(s.p) || !keyAllowed {
		return false, nil
	}
	key := strings.Trim(strings.TrimSpace(string(s.data[keyStart:s.p])), `"'`)
	if t := s.top(); t != nil && !t.flow && !t.seq && t.indent == col {
		t.key = key
	} else if fe := s.push(keyStart, level{indent: col, key: key}); fe != nil {
		return false, fe
	}
	s.p++
	s.skipSpaces()
	if s.p >= len(s.data) || isEOL(s.data[s.p]) {
		return false, nil
	}
	return s.node(s.p-s.lineStart, false)
}

// quoted moves past a quoted scalar at s.p, over lines if it has several.
func (s *yamlScan) quoted() {
	q := s.data[s.p]
	for s.p++; s.p < len(s.data); s.p++ {
		switch c := s.data[s.p]; {
		case c == '\n':
			s.lineStart = s.p + 1
		case c == '\\' && q == '"':
			s.p++
			if s.p < len(s.data) && s.data[s.p] == '\n' {
				s.lineStart = s.p + 1
			}
		case c == q && q == '\'' && s.p+1 < len(s.data) && s.data[s.p+1] == '\'':
			s.p++ // '' in a single-quoted scalar
		case c == q:
			s.p++
			return
		}
	}
}

// flow reads a flow collection at s.p to its closing bracket (or the
// document's end), over lines if it has several.
func (s *yamlScan) flow() *FieldError {
	base := len(s.stack)
	keyStart := s.p
	for s.p < len(s.data) {
		c := s.data[s.p]
		switch {
		case c == '[' || c == '{':
			if fe := s.push(s.p, level{seq: c == '[', flow: true}); fe != nil {
				return fe
			}
			keyStart = s.p + 1
		case c == ']' || c == '}':
			if len(s.stack) > base {
				s.stack = s.stack[:len(s.stack)-1]
			}
			if len(s.stack) == base {
				s.p++
				return nil
			}
		case c == ',':
			if t := s.top(); t.seq {
				t.idx++
			} else {
				t.key = ""
			}
			keyStart = s.p + 1
		case c == ':' && (s.blankAfter(s.p) || s.p+1 < len(s.data) && strings.IndexByte(",[]{}", s.data[s.p+1]) >= 0 || s.p > 0 && (s.data[s.p-1] == '"' || s.data[s.p-1] == '\'')):
			if t := s.top(); !t.seq {
				t.key = strings.Trim(strings.TrimSpace(string(s.data[keyStart:s.p])), `"'`)
			}
		case c == '"' || c == '\'':
			s.quoted()
			continue
		case c == '#' && (s.p == 0 || isBlank(s.data[s.p-1]) || isEOL(s.data[s.p-1])):
			for s.p < len(s.data) && s.data[s.p] != '\n' {
				s.p++
			}
			continue
		case c == '\n':
			s.lineStart = s.p + 1
		}
		s.p++
	}
	return nil
}

// aliasLimit is how many bytes the aliases of a document of size bytes
// may add when they are followed: four times its size, and 64 KiB
// whatever its size, which no configuration comes near.
func aliasLimit(size int) int { return max(64<<10, 4*size) }

// aliasProblem reports aliases that would expand the document n (of size
// bytes) beyond [aliasLimit]: a "billion laughs" of ten anchors, each ten
// aliases of the one before, is a few hundred bytes that expand to 10^10
// values. Each anchor's expanded size is counted once, in one walk, so
// the check is linear; the problem is at the alias that goes past the
// limit.
func aliasProblem(n ast.Node, size int) *FieldError {
	w := &aliasWalk{sizes: map[string]*int{}, limit: aliasLimit(size)}
	ast.Walk(aliasVisitor{w: w}, n)
	if w.bad == nil {
		return nil
	}
	fe := &FieldError{Path: w.bad.GetPath(), Err: fmt.Errorf("aliases expand the document past %d bytes, 4 times its size (at least 64 KiB); write the values out, or use fewer aliases of large anchors", w.limit)}
	if tk := w.bad.GetToken(); tk != nil {
		fe.Line, fe.Col = tk.Position.Line, tk.Position.Column
	}
	return fe
}

// aliasWalk is the state of aliasProblem's walk: the expanded size of each
// anchor seen, and what the aliases added so far.
type aliasWalk struct {
	sizes map[string]*int
	added int
	limit int
	bad   ast.Node // the alias past the limit
}

// aliasVisitor visits a node inside the anchors whose sizes are counters.
type aliasVisitor struct {
	w        *aliasWalk
	counters []*int
}

func (v aliasVisitor) Visit(n ast.Node) ast.Visitor {
	w := v.w
	if w.bad != nil || n == nil {
		return nil
	}
	add := func(k int) {
		for _, c := range v.counters {
			*c = min(*c+k, w.limit+1)
		}
	}
	switch n := n.(type) {
	case *ast.AnchorNode:
		c := new(int)
		if n.Name != nil && n.Name.GetToken() != nil {
			w.sizes[n.Name.GetToken().Value] = c
		}
		return aliasVisitor{w: w, counters: append(v.counters[:len(v.counters):len(v.counters)], c)}
	case *ast.AliasNode:
		k := 1
		if n.Value != nil && n.Value.GetToken() != nil {
			if c := w.sizes[n.Value.GetToken().Value]; c != nil {
				k = max(*c, 1)
			}
		}
		add(k)
		w.added = min(w.added+k, w.limit+1)
		if w.added > w.limit {
			w.bad = n
		}
		return nil
	}
	k := 1
	if _, ok := n.(ast.ScalarNode); ok {
		if tk := n.GetToken(); tk != nil {
			k += len(tk.Value)
		}
	}
	add(k)
	return v
}

// parseYAML parses a document whose nesting was checked, and checks its
// aliases.
func parseYAML(data []byte) (*ast.File, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, syntaxProblem(data, err)
	}
	for _, d := range f.Docs {
		if fe := aliasProblem(d, len(data)); fe != nil {
			return nil, fe
		}
	}
	return f, nil
}
