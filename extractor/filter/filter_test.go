package filter_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor"
	"github.com/dynamo-rss/dynamo/extractor/filter"
	"github.com/dynamo-rss/dynamo/schema"
)

// TestFilterMatch: words match case-insensitively as whole words (Unicode
// letters and digits are word characters) in the title or the
// description's text; re: takes an RE2 expression, case-sensitive unless
// it says (?i); include keeps items matching any entry (all when empty),
// then exclude drops items matching any.
func TestFilterMatch(t *testing.T) {
	tests := []struct {
		name        string
		spec        filter.Spec
		title, desc string
		keep        bool
		reason      string
	}{
		{"no filter keeps", filter.Spec{}, "Anything", "", true, ""},
		{"exclude word in title", filter.Spec{Exclude: []string{"Anzeige"}}, "ANZEIGE: Sofa zu verkaufen", "", false, "exclude: Anzeige"},
		{"exclude is whole words", filter.Spec{Exclude: []string{"Anzeige"}}, "Neues im Anzeigenblatt", "", true, ""},
		{"word inside a longer word at its end", filter.Spec{Exclude: []string{"Anzeige"}}, "Kleinanzeige", "", true, ""},
		{"word before punctuation", filter.Spec{Exclude: []string{"sponsored"}}, "Great offer (Sponsored)", "", false, "exclude: sponsored"},
		{"word in description", filter.Spec{Exclude: []string{"Sponsored"}}, "Great offer", "This post is sponsored by ACME.", false, "exclude: Sponsored"},
		{"non-ASCII letters are word characters", filter.Spec{Exclude: []string{"Gemeinderat"}}, "Gemeinderatssitzung", "", true, ""},
		{"word ending in a non-ASCII letter", filter.Spec{Exclude: []string{"Café"}}, "Das CAFÉ am Markt", "", false, "exclude: Café"},
		{"non-ASCII letter after the word", filter.Spec{Exclude: []string{"Caf"}}, "Café", "", true, ""},
		{"full case folding", filter.Spec{Exclude: []string{"Straße"}}, "STRASSE gesperrt", "", false, "exclude: Straße"},
		{"digits are word characters", filter.Spec{Exclude: []string{"G7"}}, "G77 summit", "", true, ""},
		{"phrase", filter.Spec{Exclude: []string{"paid  content"}}, "Paid content: new phones", "", false, "exclude: paid  content"},
		{"a word of no letters needs no boundary", filter.Spec{Exclude: []string{"+++"}}, "News+++Eilmeldung", "", false, "exclude: +++"},
		{"a later occurrence is whole", filter.Spec{Exclude: []string{"ad"}}, "Adam read the ad", "", false, "exclude: ad"},
		{"include matches", filter.Spec{Include: []string{"Gemeinderat", "re:(?i)budget"}}, "Der Gemeinderat tagt", "", true, ""},
		{"include by re", filter.Spec{Include: []string{"Gemeinderat", "re:(?i)budget"}}, "Budgets 2027", "", true, ""},
		{"include misses", filter.Spec{Include: []string{"Gemeinderat", "re:(?i)budget"}}, "Sport am Sonntag", "", false, "include: none matched"},
		{"re is case-sensitive by default", filter.Spec{Include: []string{"re:budget"}}, "Budget", "", false, "include: none matched"},
		{"exclude after include", filter.Spec{Include: []string{"Budget"}, Exclude: []string{"Anzeige"}}, "Budget: Anzeige", "", false, "exclude: Anzeige"},
		{"first exclude entry that matches is named", filter.Spec{Exclude: []string{"Werbung", "Anzeige", "re:^Anz"}}, "Anzeige", "", false, "exclude: Anzeige"},
		{"re anchors each field", filter.Spec{Exclude: []string{"re:^Sale$"}}, "Big", "Sale", false, "exclude: re:^Sale$"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := filter.Compile(tt.spec)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			doc := &schema.Document{Items: []schema.Item{{Index: 1, ID: "a", Title: tt.title, Description: tt.desc}}}
			out := f.Apply(doc)
			if got := len(doc.Items) == 1; got != tt.keep {
				t.Fatalf("kept %v, want %v (filtered out %+v)", got, tt.keep, out)
			}
			if tt.keep {
				if len(out) != 0 {
					t.Fatalf("filtered out %+v of a kept item", out)
				}
				return
			}
			if len(out) != 1 || out[0].Reason() != tt.reason || out[0].Item.ID != "a" {
				t.Fatalf("filtered out %+v, want one item because %q", out, tt.reason)
			}
		})
	}
}

// TestFilterApply: kept items keep their order and indexes; the filtered
// out ones are listed in page order.
func TestFilterApply(t *testing.T) {
	f, err := filter.Compile(filter.Spec{Exclude: []string{"Sponsored"}})
	if err != nil {
		t.Fatal(err)
	}
	doc := &schema.Document{Items: []schema.Item{
		{Index: 1, ID: "a", Title: "One"}, {Index: 2, ID: "b", Title: "Sponsored: two"},
		{Index: 3, ID: "c", Title: "Three"}, {Index: 4, ID: "d", Title: "Four", Description: "sponsored"},
	}}
	out := f.Apply(doc)
	var kept, dropped []string
	for _, it := range doc.Items {
		kept = append(kept, fmt.Sprintf("%d %s", it.Index, it.ID))
	}
	for _, o := range out {
		dropped = append(dropped, fmt.Sprintf("%d %s", o.Item.Index, o.Item.ID))
	}
	if strings.Join(kept, ",") != "1 a,3 c" || strings.Join(dropped, ",") != "2 b,4 d" {
		t.Fatalf("kept %v, dropped %v", kept, dropped)
	}
	var nilFilter *filter.Filter
	doc2 := &schema.Document{Items: []schema.Item{{Index: 1, Title: "x"}}}
	if out := nilFilter.Apply(doc2); out != nil || len(doc2.Items) != 1 {
		t.Fatalf("a nil filter dropped %v", out)
	}
}

