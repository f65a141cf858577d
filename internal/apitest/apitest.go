// Package apitest holds the fakes that the tests of both HTTP packages,
// api and ui, use: an in-memory store with history (FDStore) and one of
// resources only (SvcStore), a poller (SvcPoller), a registry
// (FakeRegistry), a test clock and a real Badger store in a temporary
// directory. It imports internal/service, not api, so that api's own
// (internal) tests can use it too. Nothing outside tests imports it.
package apitest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mmcdole/gofeed"
	"golang.org/x/net/html"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/internal/service"
	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// Do sends one request through h and returns the recorded answer;
// header holds name, value pairs.
func Do(h http.Handler, method, target string, body io.Reader, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, body)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// FDStore is an in-memory Store with real history for the feed handlers'
// tests: it keeps every saved version and aggregates items the way the
// storage contract says (one per item id, latest content, newest first by
// first seen). Calls are counted so tests can see what a request read.
type FDStore struct {
	Mu      sync.Mutex
	Docs    map[string][]*schema.Document // oldest first
	Err     error                         // returned by every call when set
	reads   int                           // Version, Versions and Items calls
	InfoErr error                         // returned by Resource/Resources when set
}

func NewFDStore() *FDStore { return &FDStore{Docs: map[string][]*schema.Document{}} }

// save appends doc as the newest version of doc.RSSID.
func (f *FDStore) Save(doc *schema.Document) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.Docs[doc.RSSID] = append(f.Docs[doc.RSSID], doc)
}

func (f *FDStore) Info(id string) (storage.ResourceInfo, bool) {
	vs := f.Docs[id]
	if len(vs) == 0 {
		return storage.ResourceInfo{}, false
	}
	last := vs[len(vs)-1]
	return storage.ResourceInfo{
		ID: id, URL: last.URL, Created: vs[0].Timestamp, Updated: last.Timestamp,
		Versions: len(vs), LatestSeq: uint64(len(vs)),
		Title: last.Channel.Title, Description: last.Channel.Description, Hash: schema.ContentHash(last),
	}, true
}

func (f *FDStore) Resources(ctx context.Context) ([]storage.ResourceInfo, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if f.Err != nil || f.InfoErr != nil {
		return nil, errors.Join(f.Err, f.InfoErr)
	}
	var out []storage.ResourceInfo
	for id := range f.Docs {
		in, _ := f.Info(id)
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b storage.ResourceInfo) int { return cmpString(a.ID, b.ID) })
	return out, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (f *FDStore) Resource(ctx context.Context, id string) (storage.ResourceInfo, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if f.Err != nil || f.InfoErr != nil {
		return storage.ResourceInfo{}, errors.Join(f.Err, f.InfoErr)
	}
	in, ok := f.Info(id)
	if !ok {
		return storage.ResourceInfo{}, fmt.Errorf("resource %q: %w", id, storage.ErrNotFound)
	}
	return in, nil
}

func (f *FDStore) Version(ctx context.Context, id string, n int) (*schema.Document, storage.VersionInfo, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.reads++
	if f.Err != nil {
		return nil, storage.VersionInfo{}, f.Err
	}
	vs := f.Docs[id]
	if n < 1 || n > len(vs) {
		return nil, storage.VersionInfo{}, fmt.Errorf("version %d of %q: %w", n, id, storage.ErrNotFound)
	}
	i := len(vs) - n
	return vs[i], versionInfo(vs[i], uint64(i+1)), nil
}

func versionInfo(d *schema.Document, seq uint64) storage.VersionInfo {
	return storage.VersionInfo{Seq: seq, Timestamp: d.Timestamp, Title: d.Channel.Title, Description: d.Channel.Description, Items: len(d.Items)}
}

func (f *FDStore) Versions(ctx context.Context, id string, offset, limit int) ([]storage.VersionInfo, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.reads++
	if f.Err != nil {
		return nil, f.Err
	}
	vs := f.Docs[id]
	if len(vs) == 0 {
		return nil, fmt.Errorf("versions of %q: %w", id, storage.ErrNotFound)
	}
	var out []storage.VersionInfo
	for i := len(vs) - 1 - offset; i >= 0 && (limit <= 0 || len(out) < limit); i-- {
		out = append(out, versionInfo(vs[i], uint64(i+1)))
	}
	return out, nil
}

