package poller

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
	"github.com/dynamo-rss/dynamo/storage/postgres/pgtest"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(originProcessEnv); mode != "" {
		serveOriginProcess(mode) // the benchmarks' origin, in a process of its own
		return
	}
	// A PostgreSQL server for the tests of several nodes (lease_pg_test.go).
	code := pgtest.Main(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

var _ Store = (*badger.DB)(nil)

var t0 = time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)

// fakeClock is a manual Clock: time moves only by Advance/Set.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	added  chan struct{} // a timer was created (the scheduler is about to wait)
}

type fakeTimer struct {
	clk *fakeClock
	at  time.Time
	c   chan time.Time
}

func newFakeClock(t time.Time) *fakeClock {
	return &fakeClock{now: t, added: make(chan struct{}, 1)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{clk: c, at: c.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.c <- c.now
	} else {
		c.timers = append(c.timers, t)
	}
	select {
	case c.added <- struct{}{}:
	default:
	}
	return t
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	c := t.clk
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return true
		}
	}
	return false
}

// Set moves the clock to t (never backwards) and fires due timers.
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	kept := c.timers[:0]
	for _, x := range c.timers {
		if !x.at.After(c.now) {
			x.c <- c.now
		} else {
			kept = append(kept, x)
		}
	}
	c.timers = kept
}

func (c *fakeClock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// pendingAt reports whether a timer is set to fire at at.
func (c *fakeClock) pendingAt(at time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, x := range c.timers {
		if x.at.Equal(at) {
			return true
		}
	}
	return false
}

// AdvanceToTimer moves the clock to the earliest pending timer, if any, and
// fires it. A pending timer means the scheduler is waiting on it.
func (c *fakeClock) AdvanceToTimer() bool {
	c.mu.Lock()
	if len(c.timers) == 0 {
		c.mu.Unlock()
		return false
	}
	at := c.timers[0].at
	for _, x := range c.timers[1:] {
		if x.at.Before(at) {
			at = x.at
		}
	}
	c.mu.Unlock()
	c.Set(at)
	return true
}

// memStore is an in-memory Store with content comparison like storage's.
type memStore struct {
	mu       sync.Mutex
	versions map[string][]*schema.Document
	states   map[string][]byte
	saves    int // Save calls
	prunes   []storage.Retention
}

func newMemStore() *memStore {
	return &memStore{versions: map[string][]*schema.Document{}, states: map[string][]byte{}}
}

func (m *memStore) Save(_ context.Context, doc *schema.Document) (storage.SaveResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.saves++
	vs := m.versions[doc.RSSID]
	if n := len(vs); n > 0 && schema.SameContent(vs[n-1], doc) {
		return storage.SaveResult{Seq: uint64(n), Versions: n}, nil
	}
	m.versions[doc.RSSID] = append(vs, doc)
	n := len(m.versions[doc.RSSID])
	return storage.SaveResult{Changed: true, Seq: uint64(n), Versions: n}, nil
}

func (m *memStore) Prune(_ context.Context, id string, r storage.Retention, _ time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prunes = append(m.prunes, r)
	vs := m.versions[id]
	if r.MaxVersions > 0 && len(vs) > r.MaxVersions {
		n := len(vs) - r.MaxVersions
		m.versions[id] = vs[n:]
		return n, nil
	}
	return 0, nil
}

func (m *memStore) PollState(_ context.Context, id string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.states[id]
	if !ok {
		return nil, storage.ErrNotFound
	}
	return append([]byte(nil), b...), nil
}

func (m *memStore) SavePollState(_ context.Context, id string, b []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.states[id] = append([]byte(nil), b...)
	return nil
}

func (m *memStore) count(id string) (versions, saves int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.versions[id]), m.saves
}

// page is an annotated HTML page with the given items (titles).
func page(title string, items ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<html><body><h1><!-- <channel:title> -->%s<!-- </channel:title> --></h1>\n", title)
	for i, it := range items {
		fmt.Fprintf(&b, "<p><!-- <item:title index=\"%d\"> -->%s<!-- </item:title> --></p>\n", i+1, it)
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// datedPage is a page whose single item carries a dc:date publication time.
func datedPage(title, item string, published time.Time) string {
	return fmt.Sprintf(`<html><body><h1><!-- <channel:title> -->%s<!-- </channel:title> --></h1>
<p><!-- <item:title index="1"> -->%s<!-- </item:title> -->
<!-- <item:extension index="1" uri="http://purl.org/dc/elements/1.1/" prefix="dc" localName="date"> -->%s<!-- </item:extension> --></p>
</body></html>
`, title, item, published.Format(time.RFC3339))
}

// origin is a loopback test site whose page body can be changed.
type origin struct {
	srv      *httptest.Server
	mu       sync.Mutex
	body     string
	etag     string
	hits     map[string]int // by path
	handlers map[string]http.HandlerFunc
}

func newOrigin(t *testing.T) *origin {
	o := &origin{hits: map[string]int{}, handlers: map[string]http.HandlerFunc{}, body: page("Site", "first")}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.hits[r.URL.Path]++
		h := o.handlers[r.URL.Path]
		body, etag := o.body, o.etag
		o.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		if etag != "" {
			w.Header().Set("ETag", etag)
			if r.Header.Get("If-None-Match") == etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *origin) set(body string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.body = body
}

func (o *origin) setETag(etag string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.etag = etag
}

func (o *origin) handle(path string, h http.HandlerFunc) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.handlers[path] = h
}

func (o *origin) hit(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits[path]
}

func (o *origin) url(path string) string { return o.srv.URL + path }

// testConfig is a config for loopback origins: private allowed, politeness
// and robots off unless the test turns them on.
func testConfig(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatalf("ParseConfig: %v\n%s", err, yaml)
	}
	return cfg
}

func baseYAML(extra string) string {
	return `poller:
  workers: 2
  timeout: 5s
  per_host_interval: 0s
  robots: false
  allow_private: true
  policy: {kind: smart, alpha: 0.5, initial: 10m, min: 1m, max: 1h}
` + extra
}

func newTestEngine(t *testing.T, cfg *config.Config, store Store, clk *fakeClock) *Engine {
	t.Helper()
	return newTestEngineOpts(t, cfg, store, Options{Clock: clk})
}

// newTestEngineOpts builds an engine closed at the end of the test.
func newTestEngineOpts(t *testing.T, cfg *config.Config, store Store, opts Options) *Engine {
	t.Helper()
	e, err := New(context.Background(), cfg, store, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// runDue polls, one after the other on this goroutine, every resource due
// at the clock's current time, as Run's workers would; it returns how many.
func (e *Engine) runDue(ctx context.Context) int {
	n := 0
	for {
		r, _ := e.due()
		if r == nil {
			return n
		}
		e.work(ctx, r)
		n++
	}
}

// pollAtNext moves the clock to id's next poll and runs what is due.
func pollAtNext(t *testing.T, e *Engine, clk *fakeClock, id string) Status {
	t.Helper()
	st, ok := e.Status(id)
	if !ok {
		t.Fatalf("no resource %q", id)
	}
	clk.Set(st.NextPoll)
	e.runDue(t.Context())
	st, _ = e.Status(id)
	return st
}
