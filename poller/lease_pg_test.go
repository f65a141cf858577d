package poller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/postgres"
	"github.com/dynamo-rss/dynamo/storage/postgres/pgtest"
)

// The tests here run several nodes on one real PostgreSQL (the store's
// leases and registry) while a resource is redefined or removed through
// another node than the one polling it. Every node runs its due polls as
// Run's workers would (runDue), on a fake clock they share; a held page
// keeps a poll in flight, under its lease, for as long as a test needs.

// pgNode is one node: its store (its Leaser and Registry) and its engine.
type pgNode struct {
	db *postgres.Store
	e  *Engine
}

// pgCluster opens one node per name on a fresh database, each engine on
// cfg and clk.
func pgCluster(t *testing.T, cfg *config.Config, clk *fakeClock, names ...string) []*pgNode {
	t.Helper()
	return pgClusterAt(t, pgtest.DSN(t), cfg, clk, names...)
}

// pgClusterAt opens one node per name on the database dsn, one after the
// other (each New done before the next node opens), each engine on cfg
// and clk: a cluster started, or restarted, on what the database holds.
func pgClusterAt(t *testing.T, dsn string, cfg *config.Config, clk *fakeClock, names ...string) []*pgNode {
	t.Helper()
	out := make([]*pgNode, 0, len(names))
	for _, name := range names {
		db, err := postgres.Open(context.Background(), dsn, postgres.Options{NodeID: name})
		if err != nil {
			t.Fatalf("open the store as %s: %v", name, err)
		}
		t.Cleanup(func() {
			if err := db.Close(); err != nil {
				t.Errorf("close the store of %s: %v", name, err)
			}
		})
		out = append(out, &pgNode{db: db, e: newTestEngineOpts(t, cfg, db, Options{Clock: clk, Leaser: db, Registry: db})})
	}
	return out
}

