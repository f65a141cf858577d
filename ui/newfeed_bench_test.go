package ui

import (
	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/apitest"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamo-rss/dynamo/internal/session"
)

// BenchmarkOfferPage prices GET /new?fetch=: what a kept page offers, its
// annotations, suggest's proposals and their first items, extracted again
// on every render (a preview costs the same plus one extraction).
func BenchmarkOfferPage(b *testing.B) {
	srv, s := mountBoth(b, api.Options{Store: &apitest.SvcStore{}, AdminToken: "t", Registerer: prometheus.NewRegistry()})
	sess := session.New(s.now())
	cookie, err := s.sessions.Load().Encode(sess)
	if err != nil {
		b.Fatal(err)
	}
	id := s.fetched.put(&fetchedPage{SessionID: sess.ID, Requested: "https://example.org/list.html",
		Page: api.Page{Body: []byte(listPage), ContentType: "text/html; charset=utf-8", URL: "https://example.org/list.html"}}, s.now())
	b.ReportAllocs()
	b.SetBytes(int64(len(listPage)))
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, "/new?fetch="+id, nil)
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: cookie})
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET /new?fetch=: %d", rec.Code)
		}
	}
}
