package ui

import (
	"context"
	"encoding/json"
	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/apitest"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/config"
)

// TestDefinitionErrorsPlacement checks where each of the registry's
// mistakes is shown on the add form, and how: next to its own field, the
// field's name dropped where the field shows it, kept for the select block
// (whose keys it names) and for the form's own messages.
func TestDefinitionErrorsPlacement(t *testing.T) {
	for _, tc := range []struct {
		id, def     string
		field       string
		has, hasNot string
	}{
		{"a", `{"url":"ftp://x"}`, fieldURL, "http", "url:"},
		{"a b", `{"url":"https://x"}`, fieldID, "", "id:"},
		{"a", `{"url":"https://x","weight":-1}`, fieldWeight, "", "weight:"},
		{"a", `{"url":"https://x","policy":{"kind":"flat","interval":"soon"}}`, fieldInterval, `invalid duration "soon"`, "policy.interval:"},
		{"a", `{"url":"https://x","policy":{"kind":"sometimes"}}`, fieldPolicy, `"sometimes"`, "policy.kind:"},
		{"a", `{"url":"https://x","select":{"item":"li","title":"h3["}}`, fieldSelect, "select.title", ""},
		{"a", `{"url":"https://x","max_versions":2}`, "", "max_versions", ""},
	} {
		_, _, err := api.RegisterDefinition(context.Background(), apitest.NewFakeRegistry(), tc.id, []byte(tc.def))
		if err == nil {
			t.Fatalf("%s: no error", tc.def)
		}
		fe := fieldErrors{}
		definitionErrors(err, fe)
		msg, ok := fe[tc.field]
		if !ok || len(fe) != 1 {
			t.Errorf("%s (id %q): errors %q, want one on field %q", tc.def, tc.id, fe, tc.field)
			continue
		}
		if !strings.Contains(msg, tc.has) || tc.hasNot != "" && strings.Contains(msg, tc.hasNot) {
			t.Errorf("%s: message %q, want it to have %q and not %q", tc.def, msg, tc.has, tc.hasNot)
		}
	}

	// Two mistakes on one field are both shown.
	fe := fieldErrors{}
	fe.add(fieldURL, "first")
	fe.add(fieldURL, "second")
	fe.add(fieldID, "third")
	if fe[fieldURL] != "first; second" || fe[fieldID] != "third" {
		t.Errorf("fieldErrors = %q", fe)
	}
}

// TestPageURL checks the url field: trimmed, absolute, http or https, with
// a host; the message quotes what was entered.
func TestPageURL(t *testing.T) {
	for raw, want := range map[string]string{
		" https://example.org/ ": "https://example.org/",
		"http://example.org":     "http://example.org",
		"HTTPS://example.org/a":  "HTTPS://example.org/a",
	} {
		if got, err := pageURL(raw); err != nil || got != want {
			t.Errorf("pageURL(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{"", "   ", "example.org", "/news", "ftp://example.org/", "https:example.org", "http:///p", "mailto:a@example.org", "https://exa mple.org/"} {
		if _, err := pageURL(raw); err == nil || !strings.Contains(err.Error(), "http://") || !strings.Contains(err.Error(), strings.TrimSpace(raw)) {
			t.Errorf("pageURL(%q): %v, want the address refused and quoted", raw, err)
		}
	}
}

// TestSelectBlockShapes: the select field takes a bare block, whatever its
// number of keys (one: item alone), or a document whose only key is select
// (as `dynamo suggest` prints it), which is unwrapped; a document with more
// than select is kept whole, so that registering it reports the extra keys
// instead of dropping them silently.
func TestSelectBlockShapes(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"item: li\n", `{"item":"li"}`},
		{"item: li\ntitle: a\n", `{"item":"li","title":"a"}`},
		{"select:\n  item: li\n  title: a\n", `{"item":"li","title":"a"}`},
		{"select:\n  item: li\nweight: 2\n", `{"select":{"item":"li"},"weight":2}`},
	} {
		block, err := selectBlock(tc.text)
		if err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		body, err := json.Marshal(block)
		if err != nil {
			t.Fatal(err)
		}
		got := string(body)
		if got != tc.want {
			t.Errorf("%q: %s, want %s", tc.text, got, tc.want)
		}
		_, err = config.ParseResource([]byte(`{"url":"https://x/","select":`+got+`}`), "a", config.Default().Poller)
		if extra := strings.Contains(tc.text, "weight"); (err != nil) != extra {
			t.Errorf("%q: registering it: %v", tc.text, err)
		}
	}
}

// TestDefinitionPolicy: a policy kind without an interval, or an interval
// without a kind, is still sent (the registry fills in the other), so the
// person's choice is not replaced by the default policy.
func TestDefinitionPolicy(t *testing.T) {
	for _, tc := range []struct {
		f    addForm
		want string
	}{
		{addForm{URL: "https://x/", ID: "a", Policy: "flat", Errors: fieldErrors{}}, `{"policy":{"kind":"flat"},"url":"https://x/"}`},
		{addForm{URL: "https://x/", ID: "a", Interval: "2h", Errors: fieldErrors{}}, `{"policy":{"interval":"2h"},"url":"https://x/"}`},
		{addForm{URL: "https://x/", ID: "a", Errors: fieldErrors{}}, `{"url":"https://x/"}`},
	} {
		if got := strings.TrimSpace(string(tc.f.definition())); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.f, got, tc.want)
		}
	}
}

// TestAddFormNestedSelect: the /new form's select field nested too deeply
// is an error beside that field, naming where.
func TestAddFormNestedSelect(t *testing.T) {
	f := addForm{URL: "https://example.org/", ID: "x", Select: "item: li\ntitle: " + strings.Repeat("[", 30000) + strings.Repeat("]", 30000), Errors: fieldErrors{}}
	if f.definition() != nil || !strings.Contains(f.Errors[fieldSelect], "select.title[0]") || !strings.Contains(f.Errors[fieldSelect], "nested deeper than 64 levels") {
		t.Fatalf("errors %q", f.Errors)
	}
}
