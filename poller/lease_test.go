package poller

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// fakeDB models, in memory, what the PostgreSQL driver keeps for leases:
// per resource its poll state, next due time and lease; per host the next
// allowed request. Versions go to a shared memStore.
type fakeDB struct {
	mu    sync.Mutex
	store *memStore
	rows  map[string]*leaseRow
	hosts map[string]time.Time
}

type leaseRow struct {
	state []byte
	due   time.Time
	owner string
	until time.Time
}

func newFakeDB() *fakeDB {
	return &fakeDB{store: newMemStore(), rows: map[string]*leaseRow{}, hosts: map[string]time.Time{}}
}

// fakeNode is one node's Leaser over a fakeDB; dead makes it die between
// Acquire and Complete (its lease is never released).
type fakeNode struct {
	db   *fakeDB
	name string
	dead bool
}

func (n *fakeNode) Acquire(_ context.Context, req LeaseRequest) (Lease, error) {
	n.db.mu.Lock()
	defer n.db.mu.Unlock()
	row := n.db.rows[req.ID]
	if row == nil {
		row = &leaseRow{due: req.Now}
		n.db.rows[req.ID] = row
	}
	l := Lease{State: bytes.Clone(row.state)}
	switch {
	case row.owner != "" && row.owner != n.name && row.until.After(req.Now):
		l.Retry = row.until
	case !req.Force && row.due.After(req.Now):
		l.Retry = row.due
	case n.db.hosts[req.Host].After(req.Now):
		l.Retry = n.db.hosts[req.Host]
	default:
		n.db.hosts[req.Host] = req.Now.Add(req.HostInterval)
		row.owner, row.until = n.name, req.Now.Add(req.Lease)
		l.Granted = true
	}
	return l, nil
}

var errKilled = errors.New("node killed")

func (n *fakeNode) Complete(ctx context.Context, id string, doc *schema.Document, commit CommitFunc) (storage.SaveResult, error) {
	if n.dead {
		return storage.SaveResult{}, errKilled
	}
	n.db.mu.Lock()
	defer n.db.mu.Unlock()
	row := n.db.rows[id]
	if row == nil || row.owner != n.name {
		return storage.SaveResult{}, storage.ErrLeaseLost
	}
	var sr storage.SaveResult
	if doc != nil {
		var err error
		if sr, err = n.db.store.Save(ctx, doc); err != nil {
			return storage.SaveResult{}, err
		}
	}
	state, next, err := commit(sr)
	if err != nil {
		return storage.SaveResult{}, err
	}
	row.state, row.due, row.owner = state, next, ""
	return sr, nil
}

func (n *fakeNode) Reschedule(_ context.Context, ids []string, now time.Time, fn RescheduleFunc) error {
	n.db.mu.Lock()
	defer n.db.mu.Unlock()
	for _, id := range ids {
		row := n.db.rows[id]
		if row == nil || len(row.state) == 0 || row.owner != "" && row.until.After(now) {
			continue
		}
		if state, next, ok := fn(id, bytes.Clone(row.state)); ok {
			row.state, row.due = state, next
		}
	}
	return nil
}

