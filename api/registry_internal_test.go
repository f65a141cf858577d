package api

import (
	"net/url"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/config"
)

// TestDeriveID checks the ids proposed for a page: host and path, lower
// case, other characters folded to '-', cut to 120 bytes so that a suffix
// still fits, made unique by -2, -3…, and always a valid id.
func TestDeriveID(t *testing.T) {
	long := strings.Repeat("a", 200)
	for _, tc := range []struct {
		raw   string
		taken []string
		want  string
	}{
		{"https://Example.org/news.html", nil, "example.org-news.html"},
		{"https://example.org/", nil, "example.org"},
		{"https://example.org/a b/c?d", nil, "example.org-a-b-c"},
		{"https://example.org/news", []string{"example.org-news"}, "example.org-news-2"},
		{"https://example.org/news", []string{"example.org-news", "example.org-news-2"}, "example.org-news-3"},
		{"https:///", nil, "page"},
		{"https://e.org/" + long, nil, ("e.org-" + long)[:120]},
		{"https://e.org/" + long, []string{("e.org-" + long)[:120]}, ("e.org-" + long)[:120] + "-2"},
		{"https://e.org/" + long[:114], nil, "e.org-" + long[:114]},   // exactly 120
		{"https://e.org/" + long[:115], nil, ("e.org-" + long)[:120]}, // one over
	} {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		taken := func(id string) bool {
			for _, x := range tc.taken {
				if x == id {
					return true
				}
			}
			return false
		}
		got := DeriveID(u, taken)
		if got != tc.want || !config.ValidID(got) {
			t.Errorf("DeriveID(%s) = %q (valid %v), want %q", tc.raw, got, config.ValidID(got), tc.want)
		}
	}
}
