package fetch

import (
	"net/url"
	"testing"
)

// TestSameOrigin: one origin is one scheme, host (any case) and port, a
// missing port being the scheme's default.
func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://h/", "https://h:443/x", true}, {"http://h/", "http://h:80/", true}, {"https://H.example/", "https://h.EXAMPLE/", true},
		{"HTTPS://h/", "https://h/", true}, {"http://[::1]/", "http://[::1]:80/", true},
		{"https://h/", "http://h/", false}, {"https://h:8443/", "http://h:8443/", false}, // https to http: in clear
		{"http://h:8080/", "http://h:8081/", false}, {"https://h/", "https://h:8443/", false}, {"http://h/", "http://h:443/", false},
		{"http://h/", "http://sub.h/", false}, {"http://h/", "http://h./", false}, {"http://127.0.0.1/", "http://localhost/", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := sameOrigin(a, b); got != tc.same {
			t.Errorf("sameOrigin(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
	if sameOrigin(nil, &url.URL{}) {
		t.Error("no URL is of an origin")
	}
}
