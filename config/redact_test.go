package config

import "testing"

func TestRedactURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"https://example.com/news", "https://example.com/news"},
		{"https://user:pass@example.com/news?q=1", "https://***@example.com/news?q=1"},
		{"https://user@example.com:8443/", "https://***@example.com:8443/"},
		{"http://:secret@example.com/", "http://***@example.com/"},
		{"https://example.com/a@b", "https://example.com/a@b"},
		{"https://example.com/?mail=a@b.c", "https://example.com/?mail=a@b.c"},
		{"https://us%zzer:pa@ss@example.com/x", "https://***@example.com/x"},
		{"not a url", "not a url"},
	}
	for _, c := range cases {
		if got := RedactURL(c.in); got != c.want {
			t.Errorf("RedactURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestHasCredentials(t *testing.T) {
	for in, want := range map[string]bool{
		"https://example.com/":            false,
		"https://u:p@example.com/":        true,
		"https://u@example.com/":          true,
		"https://example.com/?a=b@c":      false,
		"https://us%zzer:p@example.com/x": true,
	} {
		if got := HasCredentials(in); got != want {
			t.Errorf("HasCredentials(%q) = %v, want %v", in, got, want)
		}
	}
}
