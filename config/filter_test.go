package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/extractor/filter"
)

// TestFilterInFile: a resource's filter is read from the file; its bad
// entries are problems naming the field with their line and column, as
// every problem of the file.
func TestFilterInFile(t *testing.T) {
	good := "resources:\n  - id: a\n    url: \"https://example.org/\"\n    filter:\n      include: [\"Gemeinderat\", \"re:(?i)budget\"]\n      exclude: [Anzeige, Sponsored]\n"
	cfg, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	want := filter.Spec{Include: []string{"Gemeinderat", "re:(?i)budget"}, Exclude: []string{"Anzeige", "Sponsored"}}
	if f := cfg.Resources[0].Filter; !f.Equal(want) {
		t.Fatalf("filter %+v, want %+v", f, want)
	}
	bad := "resources:\n" +
		"  - id: a\n    url: \"https://example.org/a\"\n" +
		"  - id: b\n    url: \"https://example.org/b\"\n" +
		"  - id: c\n    url: \"https://example.org/c\"\n" +
		"    filter:\n" +
		"      include: [\"  \"]\n" +
		"      exclude:\n        - Anzeige\n        - \"re:(budget\"\n" +
		"      exculde: [x]\n"
	_, err = Parse([]byte(bad))
	wantErrs := []string{
		"line 9, column 17: resources[2].filter.include[0]: an empty word matches nothing",
		`line 12, column 11: resources[2].filter.exclude[1]: "re:(budget": not an RE2 expression: missing closing )`,
		"line 13, column 7: resources[2].filter.exculde: unknown field; did you mean exclude?",
	}
	checkProblems(t, err, wantErrs)
}

// checkProblems checks that err joins the problems want (prefixes), in order.
func checkProblems(t *testing.T, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatal("accepted")
	}
	got := unjoin(err)
	if len(got) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(got), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i].Error(), w) {
			t.Errorf("problem %d:\n got %s\nwant %s…", i, got[i], w)
		}
	}
}

