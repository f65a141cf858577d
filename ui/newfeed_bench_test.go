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

// BenchmarkPointOfferPage prices GET /new?fetch= with a picture (its SVG:
// each proposal's items outlined, a region over every element that could
// start an item) and, with "like", a list chosen by a click, beside
// BenchmarkOfferPage on the same page.
func BenchmarkPointOfferPage(b *testing.B) {
	srv, s := mountBoth(b, api.Options{Store: &apitest.SvcStore{}, AdminToken: "t", Registerer: prometheus.NewRegistry()})
	sess := session.New(s.now())
	cookie, err := s.sessions.Load().Encode(sess)
	if err != nil {
		b.Fatal(err)
	}
	page := api.Page{Body: []byte(listPage), ContentType: "text/html; charset=utf-8", URL: "https://example.org/list.html"}
	for _, c := range []struct {
		name    string
		picture bool
		query   string
	}{{"plain", false, ""}, {"picture", true, ""}, {"picture+like", true, "&like=12"}} {
		b.Run(c.name, func(b *testing.B) {
			fp := &fetchedPage{SessionID: sess.ID, Requested: page.URL, Page: page}
			if c.picture {
				fp.Picture = newPagePicture(page, layOut(listPage))
			}
			id := s.fetched.put(fp, s.now())
			b.ReportAllocs()
			b.SetBytes(int64(len(listPage)))
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, "/new?fetch="+id+c.query, nil)
				req.AddCookie(&http.Cookie{Name: sessionCookie, Value: cookie})
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("GET /new?fetch=: %d", rec.Code)
				}
			}
		})
	}
}