func (f *FDStore) Items(ctx context.Context, id string, q storage.ItemQuery) ([]storage.Item, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.reads++
	if f.Err != nil {
		return nil, f.Err
	}
	vs := f.Docs[id]
	if len(vs) == 0 {
		return nil, fmt.Errorf("items of %q: %w", id, storage.ErrNotFound)
	}
	byID := map[string]*storage.Item{}
	var order []string
	for seq, d := range vs {
		for _, it := range d.Items {
			if x, ok := byID[it.ID]; ok {
				x.Item, x.LastSeen, x.Seq = it, d.Timestamp, uint64(seq+1)
				continue
			}
			byID[it.ID] = &storage.Item{Item: it, FirstSeen: d.Timestamp, LastSeen: d.Timestamp, Seq: uint64(seq + 1)}
			order = append(order, it.ID)
		}
	}
	var out []storage.Item
	for _, iid := range order {
		out = append(out, *byID[iid])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].FirstSeen.After(out[j].FirstSeen) })
	var kept []storage.Item
	for _, it := range out {
		if q.Max > 0 && len(kept) == q.Max {
			break
		}
		if q.Terms.Match(it.Title, it.Link, it.Description) {
			kept = append(kept, it)
		}
	}
	return kept, nil
}

func (f *FDStore) ReadCount() int {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return f.reads
}

var _ service.Store = (*FDStore)(nil)

// FDT0 is the time of the first stored version in the feed fixtures.
var FDT0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// FDItem builds an item; ext are prefix:local=value triples in the DC or content namespace.
func FDItem(index int, id, title, link, desc string, ext ...schema.Extension) schema.Item {
	return schema.Item{Index: index, ID: id, Title: title, Link: link, Description: desc, Extensions: ext}
}

// FDFixture stores the "news" resource with three versions and the "forum"
// resource with one:
//
//	news v1 @10:00: a
//	news v2 @11:00: b, a
//	news v3 @12:00: c, b (new title), a    c has a dc:date and content:encoded; b and c share a link
//	forum v1 @09:30: f
//
// Aggregated over history, newest first by first seen: c, b, a.
func FDFixture() *FDStore {
	f := NewFDStore()
	a := FDItem(1, "a", "Budget vote tonight", "https://example.org/news/a.html", "The council votes the budget.")
	b := FDItem(1, "b", "Weather: rain", "https://example.org/news/", "Rain all week.")
	c := FDItem(1, "c", "Straße closed for works", "https://example.org/news/", "Main street closed; BUDGET overrun.",
		schema.Extension{URI: schema.DCNamespace, Prefix: "dc", LocalName: "date", Value: "2026-02-28T08:30:00Z"},
		schema.Extension{URI: schema.DCNamespace, Prefix: "dc", LocalName: "creator", Value: "Town Hall"},
		schema.Extension{URI: schema.ContentNamespace, Prefix: "content", LocalName: "encoded", Value: "<p>Main street <b>closed</b>.</p>"})
	c.Image = &schema.Image{URL: "https://example.org/img/works.jpg"}
	ch := schema.Channel{Title: "Town News", Link: "https://example.org/news/", Description: "News from the town hall",
		Image: &schema.Image{Title: "Town logo", Link: "https://example.org/", URL: "https://example.org/logo.png"}}
	doc := func(at time.Duration, items ...schema.Item) *schema.Document {
		for i := range items {
			items[i].Index = i + 1
		}
		return &schema.Document{URL: "https://example.org/news/index.html", RSSID: "news", Timestamp: FDT0.Add(at), Channel: ch, Items: items}
	}
	f.Save(doc(0, a))
	f.Save(doc(time.Hour, b, a))
	b2 := b
	b2.Title = "Weather: sun at last"
	f.Save(doc(2*time.Hour, c, b2, a))
	f.Save(&schema.Document{URL: "https://example.org/forum/", RSSID: "forum", Timestamp: FDT0.Add(-30 * time.Minute),
		Channel: schema.Channel{Title: "Forum", Link: "https://example.org/forum/", Description: "Latest threads"},
		Items:   []schema.Item{FDItem(1, "f", "Welcome", "https://example.org/forum/1", "First thread")}})
	return f
}

// SvcStore is an in-memory Store for the service handlers' tests (home,
// admin, health): resources only, no history.
type SvcStore struct {
	Infos []storage.ResourceInfo
	Err   error
}

func (f *SvcStore) Resources(ctx context.Context) ([]storage.ResourceInfo, error) {
	return slices.Clone(f.Infos), f.Err
}

func (f *SvcStore) Resource(ctx context.Context, id string) (storage.ResourceInfo, error) {
	for _, r := range f.Infos {
		if r.ID == id {
			return r, nil
		}
	}
	return storage.ResourceInfo{}, fmt.Errorf("resource %q: %w", id, storage.ErrNotFound)
}

