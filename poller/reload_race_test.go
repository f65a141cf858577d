package poller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/internal/syncbuf"
	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// raceOrigin is a loopback site of many pages, each at its own generation
// (its content), for the reload and registration race tests. It counts the
// requests in flight for each page, to catch two polls of one page at once,
// and remembers which generations it served. A page can be held: its
// requests then wait until it is released.
type raceOrigin struct {
	srv *httptest.Server

	mu      sync.Mutex
	pages   map[string]*racePage
	overlap []string // pages requested twice at once
}

type racePage struct {
	gen      int
	bumpEach int // > 0: every bumpEach-th request serves a new generation
	hits     int
	inFlight int
	served   map[int]bool
	lastMod  time.Time     // zero: no Last-Modified
	delay    time.Duration // before answering: widens the windows the race tests aim at
	hold     chan struct{}
	started  chan struct{} // a request arrived while the page is held (cap 16)
}

func newRaceOrigin(t *testing.T) *raceOrigin {
	t.Helper()
	o := &raceOrigin{pages: map[string]*racePage{}}
	o.srv = httptest.NewServer(http.HandlerFunc(o.serve))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *raceOrigin) page(path string) *racePage {
	p := o.pages[path]
	if p == nil {
		p = &racePage{gen: 1, served: map[int]bool{}, started: make(chan struct{}, 16)}
		o.pages[path] = p
	}
	return p
}

func (o *raceOrigin) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		http.NotFound(w, r)
		return
	}
	o.mu.Lock()
	p := o.page(r.URL.Path)
	p.inFlight++
	if p.inFlight > 1 {
		o.overlap = append(o.overlap, r.URL.Path)
	}
	p.hits++
	hold, delay := p.hold, p.delay
	if hold != nil {
		select {
		case p.started <- struct{}{}:
		default:
		}
	}
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		p.inFlight--
		o.mu.Unlock()
	}()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	if delay > 0 {
		time.Sleep(delay)
	}
	o.mu.Lock()
	if p.bumpEach > 0 && p.hits%p.bumpEach == 0 {
		p.gen++
	}
	gen, lastMod := p.gen, p.lastMod
	o.mu.Unlock()
	if !lastMod.IsZero() {
		if ims, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil && !lastMod.After(ims) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Last-Modified", lastMod.UTC().Format(http.TimeFormat))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	body := page("Page "+r.URL.Path, "gen "+strconv.Itoa(gen))
	if _, err := fmt.Fprint(w, body); err == nil {
		o.mu.Lock()
		p.served[gen] = true
		o.mu.Unlock()
	}
}

func (o *raceOrigin) url(path string) string { return o.srv.URL + path }

// holdPage makes the requests for path wait until the returned func is called.
func (o *raceOrigin) holdPage(path string) (release func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := make(chan struct{})
	o.page(path).hold = c
	var once sync.Once
	return func() {
		once.Do(func() {
			o.mu.Lock()
			o.page(path).hold = nil
			o.mu.Unlock()
			close(c)
		})
	}
}

// started returns a channel that receives once per request for path
// that arrives while the page is held.
func (o *raceOrigin) started(path string) <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.page(path).started
}

func (o *raceOrigin) setGen(path string, gen int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.page(path).gen = gen
}

func (o *raceOrigin) setLastModified(path string, t time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.page(path).lastMod = t
}

func (o *raceOrigin) overlaps() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.overlap...)
}

func (o *raceOrigin) hitCount(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.page(path).hits
}

// genOf reads the generation a stored version of a raceOrigin page holds.
func genOf(t *testing.T, doc *schema.Document) int {
	t.Helper()
	if len(doc.Items) != 1 {
		t.Fatalf("version of %s has %d items", doc.RSSID, len(doc.Items))
	}
	g, err := strconv.Atoi(strings.TrimPrefix(doc.Items[0].Title, "gen "))
	if err != nil {
		t.Fatalf("version of %s: item %q", doc.RSSID, doc.Items[0].Title)
	}
	return g
}

