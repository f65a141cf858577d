package api

import (
	"net/http"
	"testing"

	"github.com/dynamo-rss/dynamo/storage/badger"
)

var _ Store = (*badger.DB)(nil)

// openDB opens an empty real Badger store in a temporary directory, closed
// when the test ends.

// TestFeedsOnStorage reads every request form in every format from the real
// storage (Badger) and checks titles, links, ids, dates and order as in
// TestFeedForms, then the 304 flow.
func TestFeedsOnStorage(t *testing.T) {
	db := openFixtureDB(t)
	s := newFDServer(t, db)
	for _, form := range fdForms() {
		for _, format := range fdFormats {
			t.Run(form.name+"/"+format, func(t *testing.T) {
				target := form.target + sep(form.target) + "type=" + format
				rec := fdDo(s, http.MethodGet, target)
				if rec.Code != http.StatusOK {
					t.Fatalf("GET %s = %d\n%s", target, rec.Code, rec.Body)
				}
				feed := parseFeed(t, rec.Body.Bytes())
				if feed.Title != form.title || len(feed.Items) != len(form.items) {
					t.Fatalf("feed %q with %d items, want %q with %d:\n%s", feed.Title, len(feed.Items), form.title, len(form.items), rec.Body)
				}
				for i, w := range form.items {
					got := feed.Items[i]
					wantLink := w.link
					if wantLink[0] == '/' {
						wantLink = fdBase + wantLink + sep(wantLink) + "type=" + format
					}
					if got.Title != w.title || got.Link != wantLink {
						t.Errorf("item %d = %q %q, want %q %q", i, got.Title, got.Link, w.title, wantLink)
					}
					if format == "rss2" && got.GUID != w.guid {
						t.Errorf("item %d guid = %q, want %q", i, got.GUID, w.guid)
					}
					if got.PublishedParsed == nil || !got.PublishedParsed.Equal(w.date) {
						t.Errorf("item %d date = %v, want %v", i, got.PublishedParsed, w.date)
					}
				}
				again := fdDo(s, http.MethodGet, target, "If-None-Match", rec.Header().Get("ETag"))
				if again.Code != http.StatusNotModified {
					t.Errorf("conditional GET = %d, want 304", again.Code)
				}
			})
		}
	}
	for _, target := range []string{"/resources/nope", "/resources/news?index=4"} {
		svcProblem(t, fdDo(s, http.MethodGet, target), http.StatusNotFound)
	}
}