func (f *SvcStore) Version(ctx context.Context, id string, n int) (*schema.Document, storage.VersionInfo, error) {
	return nil, storage.VersionInfo{}, storage.ErrNotFound
}

func (f *SvcStore) Versions(ctx context.Context, id string, offset, limit int) ([]storage.VersionInfo, error) {
	return nil, storage.ErrNotFound
}

func (f *SvcStore) Items(ctx context.Context, id string, q storage.ItemQuery) ([]storage.Item, error) {
	return nil, storage.ErrNotFound
}

var _ service.Store = (*SvcStore)(nil)

// SvcPoller is a Poller whose statuses the test sets; PollNow counts polls.
type SvcPoller struct {
	Mu      sync.Mutex
	List    []service.ResourceStatus
	PollErr error
	Polled  []string
	At      time.Time
}

func (p *SvcPoller) Statuses() []service.ResourceStatus {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	return slices.Clone(p.List)
}

func (p *SvcPoller) Status(id string) (service.ResourceStatus, bool) {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	for _, st := range p.List {
		if st.ID == id {
			return st, true
		}
	}
	return service.ResourceStatus{}, false
}

func (p *SvcPoller) PollNow(ctx context.Context, id string) (service.ResourceStatus, error) {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	if p.PollErr != nil {
		return service.ResourceStatus{}, p.PollErr
	}
	for i := range p.List {
		if p.List[i].ID == id {
			p.Polled = append(p.Polled, id)
			p.List[i].Polls++
			p.List[i].LastPoll = p.At
			p.List[i].LastOutcome = "unchanged"
			return p.List[i], nil
		}
	}
	return service.ResourceStatus{}, fmt.Errorf("poll %q: unknown resource", id)
}

var _ service.Poller = (*SvcPoller)(nil)

// SvcNow is the fixed clock of the service tests.
var SvcNow = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// SvcFixture returns a store and a poller with two configured resources
// (one flat, one smart), one of which has history, plus a stored resource
// that is no longer configured.
func SvcFixture() (*SvcStore, *SvcPoller) {
	store := &SvcStore{Infos: []storage.ResourceInfo{
		{ID: "news", URL: "https://example.org/news.html", Versions: 7, LatestSeq: 7, Updated: SvcNow.Add(-3 * time.Minute), Title: "Our News & Views", Description: "What happened <today>"},
		{ID: "old", URL: "https://example.org/old.html", Versions: 2, LatestSeq: 2, Updated: SvcNow.Add(-48 * time.Hour), Title: "Old page"},
	}}
	poller := &SvcPoller{At: SvcNow, List: []service.ResourceStatus{
		{ID: "news", URL: "https://example.org/news.html", Policy: "flat", Interval: 15 * time.Minute,
			LastPoll: SvcNow.Add(-time.Minute), NextPoll: SvcNow.Add(14 * time.Minute), LastOutcome: "changed", Polls: 9, Changes: 7},
		{ID: "forum", URL: "https://example.org/forum/", Policy: "smart", Interval: 42 * time.Minute, Tau: 40 * time.Minute,
			Alpha: 0.37, AlphaAuto: true, LastPoll: SvcNow.Add(-2 * time.Minute), NextPoll: SvcNow.Add(40 * time.Minute),
			LastOutcome: "error", LastError: "GET https://example.org/forum/: 503 Service Unavailable", Polls: 3, Errors: 3},
	}}
	return store, poller
}

// FakeRegistry is an in-memory Registry with one file-declared resource.
type FakeRegistry struct {
	Mu   sync.Mutex
	Defs map[string]service.ResourceDefinition
}

func NewFakeRegistry() *FakeRegistry {
	return &FakeRegistry{Defs: map[string]service.ResourceDefinition{
		"file1": {Resource: config.ResourceEntry{ID: "file1", URL: "https://example.org/file1"}, Source: "file", Polled: true},
	}}
}

func (f *FakeRegistry) Definitions() []service.ResourceDefinition {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	var out []service.ResourceDefinition
	for _, d := range f.Defs {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b service.ResourceDefinition) int { return strings.Compare(a.Resource.ID, b.Resource.ID) })
	return out
}

func (f *FakeRegistry) Definition(id string) (service.ResourceDefinition, bool) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	d, ok := f.Defs[id]
	return d, ok
}

func (f *FakeRegistry) Register(_ context.Context, e config.ResourceEntry) (bool, error) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	old, had := f.Defs[e.ID]
	if had && old.Source == "file" {
		return false, fmt.Errorf("register: %w", service.ErrDeclaredInFile)
	}
	f.Defs[e.ID] = service.ResourceDefinition{Resource: e, Source: "api", Registered: SvcNow, Polled: true, Status: service.ResourceStatus{ID: e.ID, URL: e.URL}}
	return !had, nil
}

