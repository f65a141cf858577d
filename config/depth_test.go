package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/internal/costtest"
)

// nested builds a document whose deepest value sits inside depth
// collections (the root counts as one), in one of the ways YAML and JSON
// nest.
func nested(shape string, depth int) string {
	switch shape {
	case "flow sequence":
		return strings.Repeat("[", depth) + strings.Repeat("]", depth)
	case "flow mapping":
		return strings.Repeat("{a: ", depth) + "x" + strings.Repeat("}", depth)
	case "JSON array":
		return `{"item": ` + strings.Repeat("[", depth-1) + `"x"` + strings.Repeat("]", depth-1) + "}"
	case "JSON object":
		return strings.Repeat(`{"a": `, depth) + "1" + strings.Repeat("}", depth)
	case "block mapping":
		var b strings.Builder
		for i := range depth {
			b.WriteString(strings.Repeat(" ", i) + "a:")
			if i == depth-1 {
				b.WriteString(" x")
			}
			b.WriteByte('\n')
		}
		return b.String()
	case "block sequence":
		return strings.Repeat("- ", depth) + "x\n"
	case "block sequence on lines":
		var b strings.Builder
		for i := range depth {
			b.WriteString(strings.Repeat("  ", i) + "-\n")
		}
		return b.String() + strings.Repeat("  ", depth) + "x\n"
	case "explicit keys":
		return strings.Repeat("? ", depth) + "x\n"
	case "block then flow":
		return "select:\n  item: " + strings.Repeat("[", depth-2) + strings.Repeat("]", depth-2) + "\n"
	case "sequence of mappings":
		return strings.Repeat("- a: ", 1) + "\n" + nestedUnder("  ", depth-2)
	}
	panic(shape)
}

