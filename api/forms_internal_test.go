package api

import (
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
		_, err := config.ParseResource([]byte(tc.def), tc.id, config.Default().Poller)
		if err == nil {
			t.Fatalf("%s: no error", tc.def)
		}
		fe := fieldErrors{}
		definitionErrors(badDefinition(err), fe)
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
