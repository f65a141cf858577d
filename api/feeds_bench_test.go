package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// benchDoc is a page of n items of about 1 KB each (title, link, a long
// description, a date extension and content:encoded), about 20 KB rendered for n = 20.
func benchDoc(id string, at time.Time, first, n int) *schema.Document {
	doc := &schema.Document{URL: "https://example.org/" + id + "/", RSSID: id, Timestamp: at,
		Channel: schema.Channel{Title: "Bench " + id, Link: "https://example.org/" + id + "/", Description: "A page for benchmarks"}}
	for i := range n {
		k := first + i
		desc := fmt.Sprintf("Item %d of the benchmark page. ", k) + strings.Repeat("Some words that make up a description of reasonable length. ", 6)
		doc.Items = append(doc.Items, schema.Item{
			Index: i + 1, ID: fmt.Sprintf("item-%d", k),
			Title:       fmt.Sprintf("Headline number %d about the town", k),
			Link:        fmt.Sprintf("https://example.org/%s/%d.html", id, k),
			Description: desc,
			Extensions: schema.Extensions{
				{URI: schema.DCNamespace, Prefix: "dc", LocalName: "date", Value: at.Add(-time.Duration(k) * time.Minute).UTC().Format(time.RFC3339)},
				{URI: schema.ContentNamespace, Prefix: "content", LocalName: "encoded", Value: "<p>" + desc + "</p>"},
			},
		})
	}
	return doc
}

// BenchmarkFeedRender serves ?max=20 (about 20 KB) in each format through
// the handler, from the render cache and rendering every time.
func BenchmarkFeedRender(b *testing.B) {
	store := newFDStore()
	store.Save(benchDoc("bench", fdT0, 0, 20))
	for _, format := range fdFormats {
		for _, mode := range []string{"cached", "uncached"} {
			b.Run(format+"/"+mode, func(b *testing.B) {
				s := newFDServer(b, store, func(o *Options) {
					o.Registerer = nil
					if mode == "uncached" {
						o.CacheBytes = -1
					}
				})
				target := "/resources/bench?max=20&type=" + format
				b.ReportAllocs()
				var size int
				for b.Loop() {
					rec := httptest.NewRecorder()
					s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
					if rec.Code != http.StatusOK {
						b.Fatalf("status %d", rec.Code)
					}
					size = rec.Body.Len()
				}
				b.SetBytes(int64(size))
			})
		}
	}
}

// BenchmarkKeywordQuery100k serves an uncached keyword query over the
// history of a resource with 100,000 distinct items in real storage (Badger):
// 100 versions of 1,000 new items each; the term matches 1 item in 5,000 (20 in all), so
// the item index is scanned whole for max=20.
func BenchmarkKeywordQuery100k(b *testing.B) {
	db, err := badger.Open(b.TempDir(), badger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := db.Close(); err != nil {
			b.Error(err)
		}
	})
	ctx := context.Background()
	for v := range 100 {
		doc := benchDoc("big", fdT0.Add(time.Duration(v)*time.Hour), v*1000, 1000)
		for i := range doc.Items {
			if (v*1000+i)%5000 == 4999 {
				doc.Items[i].Title += " needle"
			}
		}
		if _, err := db.Save(ctx, doc); err != nil {
			b.Fatal(err)
		}
	}
	s := newFDServer(b, db, func(o *Options) { o.Registerer, o.CacheBytes = nil, -1 })
	for _, q := range []string{"max=20&title=needle", "max=20&title=needle&op=or&desc=nowhere"} {
		b.Run(q, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/resources/big?type=rss2&"+q, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
				if n := strings.Count(rec.Body.String(), "<item>"); n != 20 {
					b.Fatalf("%d items, want 20", n)
				}
			}
		})
	}
}

// BenchmarkVersionsFeedRender serves the versions feed of a resource with
// 120 versions on Badger, uncached: each entry says what its version
// changed, so the newest 50 documents are read and compared.
func BenchmarkVersionsFeedRender(b *testing.B) {
	db := openDB(b)
	for v := range 120 {
		if _, err := db.Save(context.Background(), benchDoc("hist", fdT0.Add(time.Duration(v)*time.Hour), v, 20)); err != nil {
			b.Fatal(err)
		}
	}
	s := newFDServer(b, db, func(o *Options) { o.Registerer, o.CacheBytes = nil, -1 })
	b.ReportAllocs()
	var size int
	for b.Loop() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/resources/hist?type=atom", nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
		size = rec.Body.Len()
	}
	b.SetBytes(int64(size))
}
