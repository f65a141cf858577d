package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
)

// Messages for people (API.md, Configuration): each problem once, in file
// order, as FILE:LINE:COL: field: message; an unknown field suggests the
// closest known one and the field it was meant to be raises no knock-on
// error; a syntax error says what is wrong in words.

// unknownField is the message of an unknown key at path (its parent's
// fields are those of root's type along the path): the closest known field
// when one is close, else the known fields. meant is the known field
// suggested ("" when none).
func unknownField(root reflect.Type, path string) (msg, meant string) {
	parent, key := splitPath(path)
	known := fieldNames(root, parent)
	if len(known) == 0 {
		return "unknown field", ""
	}
	best, bestD := "", 0
	for _, k := range known {
		if d := editDistance(strings.ToLower(key), k); best == "" || d < bestD {
			best, bestD = k, d
		}
	}
	if bestD <= max(2, len(key)/3) {
		return "unknown field; did you mean " + best + "?", best
	}
	return "unknown field; the fields here are " + strings.Join(known, ", "), ""
}

// splitPath splits "$.resources[1].ulr" into "$.resources[1]" and "ulr".
func splitPath(path string) (parent, key string) {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return "$", strings.TrimPrefix(path, "$")
	}
	return path[:i], path[i+1:]
}

// fieldNames lists the yaml names of the fields of the struct at path in
// root (a YAML path: $, .name, [n]); nil when path names no struct.
func fieldNames(root reflect.Type, path string) []string {
	t := root
	rest := strings.TrimPrefix(path, "$")
	for rest != "" {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch rest[0] {
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 || (t.Kind() != reflect.Slice && t.Kind() != reflect.Array) {
				return nil
			}
			t, rest = t.Elem(), rest[end+1:]
		case '.':
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			f, ok := fieldByName(t, rest[:end])
			if !ok {
				return nil
			}
			t, rest = f.Type, rest[end:]
		default:
			return nil
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// fieldByName finds the struct field written name in YAML.
func fieldByName(t reflect.Type, name string) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for i := range t.NumField() {
		if f := t.Field(i); yamlName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// yamlName is a field's name in YAML ("" for unexported or skipped fields).
func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	switch name {
	case "-":
		return ""
	case "":
		return strings.ToLower(f.Name)
	}
	return name
}

// editDistance is the Levenshtein distance of a and b, counting an
// adjacent transposition as one edit ("wrokers" is one edit from
// "workers").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// tidy orders problems by their place in the file (those without a line
// last, in the order found), drops repeats (same field and message), and
// drops the problems of fields an unknown key was meant to be (meant: their
// paths), which would only repeat the typo in other words.
func tidy(problems []error, meant map[string]bool) []error {
	type keyed struct {
		err       error
		line, col int
		key       string
	}
	var ks []keyed
	seen := map[string]bool{}
	for _, p := range problems {
		k := keyed{err: p, key: p.Error()}
		var fe *FieldError
		if errors.As(p, &fe) {
			if knockOn(fe.Path, meant) {
				continue
			}
			k.line, k.col = fe.Line, fe.Col
			k.key = fe.Path + "\x00" + fe.Err.Error()
		}
		if seen[k.key] {
			continue
		}
		seen[k.key] = true
		ks = append(ks, k)
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		switch {
		case a.line == 0 && b.line == 0:
			return 0
		case a.line == 0:
			return 1
		case b.line == 0:
			return -1
		}
		return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.col, b.col))
	})
	out := make([]error, len(ks))
	for i, k := range ks {
		out[i] = k.err
	}
	return out
}

// knockOn reports whether path is, or is inside, a field an unknown key
// was meant to be.
func knockOn(path string, meant map[string]bool) bool {
	for m := range meant {
		if path == m || strings.HasPrefix(path, m+".") || strings.HasPrefix(path, m+"[") {
			return true
		}
	}
	return false
}

// syntaxProblem words a YAML syntax error of data: a tab in an
// indentation, an indentation that does not line up, else the parser's
// message with its position.
func syntaxProblem(data []byte, err error) *FieldError {
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if j := strings.IndexByte(indent, '\t'); j >= 0 && strings.TrimSpace(l) != "" {
			return &FieldError{Line: i + 1, Col: j + 1, Err: errors.New("a tab is not allowed for indentation in YAML; indent with spaces")}
		}
	}
	if fe := indentProblem(lines); fe != nil {
		return fe
	}
	fe := &FieldError{Err: err}
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		pos := ye.GetToken().Position
		fe.Line, fe.Col, fe.Err = pos.Line, pos.Column, errors.New("YAML syntax error: "+ye.GetMessage())
	}
	return fe
}

