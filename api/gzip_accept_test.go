package api

import (
	"net/http"
	"strings"
	"testing"
)

// TestAcceptEncodingQualities checks that gzip is used exactly when the
// client's Accept-Encoding gives it a non-zero quality, the explicit coding
// taking precedence over "*" wherever each stands (RFC 9110 §12.5.3), for
// feeds (compressed by their own code) and pages (by the middleware), and
// that both vary by Accept-Encoding either way.
func TestAcceptEncodingQualities(t *testing.T) {
	db := openFixtureDB(t)
	s := newFDServer(t, db)
	tests := []struct {
		header string
		gzip   bool
	}{
		{"", false},
		{"gzip", true},
		{"gzip, deflate, br", true},
		{"x-gzip", true},
		{"GZIP;Q=0.5", true},
		{"gzip;q=0", false},
		{"br, gzip;q=0", false},
		{"identity", false},
		{"*", true},
		{"*;q=0", false},
		{"*;q=0, gzip", true},
		{"gzip, *;q=0", true},
		{"gzip;q=0, *", false},
		{"*, gzip;q=0", false},
		// A parameter other than q is no quality, whatever its value.
		{"gzip;level=0", true},
		{"*;v=0", true},
	}
	for _, target := range []string{"/resources/news", "/"} {
		for _, tt := range tests {
			rec := fdDo(s, http.MethodGet, target, "Accept-Encoding", tt.header)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s = %d", target, rec.Code)
			}
			want := tt.gzip
			if target == "/" && !strings.Contains(tt.header, "gzip") {
				want = false // echo's middleware compresses for a named gzip only; identity is always acceptable
			}
			if got := rec.Header().Get("Content-Encoding") == "gzip"; got != want {
				t.Errorf("GET %s, Accept-Encoding %q: gzip %v, want %v", target, tt.header, got, want)
			}
			if vary := strings.Join(rec.Header().Values("Vary"), ","); !strings.Contains(vary, "Accept-Encoding") {
				t.Errorf("GET %s, Accept-Encoding %q: Vary = %q, want Accept-Encoding in it", target, tt.header, vary)
			}
		}
	}
}

// TestVaryListsEachFieldOnce checks that feeds, feed pages and pages name
// each field once in Vary, whatever the client accepts.
func TestVaryListsEachFieldOnce(t *testing.T) {
	db := openFixtureDB(t)
	s := newFDServer(t, db)
	for _, target := range []string{"/resources/news", "/resources", "/"} {
		for _, accept := range []string{"", acceptFirefox} {
			for _, enc := range []string{"", "gzip", "gzip;q=0"} {
				rec := fdDo(s, http.MethodGet, target, "Accept", accept, "Accept-Encoding", enc)
				seen := map[string]bool{}
				for _, v := range rec.Header().Values("Vary") {
					for f := range strings.SplitSeq(v, ",") {
						f = strings.TrimSpace(f)
						if seen[f] {
							t.Errorf("GET %s (Accept %q, Accept-Encoding %q): Vary %q names %s twice", target, accept, enc, rec.Header().Values("Vary"), f)
						}
						seen[f] = true
					}
				}
				if !seen["Accept-Encoding"] || strings.HasPrefix(target, "/resources") && !seen["Accept"] {
					t.Errorf("GET %s (Accept %q, Accept-Encoding %q): Vary %q", target, accept, enc, rec.Header().Values("Vary"))
				}
			}
		}
	}
}
