package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// BenchmarkServeCachedFeed measures a cached feed through the whole
// middleware chain (log, metrics, recover, gzip check, body limit, deadline)
// on real storage: the request bench/serve.sh sends with wrk.
func BenchmarkServeCachedFeed(b *testing.B) {
	s := newBenchNewsServer(b)
	req := httptest.NewRequest(http.MethodGet, "/resources/bench?max=20", nil)
	benchServeCached(b, s, req)
}

// BenchmarkServeCachedFeedPage measures the same feed opened in a browser
// (its Accept prefers text/html, so it gets the feed as a page), with and
// without gzip, once the page was served: what a person reloading it costs.
func BenchmarkServeCachedFeedPage(b *testing.B) {
	s := newBenchNewsServer(b)
	for _, tc := range []struct{ name, encoding string }{{"identity", ""}, {"gzip", "gzip, deflate, br, zstd"}} {
		b.Run(tc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/resources/bench?max=20", nil)
			req.Header.Set("Accept", acceptFirefox)
			if tc.encoding != "" {
				req.Header.Set("Accept-Encoding", tc.encoding)
			}
			benchServeCached(b, s, req)
		})
	}
}

// BenchmarkFeedPageRender measures the same page when its age changed since
// it was cached (the clock moves a second per request): a miss that renders
// it again (and compresses it, for gzip) and replaces its entry, what a page
// read without pause costs about once a second per coding.
func BenchmarkFeedPageRender(b *testing.B) {
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	s := newBenchNewsServer(b, func(o *Options) {
		o.Now = func() time.Time { return now }
	})
	for _, tc := range []struct{ name, encoding string }{{"identity", ""}, {"gzip", "gzip, deflate, br, zstd"}} {
		b.Run(tc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/resources/bench?max=20", nil)
			req.Header.Set("Accept", acceptFirefox)
			if tc.encoding != "" {
				req.Header.Set("Accept-Encoding", tc.encoding)
			}
			misses := testutil.ToFloat64(s.feeds.cache.misses)
			n := 0
			b.ReportAllocs()
			w := &discardWriter{h: http.Header{}}
			for b.Loop() {
				now = now.Add(time.Second)
				clear(w.h)
				w.code = 0
				s.ServeHTTP(w, req)
				if w.code != http.StatusOK {
					b.Fatalf("status %d", w.code)
				}
				n++
			}
			if got := testutil.ToFloat64(s.feeds.cache.misses) - misses; got < float64(n) {
				b.Fatalf("%v misses for %d requests: the page came from the cache", got, n)
			}
		})
	}
}

// benchServeCached serves req once (filling the render cache), then measures
// serving it again.
func benchServeCached(b *testing.B, s *Server, req *http.Request) {
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	b.SetBytes(int64(rec.Body.Len()))
	b.ReportAllocs()
	w := &discardWriter{h: http.Header{}}
	for b.Loop() {
		clear(w.h)
		w.code = 0
		s.ServeHTTP(w, req)
		if w.code != http.StatusOK {
			b.Fatalf("status %d", w.code)
		}
	}
}

// newBenchNewsServer serves a resource of 10 versions of 40 items each from
// real storage.
func newBenchNewsServer(b *testing.B, mod ...func(*Options)) *Server {
	db, err := badger.Open(b.TempDir(), badger.Options{NoSyncWrites: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := db.Close(); err != nil {
			b.Error(err)
		}
	})
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	filler := strings.Repeat("The council met on Tuesday to discuss the harbour budget. ", 12)
	for v := range 10 {
		doc := &schema.Document{URL: "https://example.org/news.html", RSSID: "bench", Timestamp: t0.Add(time.Duration(v) * time.Hour),
			Channel: schema.Channel{Title: "Bench News", Link: "https://example.org/"}}
		for i := range 40 {
			n := 2*v + 40 - i
			doc.Items = append(doc.Items, schema.Item{Index: i + 1, ID: fmt.Sprintf("a%06d", n),
				Title: fmt.Sprintf("Article %d", n), Link: fmt.Sprintf("https://example.org/news/%d.html", n), Description: filler})
		}
		if _, err := db.Save(ctx, doc); err != nil {
			b.Fatal(err)
		}
	}
	opts := Options{Store: db}
	for _, m := range mod {
		m(&opts)
	}
	s, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// discardWriter is a ResponseWriter that keeps nothing but the status, so
// the benchmark counts the server's allocations, not a recorder's copy of
// the body (a real connection writes it out).
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return len(p), nil
}
func (w *discardWriter) WriteHeader(code int) { w.code = code }

// BenchmarkMiddleware is the chain's own cost, on a trivial route.
func BenchmarkMiddleware(b *testing.B) {
	s, err := New(Options{Store: &svcStore{}})
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