// Three nodes share the polling of 20 resources: none is fetched twice
// within its interval, every change is stored once, and when a node dies
// mid-poll the others take its resources over once its lease expires.
func TestLeasesShareThePollingAmongNodes(t *testing.T) {
	const n = 20
	var mu sync.Mutex
	fetched := map[string][]time.Time{} // path → fetch times (on the fake clock)
	clk := newFakeClock(t0)
	o := newOrigin(t)
	for i := range n {
		path := fmt.Sprintf("/p%d", i)
		o.handle(path, func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			fetched[path] = append(fetched[path], clk.Now())
			k := len(fetched[path])
			mu.Unlock()
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, page("Site "+path, fmt.Sprintf("item %d", k))) // every fetch is a change
		})
	}
	var rs strings.Builder
	for i := range n {
		fmt.Fprintf(&rs, "  - {id: r%d, url: \"%s\", policy: {kind: flat, interval: 10m}}\n", i, o.url(fmt.Sprintf("/p%d", i)))
	}
	cfg := testConfig(t, baseYAML("resources:\n"+rs.String()))
	db := newFakeDB()
	nodes := make([]*fakeNode, 3)
	engines := make([]*Engine, 3)
	for i := range engines {
		nodes[i] = &fakeNode{db: db, name: fmt.Sprintf("node%d", i)}
		engines[i] = newTestEngineOpts(t, cfg, db.store, Options{Clock: clk, Leaser: nodes[i]})
	}
	step := func(alive []int) {
		clk.Set(clk.Now().Add(time.Minute))
		for _, i := range alive {
			engines[i].runDue(t.Context())
		}
	}
	for range 60 {
		step([]int{0, 1, 2})
	}
	mu.Lock()
	total := 0
	for path, ts := range fetched {
		total += len(ts)
		for k := 1; k < len(ts); k++ {
			if d := ts[k].Sub(ts[k-1]); d < 10*time.Minute {
				t.Errorf("%s fetched twice within its interval: %v apart", path, d)
			}
		}
	}
	mu.Unlock()
	// 60 minutes at one poll per 10 minutes, first polls within the first minute: 6 or 7 each.
	if total < 6*n || total > 7*n {
		t.Fatalf("%d fetches in an hour of 20 resources at 10 min, want 120–140", total)
	}
	versions := 0
	for i := range n {
		versions += len(db.store.versions[fmt.Sprintf("r%d", i)])
	}
	if versions != total {
		t.Fatalf("%d versions for %d changed fetches: a change stored twice or lost", versions, total)
	}
	polledBy := map[int]int{}
	for i, e := range engines {
		for _, st := range e.Statuses() {
			if st.Polls > 0 {
				polledBy[i]++
			}
		}
	}
	if len(polledBy) < 2 {
		t.Fatalf("polls not shared among the nodes: %v", polledBy)
	}

	// Node 0 dies: it takes leases and never completes.
	nodes[0].dead = true
	engines[0].runDue(t.Context()) // whatever is due now, node 0 leases and "dies" with
	var stuck []string
	db.mu.Lock()
	for id, row := range db.rows {
		if row.owner == "node0" {
			stuck = append(stuck, id)
		}
	}
	db.mu.Unlock()
	before := map[string]int{}
	mu.Lock()
	for p, ts := range fetched {
		before[p] = len(ts)
	}
	mu.Unlock()
	for range 20 { // 20 minutes: leases (2 × 5 s) long expired, every resource due again
		step([]int{1, 2})
	}
	mu.Lock()
	for i := range n {
		p := fmt.Sprintf("/p%d", i)
		if len(fetched[p]) <= before[p] {
			t.Errorf("%s not polled by the survivors in 20 minutes (leased by the dead node: %v)", p, stuck)
		}
	}
	mu.Unlock()
	db.mu.Lock()
	for id, row := range db.rows {
		if row.owner == "node0" && row.until.After(clk.Now()) {
			t.Errorf("%s still leased by the dead node", id)
		}
	}
	db.mu.Unlock()
}

// Politeness holds across nodes: two nodes, two resources on one host due
// at once, a one-minute gap: the second waits for the host's next slot.
func TestLeasesKeepHostPolitenessAcrossNodes(t *testing.T) {
	clk := newFakeClock(t0)
	o := newOrigin(t)
	y := baseYAML("resources:\n  - {id: a, url: \"" + o.url("/a") + "\", policy: {kind: flat, interval: 1h}}\n  - {id: b, url: \"" + o.url("/b") + "\", policy: {kind: flat, interval: 1h}}\n")
	y = strings.Replace(y, "per_host_interval: 0s", "per_host_interval: 1m", 1)
	cfg := testConfig(t, y)
	db := newFakeDB()
	e1 := newTestEngineOpts(t, cfg, db.store, Options{Clock: clk, Leaser: &fakeNode{db: db, name: "n1"}})
	e2 := newTestEngineOpts(t, cfg, db.store, Options{Clock: clk, Leaser: &fakeNode{db: db, name: "n2"}})
	clk.Set(t0.Add(time.Minute)) // both due on both nodes
	e1.runDue(t.Context())
	e2.runDue(t.Context())
	if got := o.hit("/a") + o.hit("/b"); got != 1 {
		t.Fatalf("%d requests to one host at once across two nodes, want 1", got)
	}
	clk.Set(t0.Add(2*time.Minute + time.Second))
	e1.runDue(t.Context())
	e2.runDue(t.Context())
	if o.hit("/a") != 1 || o.hit("/b") != 1 {
		t.Fatalf("after the host's gap: a %d, b %d; want both polled once", o.hit("/a"), o.hit("/b"))
	}
}