// indentProblem finds the first line whose indentation does not line up:
// deeper than the line before when that line already has its value, or
// back to a depth no enclosing key has. Block scalars (| and >) and flow
// collections are left alone; lines of a sequence item ("- key: v") line
// up with the key after the dash.
func indentProblem(lines []string) *FieldError {
	type level struct {
		indent int
		open   bool // the line at this level ends with ':' or '-': a deeper line belongs to it
	}
	var stack []level
	scalarAt := -1 // inside a block scalar whose key is at this indentation
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") || trimmed == "---" {
			continue
		}
		ind := len(l) - len(strings.TrimLeft(l, " "))
		if scalarAt >= 0 {
			if ind > scalarAt {
				continue
			}
			scalarAt = -1
		}
		body := stripComment(trimmed)
		switch {
		case len(stack) == 0:
		case ind > stack[len(stack)-1].indent && !stack[len(stack)-1].open:
			return &FieldError{Line: i + 1, Col: ind + 1, Err: fmt.Errorf("the indentation does not line up: this line is indented %s, more than the line above (%d), whose value is already given; align it with the keys it belongs with", spaces(ind), stack[len(stack)-1].indent)}
		case ind < stack[len(stack)-1].indent:
			above := stack[len(stack)-1].indent
			for len(stack) > 0 && stack[len(stack)-1].indent > ind {
				stack = stack[:len(stack)-1]
			}
			if len(stack) > 0 && stack[len(stack)-1].indent != ind {
				return &FieldError{Line: i + 1, Col: ind + 1, Err: fmt.Errorf("the indentation does not line up: this line is indented %s, the keys above it %d and %d; indent it like the keys it belongs with", spaces(ind), above, stack[len(stack)-1].indent)}
			}
		}
		if len(stack) > 0 && stack[len(stack)-1].indent == ind {
			stack = stack[:len(stack)-1]
		}
		open := strings.HasSuffix(body, ":") || body == "-"
		if strings.HasSuffix(body, "|") || strings.HasSuffix(body, ">") || strings.HasSuffix(body, "|-") || strings.HasSuffix(body, ">-") {
			scalarAt, open = ind, true
		}
		if strings.HasSuffix(body, "{") || strings.HasSuffix(body, "[") || strings.HasSuffix(body, ",") {
			return nil // a flow collection over several lines: not ours to judge
		}
		stack = append(stack, level{indent: ind, open: open})
		if strings.HasPrefix(body, "- ") { // the item's first key: the next keys line up with it
			rest := strings.TrimLeft(body[1:], " ")
			inner := ind + len(body) - len(rest)
			stack[len(stack)-1].open = true
			stack = append(stack, level{indent: inner, open: strings.HasSuffix(rest, ":")})
		}
	}
	return nil
}

// spaces is "1 space", "3 spaces".
func spaces(n int) string {
	if n == 1 {
		return "1 space"
	}
	return strconv.Itoa(n) + " spaces"
}

// stripComment cuts a trailing " # comment" off a line (not inside quotes).
func stripComment(s string) string {
	inSingle, inDouble := false, false
	for i, r := range s {
		switch {
		case r == '\'' && !inDouble:
			inSingle = !inSingle
		case r == '"' && !inSingle:
			inDouble = !inDouble
		case r == '#' && !inSingle && !inDouble && i > 0 && (s[i-1] == ' ' || s[i-1] == '\t'):
			return strings.TrimSpace(s[:i])
		}
	}
	return s
}

// jsonProblem checks that a body that looks like JSON (it starts with '{')
// is JSON, and words a malformed one in JSON terms with its line and
// column; nil for well-formed JSON or a body that is not JSON at all.
func jsonProblem(data []byte) *FieldError {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	err := dec.Decode(&v)
	if err == nil {
		if _, err := dec.Token(); err == nil {
			line, col := lineCol(data, int(dec.InputOffset()))
			return &FieldError{Line: line, Col: col, Err: errors.New("malformed JSON: more after the end of the object")}
		}
		return nil
	}
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		line, col := lineCol(data, int(se.Offset)-1) // Offset counts the bad byte
		return &FieldError{Line: line, Col: col, Err: fmt.Errorf("malformed JSON: %s", strings.TrimPrefix(se.Error(), "json: "))}
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := lineCol(data, len(data))
		return &FieldError{Line: line, Col: col, Err: errors.New("malformed JSON: the body ends before the object is closed (a missing } or \")")}
	}
	return nil
}

// lineCol turns a byte offset of data into a 1-based line and column
// (columns count runes).
func lineCol(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, len([]rune(string(before[start:]))) + 1
}
