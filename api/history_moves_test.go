package api

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// TestVersionPermalinkPrunedMeanwhile: a reader follows the permalink of
// news's oldest version, v1; the catalog read says 3 versions are kept, and
// retention removes v1 before it is read. The history moved, so the feed is
// computed again from the new catalog, which says v1 was removed: 410
// Gone, as for any pruned version, not the 404 of the first attempt's read.
func TestVersionPermalinkPrunedMeanwhile(t *testing.T) {
	store := newMovingStore(fdFixture())
	s := newFDServer(t, store)
	store.AfterInfo = func() { store.Prune("news") }
	rec := fdDo(s, http.MethodGet, "/resources/news/versions/1")
	p := svcProblem(t, rec, http.StatusGone)
	if !strings.Contains(p.Detail, "retention") {
		t.Errorf("detail %q does not say retention removed it", p.Detail)
	}
}

// TestVersionsFeedAfterRetention checks the versions feed of a resource
// whose oldest versions retention removed: the oldest kept version cannot
// be compared, and its entry says so after counting its items ("3 items;
// the versions before it were removed…"), in the text and the HTML.
func TestVersionsFeedAfterRetention(t *testing.T) {
	store := newMovingStore(fdFixture())
	store.Prune("news") // v1 removed: v2 (b, a) is the oldest kept
	s := newFDServer(t, store)
	for _, f := range []string{"rss2", "atom"} {
		feed := parseFeed(t, fdDo(s, http.MethodGet, "/resources/news?type="+f).Body.Bytes())
		if len(feed.Items) != 2 {
			t.Fatalf("%s: %d entries, want 2 (v3, v2)", f, len(feed.Items))
		}
		oldest := feed.Items[1]
		if oldest.Link != fdBase+"/resources/news/versions/2" {
			t.Fatalf("%s: oldest entry links %s, want version 2", f, oldest.Link)
		}
		const want = "2 items; the versions before it were removed by the retention policy: nothing to compare with"
		if oldest.Title != "2 items" || !strings.Contains(oldest.Description, want) && !strings.Contains(oldest.Content, want) {
			t.Errorf("%s: oldest entry %q, description %q, content %q; want the item count then why nothing is compared", f, oldest.Title, oldest.Description, oldest.Content)
		}
	}
}

// TestNewestVersionSavedDuringBuild: a reader asks for the newest version
// (?index=1) of news, which keeps 3 versions; the build reads v3, and a
// poll then stores v4 while retention removes v1 (the version count stays
// 3, the latest seq moves). The history moved, so the feed is built again:
// the reader gets v4, with its new item, and the ETag that names v4, not
// v3 under a tag that a fresh request would no longer give.
func TestNewestVersionSavedDuringBuild(t *testing.T) {
	store := newMovingStore(fdFixture())
	s := newFDServer(t, store)
	store.BeforeInfo = func(call int) {
		if call == 2 { // historyMoved's check, after the build's reads
			store.Save(newsVersion4())
			store.Prune("news")
		}
	}
	rec := fdDo(s, http.MethodGet, "/resources/news?index=1&type=rss2")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET ?index=1 = %d\n%s", rec.Code, rec.Body)
	}
	if !strings.Contains(rec.Body.String(), "Tram line 4 opens") {
		t.Errorf("?index=1 with v4 stored during the build serves v3:\n%s", rec.Body)
	}
	again := fdDo(s, http.MethodGet, "/resources/news?index=1&type=rss2")
	if tag := rec.Header().Get("ETag"); tag == "" || tag != again.Header().Get("ETag") {
		t.Errorf("ETag %q, a fresh request's %q: want the same", tag, again.Header().Get("ETag"))
	}
}

// failVersionStore is an fdStore whose reads of the version at index n
// fail with err.
type failVersionStore struct {
	*fdStore
	n   int
	err error
}

func (f *failVersionStore) Version(ctx context.Context, id string, n int) (*schema.Document, storage.VersionInfo, error) {
	if n == f.n {
		return nil, storage.VersionInfo{}, f.err
	}
	return f.fdStore.Version(ctx, id, n)
}

// TestVersionsFeedReadFailureLogged: when the store fails to read the
// version a versions feed compares the newest with, the answer is a 500
// and the operator's log line says which resource's read failed, as for
// every other read of a feed's build ("read \"news\": …").
func TestVersionsFeedReadFailureLogged(t *testing.T) {
	var logs bytes.Buffer
	store := &failVersionStore{fdStore: fdFixture(), n: 2, err: errors.New("checksum mismatch")}
	s := newFDServer(t, store, func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	svcProblem(t, fdDo(s, http.MethodGet, "/resources/news?type=rss2"), http.StatusInternalServerError)
	if !strings.Contains(logs.String(), `read \"news\": checksum mismatch`) {
		t.Errorf("the log does not name the resource whose read failed:\n%s", logs.String())
	}
}