// TestFilterDescriptionText: the description's text is matched, never its
// HTML (content:encoded): tags, attributes and URLs do not match.
func TestFilterDescriptionText(t *testing.T) {
	page := `<html><body>
<!-- <channel:title> -->News<!-- </channel:title> -->
<!-- <item:title index="1"> -->Offer<!-- </item:title> -->
<!-- <item:description index="1"> --><p>A <a href="/sponsored/1" title="Sponsored">good</a> <b class="sponsored">deal</b></p><!-- </item:description> -->
<!-- <item:title index="2"> -->Other<!-- </item:title> -->
<!-- <item:description index="2"> --><p>This is <b>Sponsored</b> content</p><!-- </item:description> -->
</body></html>`
	res, err := extractor.Extract(strings.NewReader(page), extractor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := filter.Compile(filter.Spec{Exclude: []string{"sponsored"}})
	if err != nil {
		t.Fatal(err)
	}
	out := f.Apply(res.Document)
	if len(res.Document.Items) != 1 || res.Document.Items[0].Title != "Offer" || len(out) != 1 || out[0].Item.Title != "Other" {
		t.Fatalf("kept %+v, filtered out %+v", res.Document.Items, out)
	}
}

// TestCompileFilterErrors: every bad entry is an error naming its list
// and position: a bad re: expression, an empty word, too long an entry,
// too many entries, an expression that compiles too large.
func TestCompileFilterErrors(t *testing.T) {
	many := make([]string, filter.MaxEntries+1)
	for i := range many {
		many[i] = fmt.Sprint("w", i)
	}
	tests := []struct {
		name string
		spec filter.Spec
		want []string
	}{
		{"bad re", filter.Spec{Exclude: []string{"ok", "re:(budget"}}, []string{`exclude[1]: "re:(budget": not an RE2 expression: missing closing ): ` + "`(budget`"}},
		{"empty word", filter.Spec{Include: []string{"  "}}, []string{"include[0]: an empty word matches nothing; remove it or write a word"}},
		{"empty re", filter.Spec{Include: []string{"re:"}}, []string{`include[0]: "re:": has no expression after re:`}},
		{"too long", filter.Spec{Include: []string{strings.Repeat("x", filter.MaxEntryBytes+1)}}, []string{"include[0]: 257 bytes, more than the 256 an entry may have"}},
		{"too many", filter.Spec{Exclude: many}, []string{"exclude: 65 entries, more than the 64 a list may have"}},
		{"too large", filter.Spec{Exclude: []string{`re:(?:\pL\pN\pL\pN\pL){300}`}}, []string{`exclude[0]: "re:(?:\\pL\\pN\\pL\\pN\\pL){300}": too complex an expression`}},
		{"several", filter.Spec{Include: []string{""}, Exclude: []string{"re:["}}, []string{"include[0]: an empty word", `exclude[0]: "re:[": not an RE2 expression`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := filter.Compile(tt.spec)
			if err == nil {
				t.Fatal("no error")
			}
			var errs []error
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = j.Unwrap()
			} else {
				errs = []error{err}
			}
			if len(errs) != len(tt.want) {
				t.Fatalf("%d errors (%v), want %d", len(errs), err, len(tt.want))
			}
			for i, e := range errs {
				var fe *filter.Error
				if !errors.As(e, &fe) {
					t.Fatalf("error %d %v is no *Error", i, e)
				}
				if !strings.HasPrefix(e.Error(), tt.want[i]) {
					t.Errorf("error %d:\n got %s\nwant %s…", i, e, tt.want[i])
				}
			}
		})
	}
}

// TestFilterCostLinear: matching costs time linear in the text: a long
// description of near misses against the longest entries allowed.
func TestFilterCostLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("cost test")
	}
	words := make([]string, filter.MaxEntries)
	for i := range words {
		words[i] = strings.Repeat("a", 200) + fmt.Sprint(i)
	}
	f, err := filter.Compile(filter.Spec{Exclude: words})
	if err != nil {
		t.Fatal(err)
	}
	text := func(n int) string { return strings.Repeat("a", n) }
	cost := func(n int) float64 {
		doc := &schema.Document{Items: []schema.Item{{Index: 1, Title: "t", Description: text(n)}}}
		r := testing.Benchmark(func(b *testing.B) {
			for b.Loop() {
				d := *doc
				d.Items = append([]schema.Item(nil), doc.Items...)
				f.Apply(&d)
			}
		})
		return float64(r.NsPerOp())
	}
	small, large := cost(1<<14), cost(1<<17)
	if ratio := large / small; ratio > 8*3 {
		t.Fatalf("8× the text costs %.1f× the time: not linear", ratio)
	}
}