// TestLeaseAdoptsValidators: a node that polls a page after another node
// did takes the other's validators with the state: its request is
// conditional and the 304 ends the poll.
func TestLeaseAdoptsValidators(t *testing.T) {
	clk := newFakeClock(t0)
	o := newOrigin(t)
	var conditional atomic.Int32
	o.handle("/p", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			conditional.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page("Site", "one"))
	})
	cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: r, url: %q, policy: {kind: flat, interval: 10m}}\n", o.url("/p"))))
	db := newFakeDB()
	a := newTestEngineOpts(t, cfg, db.store, Options{Clock: clk, Leaser: &fakeNode{db: db, name: "a"}})
	b := newTestEngineOpts(t, cfg, db.store, Options{Clock: clk, Leaser: &fakeNode{db: db, name: "b"}})
	clk.Set(clk.Now().Add(time.Minute))
	if n := a.runDue(t.Context()); n != 1 {
		t.Fatalf("node a polled %d, want 1", n)
	}
	clk.Set(clk.Now().Add(11 * time.Minute))
	if n := b.runDue(t.Context()); n != 1 {
		t.Fatalf("node b polled %d, want 1", n)
	}
	if st, _ := b.Status("r"); st.LastOutcome != OutcomeNotModified || conditional.Load() != 1 {
		t.Errorf("node b after node a: %s, %d conditional requests; want not_modified after one", st.LastOutcome, conditional.Load())
	}
}

// TestLeaseRescheduleAfterReload: a reload that changes a resource's policy
// re-places its next poll in the store from the last poll any node made
// (here the other node's, newer than this node's own), keeps the stored
// history, and this node's queue follows the store.
func TestLeaseRescheduleAfterReload(t *testing.T) {
	clk := newFakeClock(t0)
	o := newOrigin(t)
	o.set(page("Site", "one"))
	yaml := func(interval string) string {
		return baseYAML(fmt.Sprintf("resources:\n  - {id: r, url: %q, policy: {kind: flat, interval: %s}}\n", o.url("/"), interval))
	}
	cfg := testConfig(t, yaml("10m"))
	db := newFakeDB()
	a := newTestEngineOpts(t, cfg, db.store, Options{Clock: clk, Leaser: &fakeNode{db: db, name: "a"}})
	b := newTestEngineOpts(t, cfg, db.store, Options{Clock: clk, Leaser: &fakeNode{db: db, name: "b"}})
	clk.Set(clk.Now().Add(time.Minute))
	if n := a.runDue(t.Context()); n != 1 {
		t.Fatalf("node a polled %d, want 1", n)
	}
	clk.Set(clk.Now().Add(11 * time.Minute))
	if n := b.runDue(t.Context()); n != 1 {
		t.Fatalf("node b polled %d, want 1", n)
	}
	bPolled := clk.Now()
	db.mu.Lock()
	history, err := rawHistory(db.rows["r"].state)
	db.mu.Unlock()
	if err != nil || len(history) == 0 {
		t.Fatalf("stored history %q (%v), want two polls", history, err)
	}

	clk.Set(clk.Now().Add(time.Minute))
	if err := a.Apply(t.Context(), testConfig(t, yaml("30m"))); err != nil {
		t.Fatal(err)
	}
	want := bPolled.Add(30 * time.Minute)
	db.mu.Lock()
	row := *db.rows["r"]
	db.mu.Unlock()
	if !row.due.Equal(want) {
		t.Errorf("stored next poll %v, want %v (node b's poll + 30m)", row.due, want)
	}
	if got, err := rawHistory(row.state); err != nil || !bytes.Equal(got, history) {
		t.Errorf("stored history after the reload %q (%v), want %q", got, err, history)
	}
	if st, _ := a.Status("r"); !st.NextPoll.Equal(want) {
		t.Errorf("node a's next poll %v, want the store's %v", st.NextPoll, want)
	}
}