// TestFilterInAdminBody: the admin API's JSON takes the filter, and shows
// it back as it was given.
func TestFilterInAdminBody(t *testing.T) {
	r, err := ParseResource([]byte(`{"url": "https://example.org/", "filter": {"include": [], "exclude": ["Sponsored"]}}`), "a", Default().Poller)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Filter.Equal(filter.Spec{Exclude: []string{"Sponsored"}}) {
		t.Fatalf("filter %+v", r.Filter)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"filter":{"exclude":["Sponsored"]}`) {
		t.Fatalf("shown back as %s", b)
	}
	back, err := DecodeStoredResource(b)
	if err != nil || !back.Filter.Equal(r.Filter) {
		t.Fatalf("stored and read back: %+v, %v", back.Filter, err)
	}
	b, _ = json.Marshal(ResourceEntry{ID: "a", URL: "https://example.org/"})
	if strings.Contains(string(b), "filter") {
		t.Fatalf("no filter shown as %s", b)
	}
}

// TestResourceBodyAllProblems: an admin body with a bad weight (a type
// error of the decoder), a bad timezone (a validation error) and an
// unknown field gets all three, in body order, each with its line and
// column and its field; the id of the URL checked among them.
func TestResourceBodyAllProblems(t *testing.T) {
	body := "{\n" +
		"  \"url\": \"https://example.org/\",\n" +
		"  \"weight\": \"heavy\",\n" +
		"  \"timezone\": \"Mars/Olympus\",\n" +
		"  \"colour\": \"red\",\n" +
		"  \"filter\": {\"exclude\": [\"ok\", \"re:(x\"]}\n" +
		"}"
	_, err := ParseResource([]byte(body), "news", Default().Poller)
	checkProblems(t, err, []string{
		`line 3, column 13: weight: weight must be a positive number, got "heavy"`,
		`line 4, column 15: timezone: unknown time zone "Mars/Olympus"`,
		"line 5, column 3: colour: unknown field; the fields here are id, url,",
		`line 6, column 32: filter.exclude[1]: "re:(x": not an RE2 expression`,
	})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Path != "$.weight" {
		t.Fatalf("the first problem is %v, want the weight's", err)
	}
	// A value refused by the decoder raises no second problem of its own
	// field (the url left out), and the id is checked with the rest.
	_, err = ParseResource([]byte("{\"id\": \"other\",\n \"url\": {\"a\": 1},\n \"timezone\": \"Mars/Olympus\"}"), "news", Default().Poller)
	checkProblems(t, err, []string{
		`line 1, column 8: id: "other" differs from the id in the URL "news"`,
		"line 2, column ",
		`line 3, column 14: timezone: unknown time zone`,
	})
}

// TestParseFilter: a filter block alone (as dynamo extract --filter and
// POST /preview take it), bare or under a filter key, strictly read.
func TestParseFilter(t *testing.T) {
	tests := []struct {
		name, in string
		want     filter.Spec
		errs     []string
	}{
		{"bare", "include: [Gemeinderat]\nexclude: [Anzeige]\n", filter.Spec{Include: []string{"Gemeinderat"}, Exclude: []string{"Anzeige"}}, nil},
		{"json", `{"exclude": ["Sponsored"]}`, filter.Spec{Exclude: []string{"Sponsored"}}, nil},
		{"flow", `{include: [Gemeinderat], exclude: ["re:(?i)anzeige"]}`, filter.Spec{Include: []string{"Gemeinderat"}, Exclude: []string{"re:(?i)anzeige"}}, nil},
		{"under filter", "url: https://example.org/\nfilter:\n  exclude: [Anzeige]\n", filter.Spec{Exclude: []string{"Anzeige"}}, nil},
		{"empty", "{}", filter.Spec{}, nil},
		{"bad entries", "include: [\"\"]\nexclude: [\"re:[\"]\n", filter.Spec{}, []string{
			"line 1, column 11: filter.include[0]: an empty word",
			`line 2, column 11: filter.exclude[0]: "re:[": not an RE2 expression`,
		}},
		{"under filter, every problem", "url: https://example.org/\nfilter: {exclude: [\"\"], includ: []}\n", filter.Spec{}, []string{
			"line 2, column 20: filter.exclude[0]: an empty word",
			"line 2, column 25: filter.includ: unknown field; did you mean include?",
		}},
		{"unknown key", "exclud: [x]\n", filter.Spec{}, []string{"line 1, column 1: filter.exclud: unknown field; did you mean exclude?"}},
		{"not a list", "exclude: Sponsored\n", filter.Spec{}, []string{"line 1, column 10: filter.exclude: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := ParseFilter([]byte(tt.in))
			if tt.errs != nil {
				checkProblems(t, err, tt.errs)
				return
			}
			if err != nil || !spec.Equal(tt.want) {
				t.Fatalf("got %+v, %v; want %+v", spec, err, tt.want)
			}
		})
	}
}

// TestFilterLines: the /new form's and the preview's include and exclude
// fields, one entry a line: blank lines are skipped, a problem names the
// field and its line.
func TestFilterLines(t *testing.T) {
	spec, err := FilterLines("Gemeinderat\r\n\n  re:(?i)budget  \n", "Anzeige\nSponsored")
	if err != nil {
		t.Fatal(err)
	}
	want := filter.Spec{Include: []string{"Gemeinderat", "re:(?i)budget"}, Exclude: []string{"Anzeige", "Sponsored"}}
	if !spec.Equal(want) {
		t.Fatalf("got %+v, want %+v", spec, want)
	}
	_, err = FilterLines("ok\n\nre:(x\n", "re:[")
	checkProblems(t, err, []string{
		`line 3, column 1: filter.include: "re:(x": not an RE2 expression`,
		`line 1, column 1: filter.exclude: "re:[": not an RE2 expression`,
	})
}
