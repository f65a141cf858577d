package schema

import (
	"fmt"
	"strings"

	"golang.org/x/text/cases"
)

// Field is an item field a keyword term looks in.
type Field uint8

// The fields a keyword term can name.
const (
	FieldTitle Field = iota
	FieldLink
	FieldDescription
)

// ParseField maps a query parameter name to a field: title, link,
// description or its alias desc.
func ParseField(name string) (Field, bool) {
	switch name {
	case "title":
		return FieldTitle, true
	case "link":
		return FieldLink, true
	case "description", "desc":
		return FieldDescription, true
	}
	return 0, false
}

func (f Field) String() string {
	switch f {
	case FieldTitle:
		return "title"
	case FieldLink:
		return "link"
	case FieldDescription:
		return "description"
	}
	return fmt.Sprintf("Field(%d)", uint8(f))
}

// Op joins a term to the result of the terms before it.
type Op uint8

// The operators; And is the default.
const (
	And Op = iota
	Or
)

// ParseOp maps "and" / "or" (case-insensitive) to an Op.
func ParseOp(s string) (Op, bool) {
	switch strings.ToLower(s) {
	case "and":
		return And, true
	case "or":
		return Or, true
	}
	return 0, false
}

func (o Op) String() string {
	if o == Or {
		return "or"
	}
	return "and"
}

// Term is one keyword term: Field contains Value, case-insensitively under
// Unicode case folding. Op joins it to the terms before it (ignored on the first).
type Term struct {
	Op     Op
	Field  Field
	Value  string
	folded string
}

// NewTerm returns a term with its value folded once, ready for matching.
func NewTerm(op Op, field Field, value string) Term {
	return Term{Op: op, Field: field, Value: value, folded: Fold(value)}
}

// Fold returns s under full Unicode case folding (so "STRASSE" and "straße" match).
// A cases.Caser is not safe for concurrent use, so each call makes its own.
func Fold(s string) string {
	return cases.Fold().String(s)
}

// Terms is a keyword query: terms combined strictly left to right,
// ((t1 op2 t2) op3 t3)…, with no precedence of and over or. No terms match everything.
type Terms []Term

// Match evaluates the query on an item's fields, folding them as needed.
func (ts Terms) Match(title, link, description string) bool {
	var f [3]*string
	get := func(field Field) string {
		if f[field] == nil {
			var s string
			switch field {
			case FieldTitle:
				s = Fold(title)
			case FieldLink:
				s = Fold(link)
			default:
				s = Fold(description)
			}
			f[field] = &s
		}
		return *f[field]
	}
	return ts.eval(get)
}

// MatchFolded evaluates the query on fields that are already folded with [Fold];
// storage keeps folded copies so a query folds nothing per item.
func (ts Terms) MatchFolded(title, link, description string) bool {
	fields := [3]string{title, link, description}
	return ts.eval(func(f Field) string { return fields[f] })
}

func (ts Terms) eval(get func(Field) string) bool {
	if len(ts) == 0 {
		return true
	}
	acc := false
	for i, t := range ts {
		if i > 0 {
			if t.Op == Or && acc || t.Op == And && !acc {
				continue // the result cannot change: skip folding this field
			}
		}
		folded := t.folded
		if folded == "" && t.Value != "" {
			folded = Fold(t.Value) // a Term built without NewTerm
		}
		acc = strings.Contains(get(t.Field), folded)
	}
	return acc
}