// saveLog is a Badger store that records every save it acknowledged.
type saveLog struct {
	*badger.DB
	mu    sync.Mutex
	saves map[string][]uint64 // seqs of acknowledged new versions, by id
}

func newSaveLog(db *badger.DB) *saveLog { return &saveLog{DB: db, saves: map[string][]uint64{}} }

func (s *saveLog) Save(ctx context.Context, doc *schema.Document) (storage.SaveResult, error) {
	res, err := s.DB.Save(ctx, doc)
	if err == nil && res.Changed {
		s.mu.Lock()
		s.saves[doc.RSSID] = append(s.saves[doc.RSSID], res.Seq)
		s.mu.Unlock()
	}
	return res, err
}

func (s *saveLog) acknowledged() map[string][]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]uint64, len(s.saves))
	for id, seqs := range s.saves {
		out[id] = append([]uint64(nil), seqs...)
	}
	return out
}

// tempBadger is a Badger store in a temporary directory, closed at the end
// of the test.
func tempBadger(t *testing.T) *badger.DB {
	t.Helper()
	db := openTestBadger(t, t.TempDir())
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func openTestBadger(t *testing.T, dir string) *badger.DB {
	t.Helper()
	db, err := badger.Open(dir, badger.Options{NoSyncWrites: true, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// versionsOf returns the seqs and generations of id's stored versions,
// oldest first.
func versionsOf(t *testing.T, db *badger.DB, id string) (seqs []uint64, gens []int) {
	t.Helper()
	vs, err := db.Versions(t.Context(), id, 0, 0)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		t.Fatalf("versions of %s: %v", id, err)
	}
	for i := len(vs) - 1; i >= 0; i-- {
		doc, _, err := db.Version(t.Context(), id, i+1)
		if err != nil {
			t.Fatalf("version %d of %s: %v", i+1, id, err)
		}
		seqs = append(seqs, vs[i].Seq)
		gens = append(gens, genOf(t, doc))
	}
	return seqs, gens
}

// raceYAML is a configuration with the given resources block.
func raceYAML(resources string) string {
	return baseYAML("  budget: {polls_per_day: 2000, max_interval: 2h}\nresources:\n" + resources)
}

// pollInBackground runs PollNow of id on a goroutine owned by the test.
func pollInBackground(t *testing.T, e *Engine, id string) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := e.PollNow(context.WithoutCancel(t.Context()), id)
		done <- err
	}()
	return done
}

// applyDuringPoll applies cfg while a poll of id, whose page is path, is
// in flight, and returns when that poll has ended.
func applyDuringPoll(t *testing.T, e *Engine, o *raceOrigin, id, path string, cfg *config.Config) {
	t.Helper()
	release := o.holdPage(path)
	defer release()
	polling := pollInBackground(t, e, id)
	waitStarted(t, o.started(path), "poll of "+id)
	if err := e.Apply(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	release()
	if err := <-polling; err != nil {
		t.Fatalf("poll of %s: %v", id, err)
	}
}

func waitStarted(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no request reached the origin", what)
	}
}

// A resource removed by a reload while its poll is in flight, and added
// again by the next reload before that poll ends, is still one resource:
// its new incarnation is not polled beside the old one's poll.
func TestReloadReaddedDuringPollNotPolledTwice(t *testing.T) {
	o := newRaceOrigin(t)
	clk := newFakeClock(t0)
	db := tempBadger(t)
	with := testConfig(t, raceYAML(fmt.Sprintf("  - {id: r, url: %q}\n  - {id: other, url: %q}\n", o.url("/r"), o.url("/other"))))
	without := testConfig(t, raceYAML(fmt.Sprintf("  - {id: other, url: %q}\n", o.url("/other"))))
	e := newTestEngine(t, with, db, clk)

	release := o.holdPage("/r")
	defer release()
	first := pollInBackground(t, e, "r")
	waitStarted(t, o.started("/r"), "first poll")
	if err := e.Apply(t.Context(), without); err != nil {
		t.Fatal(err)
	}
	if err := e.Apply(t.Context(), with); err != nil {
		t.Fatal(err)
	}
	second := pollInBackground(t, e, "r")
	// The second poll must wait for the first: it may not reach the origin.
	select {
	case <-o.started("/r"):
		release()
		<-first
		<-second
		t.Fatalf("the re-added resource was polled while its previous poll was in flight (overlaps %v)", o.overlaps())
	case err := <-second:
		t.Fatalf("second poll ended while the first was in flight: %v", err)
	case <-time.After(200 * time.Millisecond): // what must not happen did not: proceed
	}
	release()
	if err := <-first; err != nil {
		t.Fatalf("first poll: %v", err)
	}
	if err := <-second; err != nil {
		t.Fatalf("second poll: %v", err)
	}
	if ov := o.overlaps(); len(ov) > 0 {
		t.Fatalf("pages polled twice at once: %v", ov)
	}
	seqs, gens := versionsOf(t, db, "r")
	if len(seqs) != 1 || seqs[0] != 1 || gens[0] != 1 {
		t.Fatalf("versions of r: seqs %v gens %v, want one", seqs, gens)
	}
}

// A reload that points a resource at another page while a poll of the old
// page is in flight: what that poll learned of the old page (its
// validators, its body) must not be applied to the new one. With the old
// page's Last-Modified, the new page answered 304 and was never stored.
func TestReloadURLChangeDuringPollDropsOldPageValidators(t *testing.T) {
	o := newRaceOrigin(t)
	clk := newFakeClock(t0)
	db := tempBadger(t)
	o.setLastModified("/old", t0.Add(-time.Hour))
	o.setLastModified("/new", t0.Add(-48*time.Hour)) // older than the old page
	o.setGen("/new", 7)
	cfgOld := testConfig(t, raceYAML(fmt.Sprintf("  - {id: r, url: %q}\n", o.url("/old"))))
	cfgNew := testConfig(t, raceYAML(fmt.Sprintf("  - {id: r, url: %q}\n", o.url("/new"))))
	e := newTestEngine(t, cfgOld, db, clk)

	applyDuringPoll(t, e, o, "r", "/old", cfgNew)
	e.mu.Lock()
	last := e.resources["r"].st.Last
	e.mu.Unlock()
	if last != nil {
		t.Error("the old page's version is what the new page will be compared with")
	}
	st, err := e.PollNow(t.Context(), "r")
	if err != nil {
		t.Fatal(err)
	}
	if st.LastOutcome != OutcomeChanged {
		t.Fatalf("first poll of the new page: %s (%s), want %s", st.LastOutcome, st.LastError, OutcomeChanged)
	}
	if _, gens := versionsOf(t, db, "r"); len(gens) != 2 || gens[1] != 7 {
		t.Fatalf("generations stored %v, want the old page's then the new page's (7)", gens)
	}
}

// A reload that changes how a page is extracted (here its date rules)
// while a poll is in flight: the next poll extracts the same bytes again
// under the new rules instead of skipping them as already stored.
func TestReloadExtractionChangeDuringPollExtractsAgain(t *testing.T) {
	o := newRaceOrigin(t)
	clk := newFakeClock(t0)
	db := tempBadger(t)
	cfgA := testConfig(t, raceYAML(fmt.Sprintf("  - {id: r, url: %q}\n", o.url("/p"))))
	cfgB := testConfig(t, raceYAML(fmt.Sprintf("  - {id: r, url: %q, timezone: Europe/Rome}\n", o.url("/p"))))
	e := newTestEngine(t, cfgA, db, clk)

	applyDuringPoll(t, e, o, "r", "/p", cfgB)
	e.mu.Lock()
	bodyHash, last := e.resources["r"].st.BodyHash, e.resources["r"].st.Last
	e.mu.Unlock()
	if bodyHash != 0 {
		t.Fatal("the body extracted under the old settings is remembered: the next poll will not extract it under the new ones")
	}
	if last == nil {
		t.Error("the version stored from the same page is forgotten")
	}
}

// flakyRegistry is a Registry whose Unregister fails while fail is set.
type flakyRegistry struct {
	Registry
	mu   sync.Mutex
	fail bool
}

func (f *flakyRegistry) Unregister(ctx context.Context, id string) (Revision, error) {
	f.mu.Lock()
	fail := f.fail
	f.mu.Unlock()
	if fail {
		return 0, errors.New("store unavailable")
	}
	return f.Registry.Unregister(ctx, id)
}

// A DELETE the store fails changes nothing: the resource is still polled
// and listed, and the DELETE can be retried.
func TestUnregisterStoreFailureChangesNothing(t *testing.T) {
	o := newRaceOrigin(t)
	clk := newFakeClock(t0)
	db := tempBadger(t)
	reg := &flakyRegistry{Registry: db, fail: true}
	cfg := testConfig(t, raceYAML(""))
	e := newTestEngineOpts(t, cfg, db, Options{Clock: clk, Registry: reg})
	entry, err := config.ParseResource([]byte(fmt.Sprintf(`{"url": %q}`, o.url("/a"))), "a", cfg.Poller)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Register(t.Context(), entry); err != nil {
		t.Fatal(err)
	}
	if err := e.Unregister(t.Context(), "a"); err == nil {
		t.Fatal("Unregister succeeded with a failing store")
	}
	if _, ok := e.Status("a"); !ok {
		t.Fatal("a failed DELETE stopped the polling of a resource the store still has")
	}
	if d, ok := e.Definition("a"); !ok || d.Source != SourceAPI {
		t.Fatalf("a failed DELETE dropped the definition: %+v %v", d, ok)
	}
	reg.mu.Lock()
	reg.fail = false
	reg.mu.Unlock()
	if err := e.Unregister(t.Context(), "a"); err != nil {
		t.Fatalf("retried DELETE: %v", err)
	}
	if _, err := db.Resource(t.Context(), "a"); !errors.Is(err, storage.ErrGone) {
		t.Fatalf("after the retried DELETE: %v, want ErrGone", err)
	}
}

// A DELETE while the resource's poll is in flight waits for the poll: the
// poll's version is not left behind, its state does not bring the resource
// back, and the id registered again continues its sequence numbers.
func TestUnregisterDuringPollAndRegisterAgain(t *testing.T) {
	o := newRaceOrigin(t)
	clk := newFakeClock(t0)
	db := tempBadger(t)
	store := newSaveLog(db)
	cfg := testConfig(t, raceYAML(""))
	e := newTestEngineOpts(t, cfg, store, Options{Clock: clk, Registry: db})
	entry, err := config.ParseResource([]byte(fmt.Sprintf(`{"url": %q}`, o.url("/a"))), "a", cfg.Poller)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Register(t.Context(), entry); err != nil {
		t.Fatal(err)
	}
	for gen := 1; gen <= 3; gen++ {
		o.setGen("/a", gen)
		if _, err := e.PollNow(t.Context(), "a"); err != nil {
			t.Fatal(err)
		}
	}
	o.setGen("/a", 4)
	release := o.holdPage("/a")
	polling := pollInBackground(t, e, "a")
	waitStarted(t, o.started("/a"), "poll")
	deleted := make(chan error, 1)
	go func() { deleted <- e.Unregister(context.WithoutCancel(t.Context()), "a") }()
	select {
	case err := <-deleted:
		t.Fatalf("DELETE returned during the poll: %v", err)
	case <-time.After(100 * time.Millisecond): // it waits, as it must
	}
	release()
	if err := <-polling; err != nil {
		t.Fatalf("poll: %v", err)
	}
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Status("a"); ok {
		t.Fatal("deleted resource still polled")
	}
	if _, err := e.PollNow(t.Context(), "a"); !errors.Is(err, ErrUnknownResource) {
		t.Fatalf("PollNow after DELETE: %v", err)
	}
	for _, read := range []func() error{
		func() error { _, err := db.Resource(t.Context(), "a"); return err },
		func() error { _, err := db.PollState(t.Context(), "a"); return err },
		func() error { _, err := db.Versions(t.Context(), "a", 0, 0); return err },
	} {
		if err := read(); !errors.Is(err, storage.ErrGone) {
			t.Fatalf("after DELETE: %v, want ErrGone", err)
		}
	}

	if created, err := e.Register(t.Context(), entry); err != nil || !created {
		t.Fatalf("register again: %v %v", created, err)
	}
	o.setGen("/a", 5)
	if st, err := e.PollNow(t.Context(), "a"); err != nil || st.LastOutcome != OutcomeChanged {
		t.Fatalf("poll after re-registration: %+v %v", st, err)
	}
	seqs, gens := versionsOf(t, db, "a")
	if len(seqs) != 1 || seqs[0] != 5 || gens[0] != 5 {
		t.Fatalf("after re-registration: seqs %v gens %v, want seq 5 (after 1–4) holding gen 5", seqs, gens)
	}
	ack := store.acknowledged()["a"]
	for i, s := range ack {
		if s != uint64(i+1) {
			t.Fatalf("acknowledged seqs %v: reused or skipped", ack)
		}
	}
	if err := db.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// A reload (a policy switch) during a resource's first poll: the poll
// completes under the new policy, stores its version once, and the
// resource is scheduled by the new policy.
func TestReloadDuringFirstPoll(t *testing.T) {
	o := newRaceOrigin(t)
	clk := newFakeClock(t0)
	db := tempBadger(t)
	e := newTestEngine(t, testConfig(t, raceYAML("")), db, clk)
	cfgSmart := testConfig(t, raceYAML(fmt.Sprintf("  - {id: r, url: %q}\n", o.url("/r"))))
	cfgFlat := testConfig(t, raceYAML(fmt.Sprintf("  - {id: r, url: %q, policy: {kind: flat, interval: 7m}}\n", o.url("/r"))))
	if err := e.Apply(t.Context(), cfgSmart); err != nil {
		t.Fatal(err)
	}
	applyDuringPoll(t, e, o, "r", "/r", cfgFlat)
	st, _ := e.Status("r")
	if st.Policy != KindFlat || st.Polls != 1 || st.Changes != 1 || !st.NextPoll.Equal(clk.Now().Add(7*time.Minute)) {
		t.Fatalf("after the first poll under the new policy: %+v", st)
	}
	if seqs, _ := versionsOf(t, db, "r"); len(seqs) != 1 {
		t.Fatalf("seqs %v, want one version", seqs)
	}
	if o.hitCount("/r") != 1 {
		t.Fatalf("origin hit %d times, want 1", o.hitCount("/r"))
	}
}

// A change of how a page is extracted applies at the next poll even when
// the origin answers conditional requests: that poll asks for the whole page
// again instead of getting a 304 and keeping the version extracted under the
// old settings. Made by a reload, or in the file while the service was
// stopped (the validators and the body's hash in the stored state were
// learned under the old settings).
func TestExtractionChangeRefetchesPage(t *testing.T) {
	for _, restart := range []bool{false, true} {
		name := map[bool]string{false: "reload", true: "restart"}[restart]
		t.Run(name, func(t *testing.T) {
			o := newOrigin(t)
			o.setETag(`"v1"`)
			clk := newFakeClock(t0)
			store := newMemStore()
			cfgA := testConfig(t, raceYAML(fmt.Sprintf("  - {id: r, url: %q}\n", o.url("/p"))))
			cfgB := testConfig(t, raceYAML(fmt.Sprintf("  - {id: r, url: %q, timezone: Europe/Rome}\n", o.url("/p"))))
			e := newTestEngine(t, cfgA, store, clk)
			if st, err := e.PollNow(t.Context(), "r"); err != nil || st.LastOutcome != OutcomeChanged {
				t.Fatalf("first poll: %+v %v", st, err)
			}
			if restart {
				e = newTestEngine(t, cfgB, store, clk)
			} else {
				if st, err := e.PollNow(t.Context(), "r"); err != nil || st.LastOutcome != OutcomeNotModified {
					t.Fatalf("second poll: %+v %v", st, err)
				}
				if err := e.Apply(t.Context(), cfgB); err != nil {
					t.Fatal(err)
				}
			}
			if st, err := e.PollNow(t.Context(), "r"); err != nil || st.LastOutcome == OutcomeNotModified {
				t.Fatalf("first poll after the %s: %+v %v; want the page fetched and extracted again", name, st, err)
			}
		})
	}
}

// A reload that changes only a resource's policy keeps its validators: the
// next poll is still a conditional GET, answered 304.
func TestReloadPolicyChangeKeepsValidators(t *testing.T) {
	o := newOrigin(t)
	o.setETag(`"v1"`)
	clk := newFakeClock(t0)
	cfgA := testConfig(t, raceYAML(fmt.Sprintf("  - {id: r, url: %q, policy: {kind: flat, interval: 5m}}\n", o.url("/p"))))
	cfgB := testConfig(t, raceYAML(fmt.Sprintf("  - {id: r, url: %q, policy: {kind: smart, alpha: 0.5}, weight: 2}\n", o.url("/p"))))
	e := newTestEngine(t, cfgA, newMemStore(), clk)
	if st, err := e.PollNow(t.Context(), "r"); err != nil || st.LastOutcome != OutcomeChanged {
		t.Fatalf("first poll: %+v %v", st, err)
	}
	if err := e.Apply(t.Context(), cfgB); err != nil {
		t.Fatal(err)
	}
	if st, err := e.PollNow(t.Context(), "r"); err != nil || st.LastOutcome != OutcomeNotModified {
		t.Fatalf("poll after a policy-only reload: %+v %v; want a 304 to the kept ETag", st, err)
	}
}

// Switching a resource's policy by reload keeps what it learned: τ and the
// observed intervals through flat and budget and back to smart, the
// budget's learned rate through smart and back to budget.
func TestReloadPolicySwitchKeepsLearnedState(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	db := tempBadger(t)
	cfgOf := func(policy string) *config.Config {
		return testConfig(t, raceYAML(fmt.Sprintf("  - {id: r, url: %q, policy: %s}\n", o.url("/p"), policy)))
	}
	e := newTestEngine(t, cfgOf("{kind: smart, alpha: 0.5}"), db, clk)
	learned := func() PolicyState {
		e.mu.Lock()
		defer e.mu.Unlock()
		p := e.resources["r"].st.Policy
		p.Intervals = slices.Clone(p.Intervals)
		return p
	}
	for i := range 5 {
		clk.Advance(time.Duration(20+10*i) * time.Minute)
		o.set(datedPage("Site", fmt.Sprintf("post %d", i), clk.Now().Add(-time.Minute)))
		if st, err := e.PollNow(t.Context(), "r"); err != nil || st.LastOutcome != OutcomeChanged {
			t.Fatalf("poll %d: %+v %v", i, st, err)
		}
	}
	smartState := learned()
	if smartState.Tau == 10*time.Minute || len(smartState.Intervals) < 3 {
		t.Fatalf("nothing learned: %+v", smartState)
	}
	for _, policy := range []string{"{kind: flat, interval: 3m}", "{kind: budget}"} {
		if err := e.Apply(t.Context(), cfgOf(policy)); err != nil {
			t.Fatal(err)
		}
		if got := learned(); got.Tau != smartState.Tau || !slices.Equal(got.Intervals, smartState.Intervals) {
			t.Fatalf("switched to %s: τ %v intervals %v, want %v %v", policy, got.Tau, got.Intervals, smartState.Tau, smartState.Intervals)
		}
	}
	clk.Advance(time.Hour)
	o.set(datedPage("Site", "post under budget", clk.Now().Add(-time.Minute)))
	if _, err := e.PollNow(t.Context(), "r"); err != nil {
		t.Fatal(err)
	}
	budgetState := learned()
	if budgetState.Rate == nil {
		t.Fatal("budget learned no rate")
	}
	rate := *budgetState.Rate
	if err := e.Apply(t.Context(), cfgOf("{kind: smart, alpha: 0.5}")); err != nil {
		t.Fatal(err)
	}
	if got := learned(); got.Tau != budgetState.Tau || got.Rate == nil || !reflect.DeepEqual(*got.Rate, rate) {
		t.Fatalf("back to smart: τ %v (was %v), rate kept %v", got.Tau, budgetState.Tau, got.Rate != nil)
	}
	if err := e.Apply(t.Context(), cfgOf("{kind: budget}")); err != nil {
		t.Fatal(err)
	}
	if got := learned(); got.Rate == nil || !reflect.DeepEqual(*got.Rate, rate) {
		t.Fatal("back to budget: the learned rate was lost")
	}
	// And a restart (a new engine on the same store) resumes from it all.
	e2 := newTestEngine(t, cfgOf("{kind: budget}"), db, clk)
	e2.mu.Lock()
	restarted := e2.resources["r"].st.Policy
	e2.mu.Unlock()
	if restarted.Tau != budgetState.Tau || restarted.Rate == nil || !slices.Equal(restarted.Intervals, budgetState.Intervals) {
		t.Fatalf("after a restart: %+v, want %+v", restarted, budgetState)
	}
}

// A shutdown (Run's context cancelled) while polls and saves are in flight
// leaves a store that opens again, checks clean and holds every version it
// acknowledged, with the poll states of the polls that completed.
func TestShutdownDuringPollsKeepsAcknowledgedVersions(t *testing.T) {
	o := newRaceOrigin(t)
	clk := newFakeClock(t0)
	dir := t.TempDir()
	db := openTestBadger(t, dir)
	store := newSaveLog(db)
	var b strings.Builder
	for i := range 16 {
		id := fmt.Sprintf("r%02d", i)
		fmt.Fprintf(&b, "  - {id: %s, url: %q, policy: {kind: flat, interval: 1m}}\n", id, o.url("/"+id))
		o.mu.Lock()
		o.page("/" + id).bumpEach = 1
		o.page("/" + id).delay = time.Duration(i%4) * time.Millisecond
		o.mu.Unlock()
	}
	cfg := testConfig(t, strings.Replace(raceYAML(b.String()), "workers: 2", "workers: 6", 1))
	e := newTestEngineOpts(t, cfg, store, Options{Clock: clk})
	polled := make(chan struct{}, 1024)
	e.afterPoll = func(Status) { polled <- struct{}{} }
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- e.Run(ctx) }()
	for n := 0; n < 40; {
		clk.Advance(time.Minute)
		select {
		case <-polled:
			n++
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel() // with polls in flight
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	ack := store.acknowledged()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2 := openTestBadger(t, dir)
	defer db2.Close()
	if err := db2.Check(t.Context()); err != nil {
		t.Fatalf("store after shutdown: %v", err)
	}
	total := 0
	for id, seqs := range ack {
		total += len(seqs)
		stored, _ := versionsOf(t, db2, id)
		if !slices.Equal(stored, seqs) {
			t.Errorf("%s: acknowledged seqs %v, stored after reopening %v", id, seqs, stored)
		}
	}
	if total == 0 {
		t.Fatal("nothing stored before the shutdown")
	}
	// A new engine resumes: every resource's state is readable.
	e2 := newTestEngine(t, cfg, db2, clk)
	for _, st := range e2.Statuses() {
		if st.Polls == 0 && len(ack[st.ID]) > 0 {
			t.Errorf("%s: versions stored but no poll state after the restart", st.ID)
		}
	}
}

// A poll whose resource is removed while it runs is thrown away, and says
// so: a log line naming the resource and the reason, and
// dynamo_poller_polls_discarded_total{reason="removed"}.
func TestDiscardedPollLoggedAndCounted(t *testing.T) {
	o := newRaceOrigin(t)
	clk := newFakeClock(t0)
	with := testConfig(t, raceYAML(fmt.Sprintf("  - {id: r, url: %q}\n", o.url("/r"))))
	without := testConfig(t, raceYAML(""))
	var logs syncbuf.Buffer
	e := newTestEngineOpts(t, with, newMemStore(), Options{Clock: clk, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	discarded := func(reason string) float64 { return testutil.ToFloat64(e.m.discarded.WithLabelValues(reason)) }
	if n := discarded(DiscardRemoved); n != 0 {
		t.Fatalf("%v polls discarded before any poll", n)
	}
	applyDuringPoll(t, e, o, "r", "/r", without)
	if n := discarded(DiscardRemoved); n != 1 {
		t.Errorf("dynamo_poller_polls_discarded_total{reason=removed} = %v, want 1", n)
	}
	if n := discarded(DiscardLeaseLost); n != 0 {
		t.Errorf("dynamo_poller_polls_discarded_total{reason=lease_lost} = %v, want 0", n)
	}
	if line := logs.String(); !strings.Contains(line, `msg="poll result discarded" resource=r reason=removed`) {
		t.Errorf("log %q does not tell of the discarded poll", line)
	}
}

// FirstPoll after a registration whose first poll ran (the /new page adds,
// then asks for the first poll) fetches nothing more; on a resource never
// polled it polls; PollNow polls whatever was polled before.
func TestFirstPollFetchesOnce(t *testing.T) {
	o := newRaceOrigin(t)
	clk := newFakeClock(t0)
	cfg := testConfig(t, raceYAML(""))
	e := newTestEngineOpts(t, cfg, newMemStore(), Options{Clock: clk, Registry: newMemRegistry()})
	register := func(id string) {
		t.Helper()
		entry, err := config.ParseResource([]byte(`{"url": "`+o.url("/"+id)+`", "policy": {"kind": "flat", "interval": "15m"}}`), id, cfg.Poller)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Register(t.Context(), entry); err != nil {
			t.Fatal(err)
		}
	}
	register("ran")
	if n := e.runDue(t.Context()); n != 1 { // the first poll, as Run's worker makes it at once
		t.Fatalf("%d polls due at registration, want the first", n)
	}
	if st, err := e.FirstPoll(t.Context(), "ran"); err != nil || st.Polls != 1 || o.hitCount("/ran") != 1 {
		t.Fatalf("FirstPoll after the first poll: %+v %v, origin fetched %d times; want 1 poll, 1 fetch", st, err, o.hitCount("/ran"))
	}
	register("waiting")
	if st, err := e.FirstPoll(t.Context(), "waiting"); err != nil || st.Polls != 1 || o.hitCount("/waiting") != 1 {
		t.Fatalf("FirstPoll before the first poll: %+v %v, origin fetched %d times; want it polled once", st, err, o.hitCount("/waiting"))
	}
	if n := e.runDue(t.Context()); n != 0 {
		t.Errorf("%d polls due after FirstPoll polled it, want none", n)
	}
	if _, err := e.PollNow(t.Context(), "ran"); err != nil || o.hitCount("/ran") != 2 {
		t.Errorf("PollNow of a polled resource: %v, origin fetched %d times in all, want 2", err, o.hitCount("/ran"))
	}
}