// register registers (or replaces) resource id on n as the admin API's PUT
// does, with the JSON definition def.
func (n *pgNode) register(t *testing.T, id, def string) {
	t.Helper()
	n.e.mu.Lock()
	p := n.e.cfg.Poller
	n.e.mu.Unlock()
	entry, err := config.ParseResource([]byte(def), id, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.e.Register(t.Context(), entry); err != nil {
		t.Fatalf("register %s: %v", id, err)
	}
}

// syncRegistry makes n re-read the shared registry, as it does every
// registrySyncInterval.
func (n *pgNode) syncRegistry(t *testing.T) {
	t.Helper()
	if err := n.e.SyncRegistry(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// pollDueInBackground runs n's due polls on a goroutine, as a worker would;
// the channel receives how many there were.
func (n *pgNode) pollDueInBackground(t *testing.T) <-chan int {
	done := make(chan int, 1)
	go func() { done <- n.e.runDue(context.WithoutCancel(t.Context())) }()
	return done
}

func (n *pgNode) status(t *testing.T, id string) Status {
	t.Helper()
	st, ok := n.e.Status(id)
	if !ok {
		t.Fatalf("%s not scheduled on %s", id, n.db.NodeID())
	}
	return st
}

// await receives from c, failing the test after 10 s.
func await[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: not done within 10 s", what)
		panic("unreachable")
	}
}

// latestGen is the generation of id's newest stored version and the
// number of versions, 0 and 0 when there is none.
func latestGen(t *testing.T, db *postgres.Store, id string) (gen, versions int) {
	t.Helper()
	vs, err := db.Versions(t.Context(), id, 0, 0)
	if errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrGone) {
		return 0, 0
	}
	if err != nil {
		t.Fatalf("versions of %s: %v", id, err)
	}
	doc, _, err := db.Version(t.Context(), id, 1)
	if err != nil {
		t.Fatal(err)
	}
	return genOf(t, doc), len(vs)
}

// wantGone checks that the store has nothing of id but its tombstone.
func wantGone(t *testing.T, db *postgres.Store, id string) {
	t.Helper()
	for what, read := range map[string]func() error{
		"resource":   func() error { _, err := db.Resource(t.Context(), id); return err },
		"versions":   func() error { _, err := db.Versions(t.Context(), id, 0, 0); return err },
		"poll state": func() error { _, err := db.PollState(t.Context(), id); return err },
	} {
		if err := read(); !errors.Is(err, storage.ErrGone) {
			t.Errorf("%s of %s read through %s: %v, want ErrGone", what, id, db.NodeID(), err)
		}
	}
	regs, err := db.Registrations(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(regs.Registrations, func(r storage.Registration) bool { return r.ID == id }) {
		t.Errorf("%s still registered", id)
	}
}

// 1. A resource deleted through node A while node B polls it under its
// lease: B's poll stores nothing, neither its version nor (a 304) its
// poll state, so the id registered again later starts afresh; the store
// keeps the tombstone; B does not fetch the page again, though it learns of
// the delete only when it re-reads the registry, and then forgets the
// resource.
func TestLeaseDeletedElsewhereDuringPoll(t *testing.T) {
	for _, notModified := range []bool{false, true} {
		name := "changed"
		if notModified {
			name = "not modified"
		}
		t.Run(name, func(t *testing.T) {
			o := newRaceOrigin(t)
			clk := newFakeClock(t0)
			cfg := testConfig(t, raceYAML(""))
			ns := pgCluster(t, cfg, clk, "a", "b")
			a, b := ns[0], ns[1]
			if notModified {
				o.setLastModified("/r", t0.Add(-time.Hour))
			}
			def := fmt.Sprintf(`{"url": %q, "policy": {"kind": "flat", "interval": "10m"}}`, o.url("/r"))
			a.register(t, "r", def)
			b.syncRegistry(t)
			if n := b.e.runDue(t.Context()); n != 1 {
				t.Fatalf("B polled %d resources, want r", n)
			}
			if g, n := latestGen(t, b.db, "r"); g != 1 || n != 1 {
				t.Fatalf("after B's first poll: gen %d, %d versions", g, n)
			}

			clk.Advance(10 * time.Minute)
			o.setGen("/r", 2)
			release := o.holdPage("/r")
			defer release()
			polled := b.pollDueInBackground(t)
			waitStarted(t, o.started("/r"), "B's poll of r")
			if _, err := a.e.PollNow(t.Context(), "r"); !errors.Is(err, ErrPolledElsewhere) {
				t.Fatalf("A's PollNow during B's poll: %v, want ErrPolledElsewhere (B holds the lease)", err)
			}
			if err := a.e.Unregister(t.Context(), "r"); err != nil {
				t.Fatal(err)
			}
			release()
			await(t, polled, "B's poll")

			if st := b.status(t, "r"); st.LastOutcome != OutcomeError || !strings.Contains(st.LastError, storage.ErrLeaseLost.Error()) {
				t.Errorf("B's poll after the delete: %s (%s), want an error: lease lost", st.LastOutcome, st.LastError)
			}
			wantGone(t, a.db, "r")
			wantGone(t, b.db, "r")
			if _, ok := a.e.Status("r"); ok {
				t.Error("A still schedules r")
			}

			// B has not re-read the registry yet: it still schedules r, but
			// the store refuses its lease, so the page is not fetched.
			hits := o.hitCount("/r")
			clk.Set(b.status(t, "r").NextPoll)
			b.e.runDue(t.Context())
			if o.hitCount("/r") != hits {
				t.Error("B fetched the deleted resource's page again")
			}
			wantGone(t, b.db, "r")

			b.syncRegistry(t)
			if _, ok := b.e.Status("r"); ok {
				t.Fatal("B still schedules r after re-reading the registry")
			}
			clk.Advance(2 * time.Hour)
			a.e.runDue(t.Context())
			b.e.runDue(t.Context())
			if o.hitCount("/r") != hits {
				t.Error("the deleted resource's page fetched again")
			}
			wantGone(t, a.db, "r")

			// Registered again, it starts afresh: nothing of B's poll was
			// kept under the tombstone.
			a.register(t, "r", def)
			if _, err := a.db.PollState(t.Context(), "r"); !errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrGone) {
				t.Errorf("poll state of r registered again: %v, want none", err)
			}
			if g, n := latestGen(t, a.db, "r"); n != 0 {
				t.Errorf("r registered again has %d versions (newest gen %d), want none", n, g)
			}
			if err := a.db.Check(t.Context()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// 4. Deleted through node A and registered again through node B while B's
// poll of the old registration is in flight under the old lease: that poll
// commits nothing into the new registration (no version, no poll state),
// and the new registration is polled at once, by one node.
func TestLeaseOfOldRegistrationDoesNotCompleteIntoNewOne(t *testing.T) {
	o := newRaceOrigin(t)
	clk := newFakeClock(t0)
	cfg := testConfig(t, raceYAML(""))
	ns := pgCluster(t, cfg, clk, "a", "b")
	a, b := ns[0], ns[1]
	def := fmt.Sprintf(`{"url": %q, "policy": {"kind": "flat", "interval": "10m"}}`, o.url("/r"))
	a.register(t, "r", def)
	b.syncRegistry(t)
	if n := b.e.runDue(t.Context()); n != 1 {
		t.Fatalf("B polled %d resources, want r", n)
	}

	clk.Advance(10 * time.Minute)
	o.setGen("/r", 2)
	release := o.holdPage("/r")
	defer release()
	polled := b.pollDueInBackground(t)
	waitStarted(t, o.started("/r"), "B's poll of r")
	if err := a.e.Unregister(t.Context(), "r"); err != nil {
		t.Fatal(err)
	}
	b.register(t, "r", def) // B has not re-read the registry: to B, a PUT
	a.syncRegistry(t)
	release()
	await(t, polled, "B's old poll")

	if st := b.status(t, "r"); st.LastOutcome != OutcomeError || !strings.Contains(st.LastError, storage.ErrLeaseLost.Error()) {
		t.Errorf("B's old poll: %s (%s), want an error: lease lost", st.LastOutcome, st.LastError)
	}
	if g, n := latestGen(t, a.db, "r"); n != 0 {
		t.Fatalf("the new registration has %d versions (newest gen %d) before its first poll: the old lease completed into it", n, g)
	}
	if _, err := a.db.PollState(t.Context(), "r"); !errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrGone) {
		t.Fatalf("poll state of the new registration before its first poll: %v, want none", err)
	}

	// The new registration is due at once: one node polls it.
	hits := o.hitCount("/r")
	a.e.runDue(t.Context())
	b.e.runDue(t.Context())
	if got := o.hitCount("/r") - hits; got != 1 {
		t.Fatalf("the new registration fetched %d times, want once", got)
	}
	clk.Set(b.status(t, "r").NextPoll) // B's back-off after the lost lease
	a.e.runDue(t.Context())
	b.e.runDue(t.Context())
	if got := o.hitCount("/r") - hits; got != 1 {
		t.Fatalf("the new registration fetched %d times before its interval, want once", got)
	}
	vs, err := a.db.Versions(t.Context(), "r", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].Seq != 2 {
		t.Fatalf("versions of the new registration: %+v, want one, seq 2 (after the old one's 1)", vs)
	}
	if err := a.db.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// 2. Redefined through node A with another URL while node B polls the old
// URL under its lease. B's poll began under the old definition and is
// stored as a single node stores a poll in flight when its resource is
// redefined (TestReloadURLChangeDuringPollDropsOldPageValidators): its
// version is the old page as it was when the poll began, dated then, before
// the PUT. What that poll learned of the old page (its validators, its
// items) is not carried over to the new one: the new page, whose
// Last-Modified is older than the old page's, is fetched whole and stored.
// Afterwards only the new URL is polled, by one node at a time.
func TestLeaseRedefinedElsewhereDuringPoll(t *testing.T) {
	o := newRaceOrigin(t)
	clk := newFakeClock(t0)
	cfg := testConfig(t, raceYAML(""))
	ns := pgCluster(t, cfg, clk, "a", "b")
	a, b := ns[0], ns[1]
	o.setLastModified("/old", t0.Add(-time.Hour))
	o.setLastModified("/new", t0.Add(-48*time.Hour))
	o.setGen("/new", 7)
	defOf := func(path string) string {
		return fmt.Sprintf(`{"url": %q, "policy": {"kind": "flat", "interval": "10m"}}`, o.url(path))
	}
	a.register(t, "r", defOf("/old"))
	b.syncRegistry(t)
	if n := a.e.runDue(t.Context()); n != 1 {
		t.Fatalf("A polled %d resources, want r", n)
	}

	clk.Advance(10 * time.Minute)
	start := clk.Now()
	o.setGen("/old", 2)
	o.setLastModified("/old", t0)
	release := o.holdPage("/old")
	defer release()
	polled := b.pollDueInBackground(t)
	waitStarted(t, o.started("/old"), "B's poll of r")
	clk.Advance(time.Second)
	put := clk.Now()
	a.register(t, "r", defOf("/new"))
	release()
	await(t, polled, "B's poll")

	if st := b.status(t, "r"); st.LastOutcome != OutcomeChanged {
		t.Fatalf("B's poll: %s (%s), want %s", st.LastOutcome, st.LastError, OutcomeChanged)
	}
	doc, vi, err := a.db.Version(t.Context(), "r", 1)
	if err != nil {
		t.Fatal(err)
	}
	if genOf(t, doc) != 2 || doc.URL != o.url("/old") || !vi.Timestamp.Equal(start) || !vi.Timestamp.Before(put) {
		t.Fatalf("B's version: gen %d of %s at %v, want the old page's gen 2 as it was at %v, before the PUT", genOf(t, doc), doc.URL, vi.Timestamp, start)
	}

	b.syncRegistry(t)
	oldHits, newHits := o.hitCount("/old"), o.hitCount("/new")
	for range 25 { // 25 minutes: two intervals
		clk.Advance(time.Minute)
		a.e.runDue(t.Context())
		b.e.runDue(t.Context())
	}
	if got := o.hitCount("/old") - oldHits; got != 0 {
		t.Errorf("the old URL fetched %d times after the PUT", got)
	}
	if got := o.hitCount("/new") - newHits; got != 2 {
		t.Errorf("the new URL fetched %d times in two intervals, want 2", got)
	}
	if g, n := latestGen(t, a.db, "r"); g != 7 || n != 3 {
		t.Fatalf("after polls of the new URL: newest gen %d of %d versions, want the new page's (7), third", g, n)
	}
	if ov := o.overlaps(); len(ov) > 0 {
		t.Fatalf("pages fetched by two polls at once: %v", ov)
	}
}

// holdingOrigin serves one page whose requests can be held, with an ETag
// (answering 304 to it) or, with noValidators, without one.
type holdingOrigin struct {
	*origin
	mu      sync.Mutex
	hold    chan struct{}
	started chan struct{}
}

func newHoldingOrigin(t *testing.T, path, body string, noValidators bool) *holdingOrigin {
	h := &holdingOrigin{origin: newOrigin(t), started: make(chan struct{}, 16)}
	h.handle(path, func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		hold := h.hold
		h.mu.Unlock()
		if hold != nil {
			h.started <- struct{}{}
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		if !noValidators {
			w.Header().Set("ETag", `"v1"`)
			if r.Header.Get("If-None-Match") == `"v1"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	})
	return h
}

func (h *holdingOrigin) holdRequests() (release func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := make(chan struct{})
	h.hold = c
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			h.hold = nil
			h.mu.Unlock()
			close(c)
		})
	}
}

// 2, another redefinition: through node A, the page is to be read with
// selectors instead of its annotations, while node B polls it under the
// old definition. B's poll commits what it learned of the page under the
// old definition (its validators, its body's hash); the next poll, under
// the new one, must still fetch and extract the page again, whichever node
// makes it, and store what the selectors find.
func TestLeaseSelectorsRedefinedElsewhereDuringPoll(t *testing.T) {
	const body = `<html><head><title>Town</title></head><body>
<h1><!-- <channel:title> -->Town<!-- </channel:title> --></h1>
<p><!-- <item:title index="1"> -->annotated<!-- </item:title> --></p>
<ul><li><a href="/n/1">selected one</a></li><li><a href="/n/2">selected two</a></li></ul>
</body></html>`
	for _, noValidators := range []bool{false, true} {
		name := "etag"
		if noValidators {
			name = "same bytes"
		}
		t.Run(name, func(t *testing.T) {
			o := newHoldingOrigin(t, "/p", body, noValidators)
			clk := newFakeClock(t0)
			cfg := testConfig(t, raceYAML(""))
			ns := pgCluster(t, cfg, clk, "a", "b")
			a, b := ns[0], ns[1]
			def := fmt.Sprintf(`{"url": %q, "policy": {"kind": "flat", "interval": "10m"}`, o.url("/p"))
			a.register(t, "r", def+"}")
			b.syncRegistry(t)
			if n := a.e.runDue(t.Context()); n != 1 {
				t.Fatalf("A polled %d resources, want r", n)
			}

			clk.Advance(10 * time.Minute)
			release := o.holdRequests()
			defer release()
			polled := b.pollDueInBackground(t)
			await(t, o.started, "B's poll of r")
			a.register(t, "r", def+`, "select": {"item": "li", "title": "a", "link": "a @href"}}`)
			release()
			await(t, polled, "B's poll")
			b.syncRegistry(t)

			hits := o.hit("/p")
			for range 10 {
				clk.Advance(time.Minute)
				a.e.runDue(t.Context())
				b.e.runDue(t.Context())
			}
			if got := o.hit("/p") - hits; got != 1 {
				t.Fatalf("the page fetched %d times in an interval after the PUT, want once", got)
			}
			doc, _, err := a.db.Version(t.Context(), "r", 1)
			if err != nil {
				t.Fatal(err)
			}
			var titles []string
			for _, it := range doc.Items {
				titles = append(titles, it.Title)
			}
			if !slices.Equal(titles, []string{"selected one", "selected two"}) {
				t.Fatalf("newest version's items %q: the page was not extracted again with the selectors", titles)
			}
		})
	}
}

// 3. The configuration file changes a resource's interval and every node is
// reloaded: node A while node B polls the resource under its lease, B
// during that poll or after it. The resource is polled neither twice
// within the new interval nor less often than it asks: the polls after
// B's are at the new interval from it, whichever node makes them (the due
// time B's poll committed under the old interval, which every node's
// leases follow, is moved by B's reload).
func TestLeaseReloadIntervalDuringPollElsewhere(t *testing.T) {
	for _, tc := range []struct {
		name          string
		from, to      time.Duration
		bReloadsAfter bool // B is reloaded once its poll is committed, not during it
	}{
		{"longer, B reloaded during its poll", 10 * time.Minute, 30 * time.Minute, false},
		{"longer, B reloaded after its poll", 10 * time.Minute, 30 * time.Minute, true},
		{"shorter, B reloaded during its poll", 30 * time.Minute, 5 * time.Minute, false},
		{"shorter, B reloaded after its poll", 30 * time.Minute, 5 * time.Minute, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newRaceOrigin(t)
			clk := newFakeClock(t0)
			cfgOf := func(d time.Duration) *config.Config {
				return testConfig(t, raceYAML(fmt.Sprintf("  - {id: r, url: %q, policy: {kind: flat, interval: %s}}\n", o.url("/r"), d)))
			}
			ns := pgCluster(t, cfgOf(tc.from), clk, "a", "b")
			a, b := ns[0], ns[1]
			clk.Advance(time.Minute) // first polls are spread over a minute
			if n := a.e.runDue(t.Context()); n != 1 {
				t.Fatalf("A polled %d resources, want r", n)
			}

			clk.Advance(tc.from)
			polledAt := clk.Now()
			release := o.holdPage("/r")
			defer release()
			polled := b.pollDueInBackground(t)
			waitStarted(t, o.started("/r"), "B's poll of r")
			if err := a.e.Apply(t.Context(), cfgOf(tc.to)); err != nil {
				t.Fatal(err)
			}
			if !tc.bReloadsAfter {
				if err := b.e.Apply(t.Context(), cfgOf(tc.to)); err != nil {
					t.Fatal(err)
				}
			}
			release()
			if n := await(t, polled, "B's poll"); n != 1 {
				t.Fatalf("B polled %d resources, want r", n)
			}
			if tc.bReloadsAfter {
				if err := b.e.Apply(t.Context(), cfgOf(tc.to)); err != nil {
					t.Fatal(err)
				}
			}
			wantPolledEvery(t, clk, o, "/r", polledAt, tc.to, ns...)
		})
	}
}

// wantPolledEvery runs the nodes' due polls minute after minute for two
// intervals from last (a poll of the page at path) and checks that the
// page was fetched at last+interval and last+2·interval, and only then,
// and that every node reports that interval.
func wantPolledEvery(t *testing.T, clk *fakeClock, o *raceOrigin, path string, last time.Time, interval time.Duration, ns ...*pgNode) {
	t.Helper()
	for _, n := range ns {
		n.e.runDue(t.Context()) // due (by its queue) now, or not
	}
	var polls []time.Duration
	hits := o.hitCount(path)
	for clk.Now().Before(last.Add(2*interval + 2*time.Minute)) {
		clk.Advance(time.Minute)
		for _, n := range ns {
			n.e.runDue(t.Context())
		}
		if h := o.hitCount(path); h != hits {
			for range h - hits {
				polls = append(polls, clk.Now().Sub(last))
			}
			hits = h
		}
	}
	if want := []time.Duration{interval, 2 * interval}; !slices.Equal(polls, want) {
		t.Fatalf("polls at %v after the last one before the change, want %v", polls, want)
	}
	if ov := o.overlaps(); len(ov) > 0 {
		t.Fatalf("%s fetched by two polls at once: %v", path, ov)
	}
	for _, n := range ns {
		if st := n.status(t, "r"); st.Interval != interval {
			t.Errorf("%s's status: interval %v, want %v", n.db.NodeID(), st.Interval, interval)
		}
	}
}

// 3, through the admin API: a PUT on node A changes a registered
// resource's interval while node B polls it under its lease; B learns of
// it when it re-reads the registry, after its poll. As with a reload, the
// polls after B's are at the new interval.
func TestLeasePolicyRedefinedElsewhereDuringPoll(t *testing.T) {
	o := newRaceOrigin(t)
	clk := newFakeClock(t0)
	cfg := testConfig(t, raceYAML(""))
	ns := pgCluster(t, cfg, clk, "a", "b")
	a, b := ns[0], ns[1]
	defOf := func(d time.Duration) string {
		return fmt.Sprintf(`{"url": %q, "policy": {"kind": "flat", "interval": %q}}`, o.url("/r"), d)
	}
	a.register(t, "r", defOf(10*time.Minute))
	b.syncRegistry(t)
	if n := a.e.runDue(t.Context()); n != 1 {
		t.Fatalf("A polled %d resources, want r", n)
	}

	clk.Advance(10 * time.Minute)
	polledAt := clk.Now()
	release := o.holdPage("/r")
	defer release()
	polled := b.pollDueInBackground(t)
	waitStarted(t, o.started("/r"), "B's poll of r")
	a.register(t, "r", defOf(30*time.Minute))
	release()
	if n := await(t, polled, "B's poll"); n != 1 {
		t.Fatalf("B polled %d resources, want r", n)
	}
	b.syncRegistry(t)
	wantPolledEvery(t, clk, o, "/r", polledAt, 30*time.Minute, a, b)
}

// A poll policy changed in the file while the nodes were stopped applies
// at their start as a reload applies it: the first node to start moves the
// due time in the store, which every node's leases follow, from the last
// poll by the new interval, and records the policy it was placed under,
// so that the nodes started after it take the state as it is. The polls
// are at the new interval from the last one before the restart, whichever
// node makes them, a shorter interval not waiting out the old one.
func TestLeasePolicyChangedAtRestart(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to time.Duration
	}{
		{"shorter", time.Hour, 5 * time.Minute},
		{"longer", 5 * time.Minute, 30 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newRaceOrigin(t)
			clk := newFakeClock(t0)
			cfgOf := func(d time.Duration) *config.Config {
				return testConfig(t, raceYAML(fmt.Sprintf("  - {id: r, url: %q, policy: {kind: flat, interval: %s}}\n", o.url("/r"), d)))
			}
			dsn := pgtest.DSN(t)
			ns := pgClusterAt(t, dsn, cfgOf(tc.from), clk, "a", "b")
			clk.Advance(time.Minute) // first polls are spread over a minute
			polledAt := clk.Now()
			if n := ns[0].e.runDue(t.Context()); n != 1 {
				t.Fatalf("A polled %d resources, want r", n)
			}

			clk.Advance(time.Minute) // both nodes stopped, and started again under the new policy
			ns = pgClusterAt(t, dsn, cfgOf(tc.to), clk, "a", "b")
			wantPolledEvery(t, clk, o, "/r", polledAt, tc.to, ns...)
		})
	}
}

// waitFor checks cond until it holds, failing t after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// A registration made, replaced or deleted through node A reaches node B,
// which runs, at once: B does not wait for its periodic re-read of the
// registry (registrySyncInterval, which the clock, never moved here, does
// not reach) to poll a new resource, to poll a redefined one under its new
// definition, or to stop polling a deleted one.
func TestLeaseRegistrationReachesOtherNodesAtOnce(t *testing.T) {
	o := newRaceOrigin(t)
	clk := newFakeClock(t0)
	ns := pgCluster(t, testConfig(t, raceYAML("")), clk, "a", "b")
	a, b := ns[0], ns[1]
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- b.e.Run(ctx) }()
	defer func() {
		cancel()
		if err := await(t, ran, "B's Run"); err != nil {
			t.Error(err)
		}
	}()
	defOf := func(path string, d time.Duration) string {
		return fmt.Sprintf(`{"url": %q, "policy": {"kind": "flat", "interval": %q}}`, o.url(path), d)
	}
	onB := func(path string, d time.Duration) func() bool {
		return func() bool {
			def, ok := b.e.Definition("r")
			st, polled := b.e.Status("r")
			return ok && def.Polled && def.Source == SourceAPI && polled &&
				def.Resource.URL == o.url(path) && def.Resource.Policy.Interval.D() == d && st.URL == o.url(path)
		}
	}

	a.register(t, "r", defOf("/r", 10*time.Minute))
	waitFor(t, "r registered through A, scheduled on B", onB("/r", 10*time.Minute))
	a.register(t, "r", defOf("/r2", 30*time.Minute))
	waitFor(t, "r redefined through A, redefined on B", onB("/r2", 30*time.Minute))
	if err := a.e.Unregister(t.Context(), "r"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "r deleted through A, gone from B", func() bool {
		_, ok := b.e.Definition("r")
		return !ok
	})
	if now := clk.Now(); !now.Equal(t0) {
		t.Fatalf("the clock moved to %v", now)
	}
}
