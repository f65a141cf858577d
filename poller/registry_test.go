package poller

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/storage"
)

// memRegistry is an in-memory Registry that records what it was asked.
type memRegistry struct {
	mu      sync.Mutex
	rev     Revision
	regs    map[string]Registration
	revs    map[string]Revision // of each registration's last change
	deleted map[string]Revision // ids unregistered and not registered again
	gone    []string
}

func newMemRegistry() *memRegistry {
	return &memRegistry{regs: map[string]Registration{}, revs: map[string]Revision{}, deleted: map[string]Revision{}}
}

// deltaRegistry is a memRegistry that tells what changed after a revision
// ([RegistryChanges]), as the PostgreSQL store does.
type deltaRegistry struct{ *memRegistry }

func (d deltaRegistry) RegistrationsSince(_ context.Context, since Revision) (RegistryDelta, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := RegistryDelta{Revision: d.rev}
	for id, r := range d.revs {
		if r > since {
			out.Changed = append(out.Changed, d.regs[id])
		}
	}
	for id, r := range d.deleted {
		if r > since {
			out.Deleted = append(out.Deleted, id)
		}
	}
	return out, nil
}

func (m *memRegistry) Registrations(context.Context) (RegistrySnapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	regs := slices.SortedFunc(maps.Values(m.regs), func(a, b Registration) int { return strings.Compare(a.ID, b.ID) })
	return RegistrySnapshot{Revision: m.rev, Registrations: regs}, nil
}

func (m *memRegistry) Register(_ context.Context, reg Registration) (RegisterResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, had := m.regs[reg.ID]
	if had {
		reg.Registered = old.Registered
	}
	m.regs[reg.ID] = reg
	m.rev++
	m.revs[reg.ID] = m.rev
	delete(m.deleted, reg.ID)
	return RegisterResult{Created: !had, Revision: m.rev}, nil
}

func (m *memRegistry) Unregister(_ context.Context, id string) (Revision, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.regs[id]; !ok {
		return 0, storage.ErrNotFound
	}
	delete(m.regs, id)
	delete(m.revs, id)
	m.gone = append(m.gone, id)
	m.rev++
	m.deleted[id] = m.rev
	return m.rev, nil
}

func TestRegisterPollsAtOnceAndSurvivesRestartAndReload(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	store, reg := newMemStore(), newMemRegistry()
	cfg := testConfig(t, baseYAML("resources:\n  - {id: file, url: \""+o.url("/file")+"\"}\n"))
	e, err := New(t.Context(), cfg, store, Options{Clock: clk, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })

	entry, err := config.ParseResource([]byte(`{"url": "`+o.url("/api")+`", "policy": {"kind": "flat", "interval": "15m"}}`), "api1", cfg.Poller)
	if err != nil {
		t.Fatal(err)
	}
	created, err := e.Register(t.Context(), entry)
	if err != nil || !created {
		t.Fatalf("Register = %v, %v", created, err)
	}
	st, ok := e.Status("api1")
	if !ok || !st.NextPoll.Equal(t0) {
		t.Fatalf("registered resource next poll %v, want now (%v)", st.NextPoll, t0)
	}
	if n := e.runDue(t.Context()); n != 1 || o.hit("/api") != 1 {
		t.Fatalf("polled %d due, origin hit %d, want the registered page polled at once", n, o.hit("/api"))
	}
	if created, err := e.Register(t.Context(), entry); err != nil || created {
		t.Fatalf("second Register = %v, %v; want replaced", created, err)
	}

	// The file's ids are not the API's to change.
	fileEntry := entry
	fileEntry.ID = "file"
	if _, err := e.Register(t.Context(), fileEntry); !errors.Is(err, ErrDeclaredInFile) {
		t.Fatalf("Register of a file id: %v, want ErrDeclaredInFile", err)
	}
	if err := e.Unregister(t.Context(), "file"); !errors.Is(err, ErrDeclaredInFile) {
		t.Fatalf("Unregister of a file id: %v", err)
	}
	if err := e.Unregister(t.Context(), "nope"); !errors.Is(err, ErrUnknownResource) {
		t.Fatalf("Unregister of an unknown id: %v", err)
	}

	// A reload re-applies the file; registered resources stay.
	cfg2 := testConfig(t, baseYAML("resources:\n  - {id: file2, url: \""+o.url("/file2")+"\"}\n"))
	if err := e.Apply(t.Context(), cfg2); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Status("api1"); !ok {
		t.Fatal("a reload dropped the registered resource")
	}
	if _, ok := e.Status("file"); ok {
		t.Fatal("a reload kept a resource the file no longer declares")
	}
	defs := e.Definitions()
	if len(defs) != 2 || defs[0].Resource.ID != "api1" || defs[0].Source != SourceAPI || defs[1].Source != SourceFile || defs[0].Registered.IsZero() {
		t.Fatalf("definitions %+v", defs)
	}

	// A new engine on the same registry (a restart, or another node) polls it.
	e2, err := New(t.Context(), cfg2, store, Options{Clock: clk, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e2.Close() })
	if st, ok := e2.Status("api1"); !ok || st.URL != o.url("/api") || st.Policy != KindFlat {
		t.Fatalf("after restart %+v %v", st, ok)
	}

	if err := e.Unregister(t.Context(), "api1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Status("api1"); ok {
		t.Fatal("unregistered resource still polled")
	}
	if len(reg.gone) != 1 || reg.gone[0] != "api1" {
		t.Fatalf("registry removals %v", reg.gone)
	}
}