func (f *FakeRegistry) Unregister(_ context.Context, id string) error {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	d, ok := f.Defs[id]
	switch {
	case !ok:
		return fmt.Errorf("unregister %q: %w", id, storage.ErrNotFound)
	case d.Source == "file":
		return fmt.Errorf("unregister: %w", service.ErrDeclaredInFile)
	}
	delete(f.Defs, id)
	return nil
}

func (f *FakeRegistry) PollerConfig() config.PollerConfig { return config.Default().Poller }

// Clock is a time that moves only when a test says.
type Clock struct {
	Mu sync.Mutex
	At time.Time
}

func (c *Clock) Now() time.Time {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return c.At
}

func (c *Clock) Advance(d time.Duration) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	c.At = c.At.Add(d)
}

// OpenDB opens a real Badger store in a temporary directory, closed when
// the test ends.
func OpenDB(t testing.TB) *badger.DB {
	t.Helper()
	db, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatalf("open storage: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close storage: %v", err)
		}
	})
	return db
}

// ParseHTML parses a page, failing the test when it is not HTML.
func ParseHTML(t *testing.T, body string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse page: %v", err)
	}
	return doc
}

// FindAll returns the elements named tag whose attributes include every
// key=value of attrs (a value "" only requires the key).
func FindAll(n *html.Node, tag string, attrs ...string) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == tag && HasAttrs(n, attrs...) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

// HasAttrs reports whether n has every key=value of kv.
func HasAttrs(n *html.Node, kv ...string) bool {
	for i := 0; i+1 < len(kv); i += 2 {
		v, ok := Attr(n, kv[i])
		if !ok || (kv[i+1] != "" && v != kv[i+1]) {
			return false
		}
	}
	return true
}

// Attr is n's attribute key, if it has one.
func Attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// Text is the text of n and its descendants, white space collapsed.
func Text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// CheckPageHeaders checks the headers every HTML page carries.
func CheckPageHeaders(t *testing.T, h http.Header) {
	t.Helper()
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type = %q, want text/html", ct)
	}
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
}

// Browser Accept headers, as the browsers send them for a navigation.
const (
	AcceptChrome  = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"
	AcceptFirefox = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	AcceptSafari  = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
)

// MovingStore is an FDStore whose history moves as a real one does: prune
// removes the oldest versions, which keep their sequence numbers elsewhere
// (the kept ones do not renumber), and afterInfo, when set, runs once just
// after a Resource call has read the catalog, so that a save or a prune
// falls deterministically between a handler's catalog read and its history
// reads; beforeInfo, when set, runs before each Resource call with its
// number (1, 2, …), so that the history can move just before a handler
// checks it again.
type MovingStore struct {
	*FDStore
	mu         sync.Mutex
	gone       map[string]uint64 // versions pruned per resource
	AfterInfo  func()
	BeforeInfo func(call int)
	infoCalls  int
}

func NewMovingStore(f *FDStore) *MovingStore {
	return &MovingStore{FDStore: f, gone: map[string]uint64{}}
}

// prune removes the oldest stored version of id.
func (m *MovingStore) Prune(id string) {
	m.FDStore.Mu.Lock()
	m.FDStore.Docs[id] = m.FDStore.Docs[id][1:]
	m.FDStore.Mu.Unlock()
	m.mu.Lock()
	m.gone[id]++
	m.mu.Unlock()
}

func (m *MovingStore) offset(id string) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gone[id]
}

func (m *MovingStore) Resources(ctx context.Context) ([]storage.ResourceInfo, error) {
	out, err := m.FDStore.Resources(ctx)
	for i := range out {
		out[i].LatestSeq += m.offset(out[i].ID)
	}
	return out, err
}

func (m *MovingStore) Resource(ctx context.Context, id string) (storage.ResourceInfo, error) {
	m.mu.Lock()
	m.infoCalls++
	call, before := m.infoCalls, m.BeforeInfo
	m.mu.Unlock()
	if before != nil {
		before(call)
	}
	info, err := m.FDStore.Resource(ctx, id)
	if err == nil {
		info.LatestSeq += m.offset(id)
	}
	m.mu.Lock()
	hook := m.AfterInfo
	m.AfterInfo = nil
	m.mu.Unlock()
	if hook != nil {
		hook()
	}
	return info, err
}

func (m *MovingStore) Version(ctx context.Context, id string, n int) (*schema.Document, storage.VersionInfo, error) {
	doc, vi, err := m.FDStore.Version(ctx, id, n)
	if err == nil {
		vi.Seq += m.offset(id)
	}
	return doc, vi, err
}

