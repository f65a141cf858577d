package redact

import (
	"net/url"
	"strings"
	"testing"
)

// TestShownText hides the credentials of every URL in a text, up to the
// last "@" of the authority, and leaves everything else as written.
func TestShownText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"https://user:pass@host/a", "https://***@host/a"},
		{"https://user@host", "https://***@host"},
		{"https://user:p@ss@host/a?b=c@d", "https://***@host/a?b=c@d"},
		{`Get "http://u:p@10.0.0.1:8080/x": EOF`, `Get "http://***@10.0.0.1:8080/x": EOF`},
		{`<a href="//u:p@host/">x</a> and https://a:b@c/`, `<a href="//***@host/">x</a> and https://***@c/`},
		{"mail me at someone@example.org", "mail me at someone@example.org"},
		{"https://host/path@thing", "https://host/path@thing"},
		{"no url here", "no url here"},
	}
	for _, tc := range cases {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	u, err := url.Parse("/register?url=http%3A%2F%2Fu%3Ap%40host%2F&x=1")
	if err != nil {
		t.Fatal(err)
	}
	if got := URI(u); strings.Contains(got, "u%3Ap") || !strings.Contains(got, "x=1") {
		t.Errorf("URI = %q, want the query's URL without its credentials", got)
	}
}
