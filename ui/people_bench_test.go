package ui

import (
	"context"
	"fmt"
	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/internal/apitest"
	"net/http"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// schemaItem is an item of testDoc: its id and title.
type schemaItem struct{ id, title string }

// testDoc is a version of resource id at ts with the given items.
func testDoc(id string, ts time.Time, items []schemaItem) *schema.Document {
	doc := &schema.Document{URL: "https://example.org/" + id + ".html", RSSID: id, Timestamp: ts,
		Channel: schema.Channel{Title: "Page " + id, Link: "https://example.org/" + id + ".html", Description: "A page"}}
	for i, it := range items {
		doc.Items = append(doc.Items, apitest.FDItem(i+1, it.id, it.title, "https://example.org/"+id+"/"+it.id, "About "+it.title))
	}
	return doc
}

// newHomeBench returns a server with n resources (stored and polled), each
// with a poll history of polls records.
func newHomeBench(tb testing.TB, n, polls int) *api.Server {
	tb.Helper()
	store := &apitest.SvcStore{}
	p := &histPoller{history: map[string][]api.PollRecord{}}
	h := testHistory(polls, fdNow)
	for i := range n {
		id := fmt.Sprintf("res%05d", i)
		store.Infos = append(store.Infos, storage.ResourceInfo{ID: id, URL: "https://example.org/" + id + ".html", Title: "Title of " + id, Versions: 3, LatestSeq: 3, Updated: fdNow.Add(-time.Hour)})
		p.List = append(p.List, api.ResourceStatus{ID: id, URL: "https://example.org/" + id + ".html", Policy: "smart", Interval: time.Hour, Tau: 2 * time.Hour, Alpha: 0.5,
			LastPoll: fdNow.Add(-time.Minute), NextPoll: fdNow.Add(time.Hour), LastOutcome: "unchanged", Polls: 10, Changes: 3})
		p.history[id] = h
	}
	return newFDServer(tb, store, func(o *api.Options) { o.Poller = p })
}

// BenchmarkHome10k renders / (its first page, and a filtered one) for
// 10,000 resources, each with 48 recent polls (a sparkline each).
func BenchmarkHome10k(b *testing.B) {
	s := newHomeBench(b, 10000, sparklinePolls)
	for _, target := range []string{"/", "/?page=100", "/?q=res0999"} {
		b.Run(target, func(b *testing.B) {
			for b.Loop() {
				if rec := fdDo(s, http.MethodGet, target); rec.Code != http.StatusOK {
					b.Fatalf("GET %s = %d", target, rec.Code)
				}
			}
		})
	}
}

// BenchmarkView1000 renders /view/{id} for a resource with 1,000 versions in
// a real store and 500 polls of history.
func BenchmarkView1000(b *testing.B) {
	db, err := badger.Open(b.TempDir(), badger.Options{NoSyncWrites: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() }) // a benchmark's store: nothing to check at close
	ctx := context.Background()
	for i := range 1000 {
		items := []schemaItem{{"steady", "Always there"}}
		for j := range 20 {
			k := i + j
			items = append(items, schemaItem{fmt.Sprintf("i%d", k), fmt.Sprintf("Item %d (rev %d)", k, i%3)})
		}
		if _, err := db.Save(ctx, testDoc("big", apitest.FDT0.Add(time.Duration(i)*time.Hour), items)); err != nil {
			b.Fatal(err)
		}
	}
	p := &histPoller{SvcPoller: apitest.SvcPoller{List: []api.ResourceStatus{{ID: "big", Policy: "smart", Tau: time.Hour}}},
		history: map[string][]api.PollRecord{"big": testHistory(500, fdNow)}}
	s := newFDServer(b, db, func(o *api.Options) { o.Poller = p })
	for _, target := range []string{"/view/big", "/view/big?page=50"} {
		b.Run(target, func(b *testing.B) {
			for b.Loop() {
				if rec := fdDo(s, http.MethodGet, target); rec.Code != http.StatusOK {
					b.Fatalf("GET %s = %d", target, rec.Code)
				}
			}
		})
	}
}