func TestRegisterWithoutRegistry(t *testing.T) {
	e := newTestEngine(t, testConfig(t, baseYAML("")), newMemStore(), newFakeClock(t0))
	if _, err := e.Register(t.Context(), config.ResourceEntry{ID: "a", URL: "http://x/"}); !errors.Is(err, ErrNoRegistry) {
		t.Fatalf("%v", err)
	}
}

func TestFetchPageGoesThroughTheGuard(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	e := newTestEngine(t, testConfig(t, baseYAML("")), newMemStore(), clk)
	p, err := e.FetchPage(t.Context(), o.url("/page"))
	if err != nil || !strings.Contains(string(p.Body), "channel:title") || p.URL != o.url("/page") {
		t.Fatalf("FetchPage: %+v %v", p, err)
	}
	// Without allow_private, loopback is refused by the SSRF guard.
	strict := newTestEngine(t, testConfig(t, strings.Replace(baseYAML(""), "allow_private: true", "allow_private: false", 1)), newMemStore(), clk)
	if _, err := strict.FetchPage(t.Context(), o.url("/page")); err == nil {
		t.Fatal("a loopback page was fetched without allow_private")
	}
}

// TestSyncRegistryAcrossNodes checks that a node sees what another node
// registered, replaced and deleted in the shared registry once it re-reads it.
func TestSyncRegistryAcrossNodes(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	store, reg := newMemStore(), newMemRegistry()
	cfg := testConfig(t, baseYAML(""))
	a, err := New(t.Context(), cfg, store, Options{Clock: clk, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	b, err := New(t.Context(), cfg, store, Options{Clock: clk, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })

	entry, err := config.ParseResource([]byte(`{"url": "`+o.url("/x")+`", "policy": {"kind": "flat", "interval": "15m"}}`), "x", cfg.Poller)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Register(t.Context(), entry); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Status("x"); ok {
		t.Fatal("b knows x before re-reading the registry")
	}
	if err := b.SyncRegistry(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st, ok := b.Status("x"); !ok || st.Policy != "flat" || st.URL != o.url("/x") {
		t.Fatalf("after sync, b's x = %+v, %v", st, ok)
	}
	// Replaced on a: b follows.
	entry.URL = o.url("/y")
	if _, err := a.Register(t.Context(), entry); err != nil {
		t.Fatal(err)
	}
	if err := b.SyncRegistry(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st, _ := b.Status("x"); st.URL != o.url("/y") {
		t.Errorf("after replace and sync, b polls %q", st.URL)
	}
	// Deleted on a: b stops polling it.
	if err := a.Unregister(t.Context(), "x"); err != nil {
		t.Fatal(err)
	}
	if err := b.SyncRegistry(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Status("x"); ok {
		t.Error("b still polls x after it was deleted on a")
	}
}

// TestStatusKeepsDiagnostics checks that a poll's extraction diagnostics
// reach the status (the pages for people show them), and are replaced by
// the next extraction's.
func TestStatusKeepsDiagnostics(t *testing.T) {
	o := newOrigin(t)
	o.set(`<html><body><!-- <channel:title> -->T<!-- </channel:title> -->
<!-- <item:title index="1"> -->x<!-- </item:title> -->
<!-- <item:extension index="1" uri="http://purl.org/dc/elements/1.1/" prefix="dc" localName="date"> -->the day after the fair<!-- </item:extension> -->
</body></html>`)
	clk := newFakeClock(t0)
	e := newTestEngine(t, testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: r, url: %q, policy: {kind: flat, interval: 1h}}\n", o.url("/")))), newMemStore(), clk)
	pollAtNext(t, e, clk, "r")
	st, _ := e.Status("r")
	if len(st.Diagnostics) != 1 || !strings.Contains(st.Diagnostics[0], "unreadable date") {
		t.Fatalf("diagnostics %q, want the unreadable date", st.Diagnostics)
	}
	o.set(page("T", "x"))
	pollAtNext(t, e, clk, "r")
	if st, _ := e.Status("r"); len(st.Diagnostics) != 0 {
		t.Errorf("after a clean page, diagnostics %q", st.Diagnostics)
	}
}

// slowWatchedRegistry is a memRegistry that tells of changes as a
// [RegistryWatcher] does, and whose every read takes readTakes on clk.
type slowWatchedRegistry struct {
	*memRegistry
	clk       *fakeClock
	readTakes time.Duration
	reads     atomic.Int64
	failing   atomic.Bool // reads fail, as with the store unreachable
	mu        sync.Mutex
	ch        chan struct{}
}

func (r *slowWatchedRegistry) Registrations(ctx context.Context) (RegistrySnapshot, error) {
	r.clk.Advance(r.readTakes)
	r.reads.Add(1)
	if r.failing.Load() {
		return RegistrySnapshot{}, fmt.Errorf("read: %w", storage.ErrUnavailable)
	}
	return r.memRegistry.Registrations(ctx)
}

func (r *slowWatchedRegistry) RegistryChanged() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ch
}

// changed is another node's change: the channel handed out closes.
func (r *slowWatchedRegistry) changed() {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.ch)
	r.ch = make(chan struct{})
}

// TestRegistryChangesReadAfterRest: word of another node's change is read
// at once after a quiet spell, but when reads are slow (here 100 ms a read)
// the next one waits until four times the last read's length has passed
// since it ended, so that a stream of changes cannot keep a node reading
// the whole registry back to back.
func TestRegistryChangesReadAfterRest(t *testing.T) {
	clk := newFakeClock(t0)
	reg := &slowWatchedRegistry{memRegistry: newMemRegistry(), clk: clk, readTakes: 100 * time.Millisecond, ch: make(chan struct{})}
	cfg := testConfig(t, baseYAML(""))
	e, err := New(t.Context(), cfg, newMemStore(), Options{Clock: clk, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); e.reg.follow(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	pendingAt := clk.pendingAt
	reads := reg.reads.Load()
	reg.changed() // after a quiet spell: read at once
	waitFor(t, "the first change read", func() bool { return reg.reads.Load() == reads+1 })
	lastEnd := clk.Now()
	reg.changed() // right after a 100 ms read: rest 400 ms first
	waitFor(t, "a rest of four reads' length", func() bool { return pendingAt(lastEnd.Add(400 * time.Millisecond)) })
	if n := reg.reads.Load(); n != reads+1 {
		t.Fatalf("%d reads during the rest, want none", n-reads-1)
	}
	clk.Advance(400 * time.Millisecond)
	waitFor(t, "the second change read after the rest", func() bool { return reg.reads.Load() == reads+2 })
}

// TestRegistryReadRetriedSoonAfterFailure: a read of the registry that
// failed (the store unreachable) is tried again after a second, not at the
// next 5 s re-read, so that a node follows the others again within about
// a second of the store's return.
func TestRegistryReadRetriedSoonAfterFailure(t *testing.T) {
	clk := newFakeClock(t0)
	reg := &slowWatchedRegistry{memRegistry: newMemRegistry(), clk: clk, ch: make(chan struct{})}
	var logs bytes.Buffer // written by syncRegistry, read once it has returned
	e := newTestEngineOpts(t, testConfig(t, baseYAML("")), newMemStore(), Options{Clock: clk, Registry: reg,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); e.reg.follow(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	waitFor(t, "the periodic re-read's timer", func() bool { return clk.pendingAt(t0.Add(registrySyncInterval)) })
	reads := reg.reads.Load() // New's own read
	reg.failing.Store(true)
	clk.Advance(registrySyncInterval)
	waitFor(t, "the failed read", func() bool { return reg.reads.Load() == reads+1 })
	failedAt := clk.Now()
	waitFor(t, "a retry a second after the failure", func() bool { return clk.pendingAt(failedAt.Add(registryRetryInterval)) })
	reg.failing.Store(false)
	clk.Advance(registryRetryInterval)
	waitFor(t, "the retried read", func() bool { return reg.reads.Load() == reads+2 })
	// Read again: back to the periodic re-read, and to reading on word of a change.
	waitFor(t, "the periodic timer after a good read", func() bool { return clk.pendingAt(clk.Now().Add(registrySyncInterval)) })
	reg.changed()
	waitFor(t, "a change read at once", func() bool { return reg.reads.Load() == reads+3 })
	cancel()
	<-done
	if n := strings.Count(logs.String(), "registry not re-read"); n != 1 {
		t.Errorf("%d warnings of a failed read, want 1 (the read that failed, none when the context ends):\n%s", n, logs.String())
	}
}

// TestUnregisterLeavesTheOrder: a resource unregistered and registered
// again is listed once, last; the first one registered included.
func TestUnregisterLeavesTheOrder(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	cfg := testConfig(t, baseYAML("resources: []\n"))
	e, err := New(t.Context(), cfg, newMemStore(), Options{Clock: clk, Registry: newMemRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	register := func(id string) {
		entry, err := config.ParseResource([]byte(`{"url": "`+o.url("/"+id)+`"}`), id, cfg.Poller)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Register(t.Context(), entry); err != nil {
			t.Fatalf("Register %s: %v", id, err)
		}
	}
	register("a")
	register("b")
	if err := e.Unregister(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	register("a")
	var ids []string
	for _, st := range e.Statuses() {
		ids = append(ids, st.ID)
	}
	if !slices.Equal(ids, []string{"b", "a"}) {
		t.Errorf("statuses of %v, want [b a]", ids)
	}
}

// TestRegisteredTimeOfAFormerFileResource: a resource the file declared,
// dropped from it and then registered through the API (its poll state
// kept in the store), is listed as registered at its registration, not
// when the file first declared it.
func TestRegisteredTimeOfAFormerFileResource(t *testing.T) {
	o := newOrigin(t)
	o.set(page("Site", "one"))
	clk := newFakeClock(t0)
	store := newMemStore()
	cfg := testConfig(t, baseYAML(fmt.Sprintf("resources:\n  - {id: x, url: %q}\n", o.url("/"))))
	e, err := New(t.Context(), cfg, store, Options{Clock: clk, Registry: newMemRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	if _, err := e.PollNow(t.Context(), "x"); err != nil {
		t.Fatal(err)
	}
	clk.Set(t0.Add(time.Hour))
	empty := testConfig(t, baseYAML("resources: []\n"))
	if err := e.Apply(t.Context(), empty); err != nil {
		t.Fatal(err)
	}
	entry, err := config.ParseResource([]byte(`{"url": "`+o.url("/")+`"}`), "x", empty.Poller)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Register(t.Context(), entry); err != nil {
		t.Fatal(err)
	}
	want := t0.Add(time.Hour)
	d, ok := e.Definition("x")
	if !ok || d.Source != SourceAPI || !d.Registered.Equal(want) {
		t.Errorf("Definition: %v, source %s, registered %v; want api, %v", ok, d.Source, d.Registered, want)
	}
	if defs := e.Definitions(); len(defs) != 1 || !defs[0].Registered.Equal(want) {
		t.Errorf("Definitions: %+v, want x registered at %v", defs, want)
	}
}

// followerProbe records what a registry follower, built without an engine,
// asks of the engine's side.
type followerProbe struct {
	cfg     *config.Config
	applied []string // "id" for a registration applied, "-id" for a removal
	held    []string
}

func (p *followerProbe) apply(_ context.Context, _ *config.Config, id string, reg *registration) error {
	if reg == nil {
		id = "-" + id
	}
	p.applied = append(p.applied, id)
	return nil
}

func (p *followerProbe) hold(_ context.Context, id string) (func(), error) {
	p.held = append(p.held, id)
	return func() { p.held = append(p.held, "released "+id) }, nil
}

func newProbedFollower(t *testing.T, reg Registry) (*registryFollower, *followerProbe) {
	t.Helper()
	p := &followerProbe{cfg: testConfig(t, baseYAML("resources:\n  - {id: file, url: \"https://example.com/\"}\n"))}
	f := newRegistryFollower(reg, newFakeClock(t0), slog.New(slog.DiscardHandler), p.apply, func() *config.Config { return p.cfg }, p.hold)
	return f, p
}

// The follower alone makes this node's changes: in the registry first,
// then through apply; the file's resources are not its to change.
func TestFollowerRegisterUnregister(t *testing.T) {
	ctx := t.Context()
	if f, _ := newProbedFollower(t, nil); f.enabled() {
		t.Error("a follower without a registry is enabled")
	} else if _, err := f.register(ctx, config.ResourceEntry{ID: "x", URL: "https://example.com/x"}); !errors.Is(err, ErrNoRegistry) {
		t.Errorf("register without a registry: %v, want ErrNoRegistry", err)
	}
	mr := newMemRegistry()
	f, p := newProbedFollower(t, mr)
	if created, err := f.register(ctx, config.ResourceEntry{ID: "x", URL: "https://example.com/x"}); err != nil || !created {
		t.Fatalf("register: %v, %v", created, err)
	}
	if created, err := f.register(ctx, config.ResourceEntry{ID: "x", URL: "https://example.com/y"}); err != nil || created {
		t.Fatalf("register again: %v, %v; want a replacement", created, err)
	}
	if reg, ok := f.registration("x"); !ok || reg.entry.URL != "https://example.com/y" || !reg.registered.Equal(t0) {
		t.Errorf("registration %+v, %v", reg, ok)
	}
	if _, err := f.register(ctx, config.ResourceEntry{ID: "file", URL: "https://example.com/z"}); !errors.Is(err, ErrDeclaredInFile) {
		t.Errorf("register a file's id: %v, want ErrDeclaredInFile", err)
	}
	if err := f.unregister(ctx, "file"); !errors.Is(err, ErrDeclaredInFile) {
		t.Errorf("unregister a file's id: %v, want ErrDeclaredInFile", err)
	}
	if err := f.unregister(ctx, "nope"); !errors.Is(err, ErrUnknownResource) {
		t.Errorf("unregister an unknown id: %v, want ErrUnknownResource", err)
	}
	if err := f.unregister(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"x", "x", "-x"}; !slices.Equal(p.applied, want) {
		t.Errorf("applied %v, want %v", p.applied, want)
	}
	if want := []string{"x", "released x"}; !slices.Equal(p.held, want) {
		t.Errorf("held %v, want %v (the poll in flight waited for, then released)", p.held, want)
	}
	if len(f.registrations()) != 0 || !slices.Equal(mr.gone, []string{"x"}) {
		t.Errorf("after unregister: %v here, %v gone from the registry", f.registrations(), mr.gone)
	}
}

// Another node's changes reach a follower by its reads: all of the
// registry, or what changed since its last read; a read older than one
// applied changes nothing.
func TestFollowerSync(t *testing.T) {
	ctx := t.Context()
	mr := newMemRegistry()
	a, _ := newProbedFollower(t, deltaRegistry{mr})
	b, pb := newProbedFollower(t, deltaRegistry{mr})
	if err := b.load(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"x", "y"} {
		if _, err := a.register(ctx, config.ResourceEntry{ID: id, URL: "https://example.com/" + id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.sync(ctx); err != nil { // nothing new: nothing applied
		t.Fatal(err)
	}
	if err := a.unregister(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if err := b.syncChanges(ctx); err != nil {
		t.Fatal(err)
	}
	if want := []string{"x", "y", "-x"}; !slices.Equal(pb.applied, want) {
		t.Errorf("applied %v, want %v", pb.applied, want)
	}
	if err := b.applyRead(ctx, 1, nil, []string{"y"}, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.registration("y"); !ok || len(pb.applied) != 3 {
		t.Errorf("a read older than the one applied removed y (applied %v)", pb.applied)
	}
}