// nestedUnder is a block mapping depth levels deep, each line indented
// under prefix.
func nestedUnder(prefix string, depth int) string {
	var b strings.Builder
	for i := range depth {
		b.WriteString(prefix + strings.Repeat(" ", i+1) + "b:")
		if i == depth-1 {
			b.WriteString(" x")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

var nestingShapes = []string{"flow sequence", "flow mapping", "JSON array", "JSON object", "block mapping",
	"block sequence", "block sequence on lines", "explicit keys", "block then flow", "sequence of mappings"}

// TestNestingBound: YAML and JSON nested MaxDepth levels pass the depth
// check, one level more is refused, in every way a document nests.
func TestNestingBound(t *testing.T) {
	if MaxDepth != 64 {
		t.Fatalf("MaxDepth = %d, want 64 (API.md, Security promises)", MaxDepth)
	}
	for _, shape := range nestingShapes {
		t.Run(shape, func(t *testing.T) {
			if fe := nestingProblem([]byte(nested(shape, MaxDepth))); fe != nil {
				t.Fatalf("depth %d refused: %v\n%s", MaxDepth, fe, nested(shape, MaxDepth))
			}
			fe := nestingProblem([]byte(nested(shape, MaxDepth+1)))
			if fe == nil {
				t.Fatalf("depth %d accepted:\n%s", MaxDepth+1, nested(shape, MaxDepth+1))
			}
			if fe.Line == 0 || !strings.Contains(fe.Err.Error(), "nested deeper than 64 levels") {
				t.Fatalf("problem %q (line %d), want the place and the bound", fe, fe.Line)
			}
		})
	}
}

// TestNestingNotFooled: brackets in quoted strings, comments, block
// scalars and plain scalars (selectors are full of them) are no nesting;
// a sequence at its key's indentation is one level, not a deeper one.
func TestNestingNotFooled(t *testing.T) {
	deep := strings.Repeat("[", 100) + strings.Repeat("{", 100)
	for _, doc := range []string{
		"item: \"" + deep + "\"\n",
		"item: '" + deep + "'\n",
		"item: 'it''s " + deep + "'\n",
		"item: \"a \\\" " + deep + "\"\n",
		"item: li # " + deep + "\n",
		"# " + deep + "\nitem: li\n",
		"item: |\n  " + deep + "\n  " + deep + "\ntitle: h3\n",
		"item: >-\n    " + deep + "\ntitle: h3\n",
		"item: li:not([class])" + strings.Repeat("[x]", 100) + "\n",
		"title: xpath:.//td[2][" + deep + "\n",
		`{"item": "` + deep + `", "title": "\"` + deep + `"}`,
		"{item: \"" + deep + "\", title: '" + deep + "'}",
		"resources:\n- id: a\n  select:\n    item: li\n- id: b\n" + strings.Repeat("# x\n", 100),
		"a:\n- b\n- c\nd:\n- e\n" + strings.Repeat("f:\n- g\n", 100),
		strings.Repeat("- a: b\n  c: d\n", 200),
	} {
		if fe := nestingProblem([]byte(doc)); fe != nil {
			t.Errorf("refused: %v\n%s", fe, doc)
		}
	}
}

// TestNestingRefusedNamingField: the file, an admin API body (JSON or
// YAML) and a select block (bare, as a document, as JSON) nested 1,000 and
// 30,000 deep are refused before the YAML library parses them, with the
// field, the line and the column.
func TestNestingRefusedNamingField(t *testing.T) {
	for _, depth := range []int{1000, 30000} {
		flow := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		dashes := strings.Repeat("- ", depth) + "x"
		for _, tc := range []struct {
			name, doc string
			parse     func([]byte) error
			path      string
			line, col int
		}{
			{"file", "poller:\n  workers: 2\nresources:\n  - id: a\n    url: http://x/\n  - id: b\n    url: http://y/\n    select:\n      item: " + flow + "\n",
				parseErr, "$.resources[1].select.item", 9, 7},
			{"file, dashes", "resources:\n  - id: a\n    url: http://x/\n    select:\n      title: " + "\n        " + dashes + "\n",
				parseErr, "$.resources[0].select.title", 6, 9},
			{"admin JSON", `{"url": "http://x/", "select": {"item": ` + flow + `}}`, resourceErr, "$.select.item", 1, 1},
			{"admin YAML", "url: http://x/\nselect:\n  channel: {title: " + flow + "}\n", resourceErr, "$.select.channel.title", 3, 3},
			{"bare block", "item: li\ntitle: " + flow + "\n", selectErr, "$.select.title", 2, 1},
			{"select document", "select:\n  item: li\n  title: {select: " + flow + "}\n", selectErr, "$.select.title.select", 3, 3},
			{"JSON block", `{"item": "li", "date": {"select": ` + flow + `}}`, selectErr, "$.select.date.select", 1, 1},
		} {
			t.Run(fmt.Sprintf("%s %d", tc.name, depth), func(t *testing.T) {
				start := time.Now()
				err := tc.parse([]byte(tc.doc))
				var fe *FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("error %v, want a *FieldError", err)
				}
				if !strings.HasPrefix(fe.Path, tc.path) || fe.Line != tc.line || fe.Col < tc.col {
					t.Fatalf("problem at %s, line %d, column %d, want under %s at line %d: %v", fe.Path, fe.Line, fe.Col, tc.path, tc.line, err)
				}
				msg := err.Error()
				for _, want := range []string{strings.TrimPrefix(tc.path, "$."), "nested deeper than 64 levels"} {
					if !strings.Contains(msg, want) {
						t.Fatalf("message %q does not say %q", msg, want)
					}
				}
				if d := time.Since(start); d > 2*time.Second { // a safety net only: TestNestingCostLinear measures
					t.Fatalf("took %v", d)
				}
			})
		}
	}
}

func parseErr(b []byte) error    { _, err := Parse(b); return err }
func resourceErr(b []byte) error { _, err := ParseResource(b, "a", Default().Poller); return err }
func selectErr(b []byte) error   { _, err := ParseSelect(b); return err }

// flatSelect is a select block about size bytes long, nothing nested: a
// list of selectors, read whole by the YAML parser (then refused for its
// length, as a list has at most 16).
func flatSelect(size int) string {
	var b strings.Builder
	b.WriteString("item: li\ntitle: {select: [")
	for b.Len() < size-10 {
		b.WriteString(`"h3 a", `)
	}
	b.WriteString(`"h2"]}` + "\n")
	return b.String()
}

// TestNestingCostLinear: a 58 KiB select block nested 30,000 deep (the
// body that cost 8 s and 1.8 GiB) costs no more than reading a flat block
// of the same size, in time and in memory, measured in the same run.
func TestNestingCostLinear(t *testing.T) {
	deep := "item: " + strings.Repeat("[", 30000) + strings.Repeat("]", 30000)
	flat := flatSelect(len(deep))
	refTime, refAlloc := costtest.Best(3, func() {
		if _, err := ParseSelect([]byte(flat)); err == nil || !strings.Contains(err.Error(), "selectors, at most") {
			t.Fatalf("flat block: %v", err)
		}
	})
	for name, doc := range map[string]string{
		"flow":   deep,
		"dashes": "item: li\ntitle:\n  " + strings.Repeat("- ", 30000) + "x\n",
		"JSON":   `{"item": ` + strings.Repeat("[", 30000) + strings.Repeat("]", 30000) + "}",
	} {
		t.Run(name, func(t *testing.T) {
			d, alloc := costtest.Best(3, func() {
				if _, err := ParseSelect([]byte(doc)); err == nil {
					t.Fatal("accepted")
				}
			})
			t.Logf("%d bytes: %v, %d bytes allocated; flat %d bytes: %v, %d bytes allocated", len(doc), d, alloc, len(flat), refTime, refAlloc)
			if d > refTime || alloc > refAlloc {
				t.Fatalf("nested block cost %v and %d bytes, more than the flat block's %v and %d bytes", d, alloc, refTime, refAlloc)
			}
		})
	}
}

// aliasBomb is a "billion laughs": each anchor a list of width aliases of
// the one before, levels deep, under key.
func aliasBomb(levels, width int) string {
	var b strings.Builder
	b.WriteString("  - &a0 \"lol\"\n")
	for i := 1; i <= levels; i++ {
		refs := make([]string, width)
		for j := range refs {
			refs[j] = fmt.Sprintf("*a%d", i-1)
		}
		fmt.Fprintf(&b, "  - &a%d [%s]\n", i, strings.Join(refs, ", "))
	}
	return b.String()
}

// TestAliasBombRefused: aliases that would expand a small document
// exponentially are refused, quickly, naming the alias that goes past the
// bound; a few aliases in a real file are fine.
func TestAliasBombRefused(t *testing.T) {
	bomb := aliasBomb(12, 10) // 10^12 "lol"s
	for _, tc := range []struct {
		name, doc string
		parse     func([]byte) error
	}{
		{"file", "resources:\n" + strings.ReplaceAll(bomb, "  - ", "  - id: x\n    url: "), parseErr},
		{"select block", "item: li\ntitle:\n  select:\n" + bomb, selectErr},
		{"admin body", "url: http://x/\nselect:\n  item: li\n  title:\n    select:\n" + strings.ReplaceAll(bomb, "  - ", "      - "), resourceErr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			err := tc.parse([]byte(tc.doc))
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Line == 0 || !strings.Contains(err.Error(), "aliases") {
				t.Fatalf("error %v, want the alias that goes past the bound, with its line", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("took %v", d)
			}
		})
	}
	ok := "resources:\n  - id: a\n    url: http://x/\n    policy: &p {kind: flat, interval: 15m}\n    select: &s {item: li, title: h3}\n" +
		"  - id: b\n    url: http://y/\n    policy: *p\n    select: *s\n"
	cfg, err := Parse([]byte(ok))
	if err != nil {
		t.Fatalf("anchors and aliases in a file: %v", err)
	}
	if r := cfg.Resources[1]; r.Policy.Kind != "flat" || r.Select.Title != "h3" {
		t.Fatalf("aliases not followed: %+v", r)
	}
}
