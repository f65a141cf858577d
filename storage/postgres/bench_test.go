package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
	"github.com/dynamo-rss/dynamo/storage/postgres"
	"github.com/dynamo-rss/dynamo/storage/postgres/pgtest"
)

// page is a 20-item document of resource id whose newest item is n: each
// save brings one new item and drops the oldest, as a news page does.
func page(id string, n int) *schema.Document {
	items := make([]schema.Item, 0, 20)
	for k := n; k > n-20; k-- {
		items = append(items, it(fmt.Sprintf("item-%d", k), fmt.Sprintf("Council news number %d", k)))
	}
	return doc(id, n, items...)
}

// A changed save: one version, 20 item upserts, the resource row.
func BenchmarkSave(b *testing.B) {
	s := openTest(b)
	ctx := context.Background()
	docs := make([]*schema.Document, b.N)
	for i := range docs {
		docs[i] = page("r", i+20)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Save(ctx, docs[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// An unchanged save: the row lock and a hash comparison, nothing written.
func BenchmarkSaveUnchanged(b *testing.B) {
	s := openTest(b)
	ctx := context.Background()
	d := page("r", 20)
	mustSave(b, s, d)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		res, err := s.Save(ctx, d)
		if err != nil || res.Changed {
			b.Fatal(res, err)
		}
	}
}

// One leased poll that found nothing new (a 304): Acquire, then Complete
// with the poll state and next due time.
func BenchmarkAcquireComplete(b *testing.B) {
	s := openTest(b)
	ctx := context.Background()
	state := make([]byte, 300)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		now := t0.Add(time.Duration(i) * time.Minute)
		id := fmt.Sprintf("r%d", i%100)
		l, err := s.Acquire(ctx, storage.LeaseRequest{ID: id, Host: id + ".example", Now: now, Lease: 10 * time.Second, HostInterval: time.Second})
		if err != nil || !l.Granted {
			b.Fatal(l, err)
		}
		if _, err := s.Complete(ctx, id, nil, func(storage.SaveResult) ([]byte, time.Time, error) { return state, now.Add(time.Minute), nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// A keyword query over 2,000 items.
func BenchmarkItemsKeyword(b *testing.B) {
	s := openTest(b)
	ctx := context.Background()
	for n := 20; n < 2000; n += 20 {
		mustSave(b, s, page("r", n))
	}
	q := storage.ItemQuery{Max: 20, Terms: schema.Terms{schema.NewTerm(schema.And, schema.FieldTitle, "NUMBER 1")}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		items, err := s.Items(ctx, "r", q)
		if err != nil || len(items) != 20 {
			b.Fatal(len(items), err)
		}
	}
}

// Resource as the feed handler calls it on every request: served from the
// info cache once the listener is up, versus the database round trip it
// costs uncached.
func BenchmarkResource(b *testing.B) {
	dsn := pgtest.DSN(b)
	s := openAt(b, dsn, "node")
	ctx := context.Background()
	mustSave(b, s, page("r", 20))
	deadline := time.Now().Add(10 * time.Second)
	for !postgres.Cached(s, "r") {
		if time.Now().After(deadline) {
			b.Fatal("not cached")
		}
		if _, err := s.Resource(ctx, "r"); err != nil {
			b.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Resource(ctx, "r"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("uncached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := postgres.ResourceUncached(s, ctx, "r"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkIngestBesideBadger stores the same versions with the same
// number of concurrent savers (the poller's workers: 8, then 32) into
// PostgreSQL and into Badger (synced, the default), in one run, and reports
// versions/s for each: 64 resources × 40 versions of a 20-item page.
func BenchmarkIngestBesideBadger(b *testing.B) {
	const resources, versions = 64, 40
	for _, workers := range []int{8, 32} {
		for _, driver := range []string{"postgres", "badger"} {
			b.Run(fmt.Sprintf("%s/workers=%d", driver, workers), func(b *testing.B) {
				for b.Loop() {
					var s storage.Store
					if driver == "postgres" {
						s = openTest(b)
					} else {
						db, err := badger.Open(b.TempDir(), badger.Options{})
						if err != nil {
							b.Fatal(err)
						}
						b.Cleanup(func() { _ = db.Close() })
						s = db
					}
					jobs := make(chan *schema.Document)
					var wg sync.WaitGroup
					errs := make(chan error, workers)
					for range workers {
						wg.Go(func() {
							for d := range jobs {
								if _, err := s.Save(context.Background(), d); err != nil {
									errs <- err
									return
								}
							}
						})
					}
					start := time.Now()
					// Resource r's versions in order, interleaved across resources.
					for v := range versions {
						for r := range resources {
							jobs <- page(fmt.Sprintf("r%d", r), v+20)
						}
					}
					close(jobs)
					wg.Wait()
					select {
					case err := <-errs:
						b.Fatal(err)
					default:
					}
					b.ReportMetric(float64(resources*versions)/time.Since(start).Seconds(), "versions/s")
				}
			})
		}
	}
}