// failingLeaser fails every call.
type failingLeaser struct{ fakeNode }

func (failingLeaser) Acquire(context.Context, LeaseRequest) (Lease, error) {
	return Lease{}, errors.New("database restarting")
}

// The lease keeper alone: what it asks for, and what its answers tell the
// engine to do.
func TestLeasesAcquire(t *testing.T) {
	ctx := t.Context()
	clk := newFakeClock(t0)
	db := newFakeDB()
	log := slog.New(slog.DiscardHandler)
	if newLeases(nil, clk, log) != nil {
		t.Fatal("a keeper without a Leaser")
	}
	p := config.Default().Poller
	a, b := newLeases(&fakeNode{db: db, name: "a"}, clk, log), newLeases(&fakeNode{db: db, name: "b"}, clk, log)
	if got := a.acquire(ctx, "r", "example.com", p, false); !got.granted || got.state != nil || got.requeue {
		t.Fatalf("first acquire: %+v, want granted with no state", got)
	}
	until := t0.Add(2 * p.Timeout.D())
	if got := b.acquire(ctx, "r", "example.com", p, false); got.granted || !got.requeue || !got.retry.Equal(until) {
		t.Errorf("acquire of a held lease: %+v, want a retry at the lease's end %v", got, until)
	}
	if got := b.acquire(ctx, "r", "example.com", p, true); got.granted || got.requeue {
		t.Errorf("forced acquire of a held lease: %+v, want refused, nothing requeued", got)
	}

	st := persisted{V: stateVersion, Kind: KindFlat, Polls: 4}
	state, err := st.marshal()
	if err != nil {
		t.Fatal(err)
	}
	db.rows["s"] = &leaseRow{state: state, due: t0}
	if got := b.acquire(ctx, "s", "other.example", p, false); !got.granted || got.state == nil || got.state.Polls != 4 {
		t.Errorf("acquire of a stored state: %+v, want granted with the state of 4 polls", got)
	}
	db.rows["u"] = &leaseRow{state: []byte("{garbled"), due: t0}
	if got := b.acquire(ctx, "u", "third.example", p, false); !got.granted || got.state != nil {
		t.Errorf("acquire of an undecodable state: %+v, want granted, no state", got)
	}

	f := newLeases(&failingLeaser{}, clk, log)
	if got := f.acquire(ctx, "r", "example.com", p, false); got.granted || !got.requeue || !got.retry.Equal(t0.Add(leaseRetryOnError)) {
		t.Errorf("store failing: %+v, want a retry in %v", got, leaseRetryOnError)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if got := f.acquire(cctx, "r", "example.com", p, false); got.granted || got.requeue {
		t.Errorf("context ended: %+v, want nothing requeued", got)
	}
}

// A state another node wrote is taken with this node's definition.
func TestAdopted(t *testing.T) {
	since := t0.Add(-time.Hour)
	own := persisted{URL: "https://a.example/", Kind: KindSmart, Extraction: 7, PolicyKey: 9, Since: since}
	theirs := persisted{URL: "https://a.example/", Kind: KindFlat, Extraction: 7, PolicyKey: 3, Since: t0, Polls: 5,
		Validators: validators{ETag: `"x"`}, BodyHash: 11, Last: &lastVersion{Items: []uint64{1}}}
	got := adopted(&own, theirs)
	if got.Kind != KindSmart || got.PolicyKey != 9 || got.Polls != 5 || !got.Since.Equal(since) ||
		got.Validators.ETag != `"x"` || got.BodyHash != 11 || got.Last == nil {
		t.Errorf("same definition: %+v", got)
	}
	theirs.Extraction = 8
	if got := adopted(&own, theirs); got.Validators.ETag != "" || got.BodyHash != 0 || got.Last == nil || got.Extraction != 7 {
		t.Errorf("another extraction: %+v, want validators and body hash dropped, the last version kept", got)
	}
	theirs.URL = "https://b.example/"
	if got := adopted(&own, theirs); got.Last != nil || got.URL != own.URL {
		t.Errorf("another page: %+v, want nothing to compare with", got)
	}
}

// The keeper rewrites stored states with what the engine plans, keeping
// their history, and commits polls under the lease.
func TestLeasesRescheduleAndComplete(t *testing.T) {
	ctx := t.Context()
	clk := newFakeClock(t0)
	db := newFakeDB()
	l := newLeases(&fakeNode{db: db, name: "a"}, clk, slog.New(slog.DiscardHandler))
	rec := PollRecord{Time: t0.Add(-time.Hour), Outcome: OutcomeChanged, Wait: time.Hour}
	db.rows["r"] = &leaseRow{state: stateWithHistory(t, rec), due: t0.Add(time.Hour)}
	db.rows["gone"] = &leaseRow{state: stateWithHistory(t, rec), due: t0.Add(time.Hour)}
	db.rows["bad"] = &leaseRow{state: []byte("{garbled"), due: t0.Add(time.Hour)}
	at := t0.Add(10 * time.Minute)
	planned := l.reschedule(ctx, []string{"r", "gone", "bad"}, func(id string, st *persisted) (time.Time, bool) {
		if id == "gone" {
			return time.Time{}, false
		}
		st.Kind, st.NextPoll = KindSmart, at
		return at, true
	})
	if len(planned) != 1 || !planned["r"].Equal(at) {
		t.Errorf("planned %v, want r at %v", planned, at)
	}
	row := db.rows["r"]
	st, err := unmarshalState(row.state)
	if err != nil || st.Kind != KindSmart || !row.due.Equal(at) {
		t.Errorf("stored %+v (%v), due %v; want smart, due %v", st, err, row.due, at)
	}
	if h, err := historyOf(row.state); err != nil || len(h) != 1 {
		t.Errorf("history after the reschedule: %v, %v; want the record kept", h, err)
	}
	if !db.rows["gone"].due.Equal(t0.Add(time.Hour)) {
		t.Error("a resource the plan left alone was rescheduled")
	}

	p := config.Default().Poller
	if got := l.acquire(ctx, "r", "example.com", p, true); !got.granted {
		t.Fatalf("acquire: %+v", got)
	}
	if _, err := l.complete(ctx, "r", nil, func(storage.SaveResult) ([]byte, time.Time, bool, error) {
		return nil, time.Time{}, false, nil
	}); !errors.Is(err, errRemovedDuringPoll) {
		t.Errorf("complete of a removed resource: %v, want errRemovedDuringPoll", err)
	}
	next := t0.Add(2 * time.Hour)
	if _, err := l.complete(ctx, "r", nil, func(storage.SaveResult) ([]byte, time.Time, bool, error) {
		return []byte("state"), next, true, nil
	}); err != nil || string(db.rows["r"].state) != "state" || !db.rows["r"].due.Equal(next) || db.rows["r"].owner != "" {
		t.Errorf("complete: %v, row %+v; want the state stored, due %v, the lease released", err, db.rows["r"], next)
	}
	if _, err := l.complete(ctx, "r", nil, func(storage.SaveResult) ([]byte, time.Time, bool, error) {
		return []byte("late"), next, true, nil
	}); !errors.Is(err, storage.ErrLeaseLost) {
		t.Errorf("complete without the lease: %v, want ErrLeaseLost", err)
	}
}
