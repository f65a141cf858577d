package config

import (
	"errors"
	"strings"
	"testing"
)

func TestSelectValidation(t *testing.T) {
	const head = "resources:\n  - id: ok\n    url: https://example.org/\n  - id: town\n    url: https://example.org/town/\n"
	tests := []struct {
		name  string
		block string
		paths []string // the fields named; none: valid
	}{
		{"valid", `    select: {item: "div.notice", title: "h3", link: "h3 a @href", date: "time @datetime", id: "@data-id", channel: {title: "h1", description: "meta[name=description] @content"}}`, nil},
		{"xpath", `    select: {item: "xpath://table[@id='t']//tr[td]", title: "xpath:./td[2]"}`, nil},
		{"bad title", `    select: {item: "div", title: "h3 >"}`, []string{"$.resources[1].select.title"}},
		{"bad channel and item", `    select: {item: "div[", channel: {description: "xpath://a["}}`, []string{"$.resources[1].select.item", "$.resources[1].select.channel.description"}},
		{"missing item", `    select: {title: "h3"}`, []string{"$.resources[1].select.item"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(head + tt.block + "\n"))
			var got []string
			if err != nil {
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					var fe *FieldError
					if !errors.As(e, &fe) {
						t.Fatalf("%v is not a FieldError", e)
					}
					if fe.Line != 6 {
						t.Errorf("%v: line %d, want 6", fe, fe.Line)
					}
					got = append(got, fe.Path)
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.paths, " ") {
				t.Fatalf("errors %v, want %v (%v)", got, tt.paths, err)
			}
		})
	}
	// A selector that does not compile is quoted in its message; a missing
	// one is not quoted as "".
	_, err := Parse([]byte(head + `    select: {item: "div[", title: "h3"}` + "\n"))
	if err == nil || !strings.Contains(err.Error(), `select.item: "div[": `) {
		t.Errorf("bad item: %v, want the selector quoted", err)
	}
	_, err = Parse([]byte(head + `    select: {title: "h3"}` + "\n"))
	if err == nil || strings.Contains(err.Error(), `""`) {
		t.Errorf("missing item: %v, want no empty selector quoted", err)
	}
}

func TestParseResourceSelectJSON(t *testing.T) {
	r, err := ParseResource([]byte(`{"url": "https://example.org/t/", "select": {"item": "li.news", "title": "a", "link": "a @href", "channel": {"title": "h1"}}}`), "t", Default().Poller)
	if err != nil {
		t.Fatal(err)
	}
	if r.Select.Item != "li.news" || r.Select.Link != "a @href" || r.Select.Channel.Title != "h1" {
		t.Fatalf("select %+v", r.Select)
	}
	_, err = ParseResource([]byte(`{"url": "https://example.org/t/", "select": {"item": "li.news", "title": "a:nope("}}`), "t", Default().Poller)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Path != "$.select.title" {
		t.Fatalf("err %v, want a FieldError at $.select.title", err)
	}
	_, err = ParseResource([]byte(`{"url": "https://example.org/t/", "select": {"item": "li", "titel": "a"}}`), "t", Default().Poller)
	if err == nil || !strings.Contains(err.Error(), "titel") {
		t.Fatalf("unknown key: err %v", err)
	}
}

func TestParseSelect(t *testing.T) {
	tests := []struct {
		name, in string
		item     string
		errPath  string
	}{
		{"bare yaml", "item: \"div.a\"\ntitle: h3\n", "div.a", ""},
		{"wrapped yaml", "select:\n  item: \"div.a\"\n  title: h3\n", "div.a", ""},
		{"json", `{"item": "tr:has(a)", "link": "a @href"}`, "tr:has(a)", ""},
		{"wrapped json", `{"select": {"item": "tr"}}`, "tr", ""},
		{"bad", "item: \"div.a\"\nlink: \"a[\"\n", "", "$.select.link"},
		{"empty", "{}", "", "$.select"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := ParseSelect([]byte(tt.in))
			if tt.errPath != "" {
				var fe *FieldError
				if !errors.As(err, &fe) || fe.Path != tt.errPath {
					t.Fatalf("err %v, want a FieldError at %s", err, tt.errPath)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sel.Spec().Item != tt.item {
				t.Fatalf("item %q", sel.Spec().Item)
			}
		})
	}
	if _, err := ParseSelect([]byte("item: div\ntitel: h3\n")); err == nil {
		t.Fatal("an unknown key is accepted")
	}
}
