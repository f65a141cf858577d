package api

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// movingStore is an fdStore whose history moves as a real one does: prune
// removes the oldest versions, which keep their sequence numbers elsewhere
// (the kept ones do not renumber), and afterInfo, when set, runs once just
// after a Resource call has read the catalog, so that a save or a prune
// falls deterministically between a handler's catalog read and its history
// reads; beforeInfo, when set, runs before each Resource call with its
// number (1, 2, …), so that the history can move just before a handler
// checks it again.
type movingStore struct {
	*fdStore
	mu         sync.Mutex
	gone       map[string]uint64 // versions pruned per resource
	afterInfo  func()
	beforeInfo func(call int)
	infoCalls  int
}

func newMovingStore(f *fdStore) *movingStore {
	return &movingStore{fdStore: f, gone: map[string]uint64{}}
}

// prune removes the oldest stored version of id.
func (m *movingStore) prune(id string) {
	m.fdStore.mu.Lock()
	m.fdStore.docs[id] = m.fdStore.docs[id][1:]
	m.fdStore.mu.Unlock()
	m.mu.Lock()
	m.gone[id]++
	m.mu.Unlock()
}

func (m *movingStore) offset(id string) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gone[id]
}

func (m *movingStore) Resources(ctx context.Context) ([]storage.ResourceInfo, error) {
	out, err := m.fdStore.Resources(ctx)
	for i := range out {
		out[i].LatestSeq += m.offset(out[i].ID)
	}
	return out, err
}

func (m *movingStore) Resource(ctx context.Context, id string) (storage.ResourceInfo, error) {
	m.mu.Lock()
	m.infoCalls++
	call, before := m.infoCalls, m.beforeInfo
	m.mu.Unlock()
	if before != nil {
		before(call)
	}
	info, err := m.fdStore.Resource(ctx, id)
	if err == nil {
		info.LatestSeq += m.offset(id)
	}
	m.mu.Lock()
	hook := m.afterInfo
	m.afterInfo = nil
	m.mu.Unlock()
	if hook != nil {
		hook()
	}
	return info, err
}

func (m *movingStore) Version(ctx context.Context, id string, n int) (*schema.Document, storage.VersionInfo, error) {
	doc, vi, err := m.fdStore.Version(ctx, id, n)
	if err == nil {
		vi.Seq += m.offset(id)
	}
	return doc, vi, err
}

func (m *movingStore) Versions(ctx context.Context, id string, offset, limit int) ([]storage.VersionInfo, error) {
	vs, err := m.fdStore.Versions(ctx, id, offset, limit)
	for i := range vs {
		vs[i].Seq += m.offset(id)
	}
	return vs, err
}

func (m *movingStore) Items(ctx context.Context, id string, q storage.ItemQuery) ([]storage.Item, error) {
	items, err := m.fdStore.Items(ctx, id, q)
	for i := range items {
		items[i].Seq += m.offset(id)
	}
	return items, err
}

var _ Store = (*movingStore)(nil)

// newsVersion4 is a fourth version of fdFixture's news: a new item d.
func newsVersion4() *schema.Document {
	latest := fdFixture().docs["news"][2]
	doc := *latest
	doc.Timestamp = fdT0.Add(3 * time.Hour)
	doc.Items = append([]schema.Item{fdItem(1, "d", "Tram line 4 opens", "https://example.org/news/d.html", "Opening day.")}, latest.Items...)
	for i := range doc.Items {
		doc.Items[i].Index = i + 1
	}
	return &doc
}

// TestViewVersionSavedMeanwhile: /view/news?v=3 reads the catalog (latest
// 3, so v3 is the newest, index 1), and a poll stores v4 before the
// version is read. Index 1 is then v4: the page must not show v4's changes
// under ?v=3 as a 200; it answers 404 (the person reloads and finds v3 at
// its new place).
func TestViewVersionSavedMeanwhile(t *testing.T) {
	store := newMovingStore(fdFixture())
	s := newFDServer(t, store)
	store.afterInfo = func() { store.save(newsVersion4()) }
	rec := fdDo(s, http.MethodGet, "/view/news?v=3")
	if rec.Code != http.StatusNotFound {
		t.Fatalf("/view/news?v=3 with v4 stored meanwhile = %d, want 404:\n%.2000s", rec.Code, rec.Body)
	}
	if strings.Contains(rec.Body.String(), "Tram line 4 opens") {
		t.Error("the answer shows v4's new item under ?v=3")
	}
	// Read again, v3 is found where it now is, and v4's item is not in it.
	rec = fdDo(s, http.MethodGet, "/view/news?v=3")
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "Tram line 4 opens") {
		t.Errorf("/view/news?v=3 afterwards = %d, or shows v4's item", rec.Code)
	}
}

// TestVersionPermalinkPrunedMeanwhile: a reader follows the permalink of
// news's oldest version, v1; the catalog read says 3 versions are kept, and
// retention removes v1 before it is read. The history moved, so the feed is
// computed again from the new catalog, which says v1 was removed: 410
// Gone, as for any pruned version, not the 404 of the first attempt's read.
func TestVersionPermalinkPrunedMeanwhile(t *testing.T) {
	store := newMovingStore(fdFixture())
	s := newFDServer(t, store)
	store.afterInfo = func() { store.prune("news") }
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
	store.prune("news") // v1 removed: v2 (b, a) is the oldest kept
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

// TestViewListPrunedMeanwhile: retention removes news's v1 between /view's
// catalog read (3 versions) and its version reads. The page lists the two
// versions still stored, the oldest with the retention note, and nothing
// for the version gone.
func TestViewListPrunedMeanwhile(t *testing.T) {
	store := newMovingStore(fdFixture())
	s := newFDServer(t, store)
	store.afterInfo = func() { store.prune("news") }
	rec := fdDo(s, http.MethodGet, "/view/news")
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("/view/news = %d:\n%.2000s", rec.Code, body)
	}
	if !strings.Contains(body, `id="v3"`) || !strings.Contains(body, `id="v2"`) || strings.Contains(body, `id="v1"`) {
		t.Errorf("the list is not v3 and v2 only")
	}
	if !strings.Contains(body, "removed by the retention policy") {
		t.Error("v2 lacks the retention note")
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
	store.beforeInfo = func(call int) {
		if call == 2 { // historyMoved's check, after the build's reads
			store.save(newsVersion4())
			store.prune("news")
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
