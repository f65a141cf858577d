package api

import (
	"net/url"
	"strings"
	"testing"
	"time"
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
		if got := ShownText(tc.in); got != tc.want {
			t.Errorf("ShownText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	u, err := url.Parse("/register?url=http%3A%2F%2Fu%3Ap%40host%2F&x=1")
	if err != nil {
		t.Fatal(err)
	}
	if got := loggedURI(u); strings.Contains(got, "u%3Ap") || !strings.Contains(got, "x=1") {
		t.Errorf("loggedURI = %q, want the query's URL without its credentials", got)
	}
}

func TestHumanDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{1500 * time.Millisecond, "2s"},
		{90 * time.Second, "1m30s"},
		{15 * time.Minute, "15m"},
		{26*time.Hour + 5*time.Second, "1d2h5s"},
		{250 * time.Millisecond, "250ms"},
	} {
		if got := HumanDuration(tc.d); got != tc.want {
			t.Errorf("HumanDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestRelative checks the relative times the pages show: seconds dropped
// past an hour, minutes past a day, "now" at zero.
func TestRelative(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "now"},
		{time.Second, "in 1s"},
		{-time.Second, "1s ago"},
		{4*time.Minute + 10*time.Second, "in 4m10s"},
		{-(time.Hour - time.Second), "59m59s ago"},
		{time.Hour + 59*time.Second, "in 1h"},
		{-(2*time.Hour + 5*time.Minute + 30*time.Second), "2h5m ago"},
		{24*time.Hour - time.Second, "in 23h59m"},
		{24*time.Hour + 59*time.Minute, "in 1d"},
		{-(3*24*time.Hour + 4*time.Hour + 30*time.Minute), "3d4h ago"},
		{-2 * time.Millisecond, "2ms ago"},
	} {
		if got := string(appendRelative(nil, tc.d)); got != tc.want {
			t.Errorf("appendRelative(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