func (m *MovingStore) Versions(ctx context.Context, id string, offset, limit int) ([]storage.VersionInfo, error) {
	vs, err := m.FDStore.Versions(ctx, id, offset, limit)
	for i := range vs {
		vs[i].Seq += m.offset(id)
	}
	return vs, err
}

func (m *MovingStore) Items(ctx context.Context, id string, q storage.ItemQuery) ([]storage.Item, error) {
	items, err := m.FDStore.Items(ctx, id, q)
	for i := range items {
		items[i].Seq += m.offset(id)
	}
	return items, err
}

var _ service.Store = (*MovingStore)(nil)

// NewsVersion4 is a fourth version of FDFixture's news: a new item d.
func NewsVersion4() *schema.Document {
	latest := FDFixture().Docs["news"][2]
	doc := *latest
	doc.Timestamp = FDT0.Add(3 * time.Hour)
	doc.Items = append([]schema.Item{FDItem(1, "d", "Tram line 4 opens", "https://example.org/news/d.html", "Opening day.")}, latest.Items...)
	for i := range doc.Items {
		doc.Items[i].Index = i + 1
	}
	return &doc
}

// ProblemBody is an RFC 9457 problem as the api answers it.
type ProblemBody struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	Param  string `json:"parameter,omitempty"`
}

// CheckProblem decodes an application/problem+json answer, failing the test
// when the answer is not one with the wanted status.
func CheckProblem(t testing.TB, rec *httptest.ResponseRecorder, status int) ProblemBody {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d; body:\n%s", rec.Code, status, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Fatalf("Content-Type = %q, want application/problem+json; body:\n%s", ct, rec.Body)
	}
	var p ProblemBody
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatalf("decode problem: %v\n%s", err, rec.Body)
	}
	if p.Status != status || p.Title == "" {
		t.Fatalf("problem = %+v, want status %d and a title", p, status)
	}
	return p
}

// OpenFixtureDB opens a real Badger store in a temporary directory and saves
// the versions of the feed fixture into it, oldest first.
func OpenFixtureDB(t testing.TB) *badger.DB {
	t.Helper()
	db := OpenDB(t)
	fixture := FDFixture()
	for _, id := range []string{"news", "forum"} {
		for _, doc := range fixture.Docs[id] {
			res, err := db.Save(context.Background(), doc)
			if err != nil {
				t.Fatalf("save %s @%s: %v", id, doc.Timestamp, err)
			}
			if !res.Changed {
				t.Fatalf("save %s @%s: unchanged", id, doc.Timestamp)
			}
		}
	}
	return db
}

// ParseFeed parses a feed body with gofeed, failing the test on error.
func ParseFeed(t *testing.T, body []byte) *gofeed.Feed {
	t.Helper()
	f, err := gofeed.NewParser().ParseString(string(body))
	if err != nil {
		t.Fatalf("gofeed cannot parse the feed: %v\n%s", err, body)
	}
	return f
}

// PreviewPageHTML is an annotated page for the preview's tests.
const PreviewPageHTML = `<html><head><title>News</title></head><body>
<h1><!-- <channel:title> -->Our Città News<!-- </channel:title> --></h1>
<ul>
<li><!-- <item:link index="1"> --><a href="/news/1.html"><!-- <item:title index="1"> -->Budget approved<!-- </item:title> --></a><!-- </item:link> -->
<!-- <item:description index="1"> -->The council approved it.<!-- </item:description> --></li>
<li><!-- <item:title index="2"> -->Bridge closed<!-- </item:title> -->
<!-- <item:bogus index="2"> -->x<!-- </item:bogus> --></li>
</ul></body></html>`

// NotAnnotatedHTML is a page without a channel:title annotation.
const NotAnnotatedHTML = `<html><body><p>No annotations here.</p><!-- <item:title index="1"> -->Orphan<!-- </item:title> --></body></html>`

// FeedContentTypes are the Content-Types of the feeds by type=, and of a
// feed asked for by a browser ("html").
var FeedContentTypes = map[string]string{
	"rss1": "application/rdf+xml; charset=utf-8",
	"rss2": "application/rss+xml; charset=utf-8",
	"atom": "application/atom+xml; charset=utf-8",
	"json": "application/feed+json; charset=utf-8",
	"html": "text/html; charset=UTF-8", // a feed asked for by a browser (feedpage.go)
}

// FeedFormats are the type= values of the feed formats, in the api's
// order: the default (RSS 2.0) first.
var FeedFormats = []string{"rss2", "atom", "rss1", "json"}
