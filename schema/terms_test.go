package schema_test

import (
	"testing"

	"github.com/dynamo-rss/dynamo/schema"
)

func TestTermsTruthTable(t *testing.T) {
	title, link, desc := "Budget approved by the Council", "https://example.org/news/budget.html", "Straße closed; ΣΊΣΥΦΟΣ returns"
	tm := func(op schema.Op, f schema.Field, v string) schema.Term { return schema.NewTerm(op, f, v) }
	yes := func(op schema.Op) schema.Term { return tm(op, schema.FieldTitle, "budget") }
	no := func(op schema.Op) schema.Term { return tm(op, schema.FieldTitle, "weather") }
	tests := []struct {
		name  string
		terms schema.Terms
		want  bool
	}{
		{"no terms match all", nil, true},
		{"title hit, case-insensitive", schema.Terms{tm(schema.And, schema.FieldTitle, "COUNCIL")}, true},
		{"title miss", schema.Terms{no(schema.And)}, false},
		{"link hit", schema.Terms{tm(schema.And, schema.FieldLink, "/NEWS/")}, true},
		{"description folding ß=ss", schema.Terms{tm(schema.And, schema.FieldDescription, "STRASSE")}, true},
		{"description folding final sigma", schema.Terms{tm(schema.And, schema.FieldDescription, "σίσυφος")}, true},
		{"field matters", schema.Terms{tm(schema.And, schema.FieldLink, "council")}, false},
		{"T and T", schema.Terms{yes(schema.And), yes(schema.And)}, true},
		{"T and F", schema.Terms{yes(schema.And), no(schema.And)}, false},
		{"F and T", schema.Terms{no(schema.And), yes(schema.And)}, false},
		{"F or T", schema.Terms{no(schema.And), yes(schema.Or)}, true},
		{"T or F", schema.Terms{yes(schema.And), no(schema.Or)}, true},
		{"F or F", schema.Terms{no(schema.And), no(schema.Or)}, false},
		// Left to right, no precedence: (T or T) and F = F, whereas T or (T and F) would be T.
		{"T or T and F", schema.Terms{yes(schema.And), yes(schema.Or), no(schema.And)}, false},
		// (F and T) or T = T, whereas F and (T or T) would be F.
		{"F and T or T", schema.Terms{no(schema.And), yes(schema.And), yes(schema.Or)}, true},
		{"(F or T) and T", schema.Terms{no(schema.And), yes(schema.Or), yes(schema.And)}, true},
		{"op of first term ignored", schema.Terms{yes(schema.Or)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.terms.Match(title, link, desc); got != tt.want {
				t.Errorf("Match = %v, want %v", got, tt.want)
			}
			got := tt.terms.MatchFolded(schema.Fold(title), schema.Fold(link), schema.Fold(desc))
			if got != tt.want {
				t.Errorf("MatchFolded = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseFieldAndOp(t *testing.T) {
	for name, want := range map[string]schema.Field{"title": schema.FieldTitle, "link": schema.FieldLink, "description": schema.FieldDescription, "desc": schema.FieldDescription} {
		if got, ok := schema.ParseField(name); !ok || got != want {
			t.Errorf("ParseField(%q) = %v, %v", name, got, ok)
		}
	}
	if _, ok := schema.ParseField("body"); ok {
		t.Error("ParseField(body) accepted")
	}
	if op, ok := schema.ParseOp("OR"); !ok || op != schema.Or {
		t.Errorf("ParseOp(OR) = %v, %v", op, ok)
	}
	if _, ok := schema.ParseOp("xor"); ok {
		t.Error("ParseOp(xor) accepted")
	}
}

func FuzzUnmarshal(f *testing.F) {
	out, err := schema.Marshal(sampleDoc())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(out)
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := schema.Unmarshal(data)
		if err != nil {
			return
		}
		if doc.Validate() != nil {
			return
		}
		again, err := schema.Marshal(doc)
		if err != nil {
			t.Fatalf("a valid document does not marshal: %v", err)
		}
		back, err := schema.Unmarshal(again)
		if err != nil {
			t.Fatalf("our own output does not parse: %v\n%s", err, again)
		}
		if !schema.SameContent(doc, back) || len(back.Items) != len(doc.Items) {
			t.Fatalf("round trip lost content")
		}
	})
}
