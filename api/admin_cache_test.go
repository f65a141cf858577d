package api

import (
	"strings"
	"testing"
)

// TestAdminAnswersAreNeverStored checks that every admin answer, with the
// right token or not, says Cache-Control: no-store: poll states, the
// resource list and pprof are for the token holder, and no cache (a shared
// one that ignores Authorization, or a browser's heuristic freshness) keeps
// them.
func TestAdminAnswersAreNeverStored(t *testing.T) {
	store, poller := svcFixture()
	s := newSvcServer(t, Options{Store: store, Poller: poller, AdminToken: "tok"})
	for _, tc := range []struct{ method, target, auth string }{
		{"GET", "/admin/resources/news", "Bearer tok"},
		{"POST", "/admin/resources/news/poll", "Bearer tok"},
		{"GET", "/admin/debug/pprof/", "Bearer tok"},
		{"GET", "/admin/resources/news", ""},
		{"GET", "/admin/resources/nope", "Bearer tok"},
	} {
		rec := svcDo(s, tc.method, tc.target, nil, "Authorization", tc.auth)
		if cc := rec.Header().Get("Cache-Control"); !strings.Contains(cc, "no-store") {
			t.Errorf("%s %s (%q) = %d, Cache-Control %q, want no-store", tc.method, tc.target, tc.auth, rec.Code, cc)
		}
	}
}
