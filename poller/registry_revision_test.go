package poller

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/dynamo-rss/dynamo/config"
)

// pausingRegistry is a memRegistry whose next read, once armed, takes its
// snapshot and then waits to be released before returning it, so that a
// change this node makes meanwhile commits between the read's snapshot and
// its apply: the race of a periodic re-read (or one woken by another
// node's change) with a PUT or DELETE answered by this node, made
// deterministic.
type pausingRegistry struct {
	*memRegistry
	armed   atomic.Bool
	snapped chan struct{}
	release chan struct{}
}

func newPausingRegistry() *pausingRegistry {
	return &pausingRegistry{memRegistry: newMemRegistry(), snapped: make(chan struct{}), release: make(chan struct{})}
}

func (p *pausingRegistry) Registrations(ctx context.Context) (RegistrySnapshot, error) {
	s, err := p.memRegistry.Registrations(ctx)
	if p.armed.CompareAndSwap(true, false) {
		p.snapped <- struct{}{}
		<-p.release
	}
	return s, err
}

// staleSync starts a re-read of the registry by e and returns once it has
// taken its snapshot; the function it returns lets the re-read apply that
// snapshot and waits for it.
func (p *pausingRegistry) staleSync(t *testing.T, e *Engine) (apply func()) {
	t.Helper()
	p.armed.Store(true)
	done := make(chan error, 1)
	go func() { done <- e.SyncRegistry(context.WithoutCancel(t.Context())) }()
	<-p.snapped
	return func() {
		t.Helper()
		p.release <- struct{}{}
		if err := <-done; err != nil {
			t.Fatalf("SyncRegistry: %v", err)
		}
	}
}

// TestRegistryReadDoesNotUndoOwnChanges: a re-read of the registry whose
// snapshot was taken before this node's PUT or DELETE committed leaves
// that change alone (read your writes), and a registration is fetched
// once, not again when a later read brings it "back".
func TestRegistryReadDoesNotUndoOwnChanges(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	cfg := testConfig(t, baseYAML(""))
	entry := func(t *testing.T, path string) config.ResourceEntry {
		t.Helper()
		e, err := config.ParseResource([]byte(`{"url": "`+o.url(path)+`", "policy": {"kind": "flat", "interval": "15m"}}`), "x", cfg.Poller)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	newEngine := func(t *testing.T) (*Engine, *pausingRegistry) {
		reg := newPausingRegistry()
		e := newTestEngineOpts(t, cfg, newMemStore(), Options{Clock: clk, Registry: reg})
		return e, reg
	}

	t.Run("register", func(t *testing.T) {
		e, reg := newEngine(t)
		apply := reg.staleSync(t, e) // its snapshot: no x
		if _, err := e.Register(t.Context(), entry(t, "/reg")); err != nil {
			t.Fatal(err)
		}
		if n := e.runDue(t.Context()); n != 1 {
			t.Fatalf("%d polls due after the registration, want 1 (at once)", n)
		}
		apply()
		if _, ok := e.Definition("x"); !ok {
			t.Fatal("a read taken before the PUT deleted the resource this node had just registered")
		}
		ownChanges := func() int {
			e.reg.mu.Lock()
			defer e.reg.mu.Unlock()
			return len(e.reg.writes)
		}
		if n := ownChanges(); n != 1 {
			t.Errorf("%d own changes kept apart after a read older than the PUT, want 1 (a later stale read must leave it alone too)", n)
		}
		if _, ok := e.Status("x"); !ok {
			t.Fatal("the registered resource is no longer polled")
		}
		// A fresh read, which holds the registration, changes nothing: the
		// resource is not scheduled for a first poll again.
		if err := e.SyncRegistry(t.Context()); err != nil {
			t.Fatal(err)
		}
		if n := e.runDue(t.Context()); n != 0 || o.hit("/reg") != 1 {
			t.Fatalf("after the re-reads: %d more polls, origin fetched %d times; want one fetch in all", n, o.hit("/reg"))
		}
		// The fresh read holds the PUT: the node no longer keeps it apart.
		if n := ownChanges(); n != 0 {
			t.Errorf("%d own changes still kept apart after a read that holds them, want 0", n)
		}
	})

	t.Run("unregister", func(t *testing.T) {
		e, reg := newEngine(t)
		if _, err := e.Register(t.Context(), entry(t, "/unreg")); err != nil {
			t.Fatal(err)
		}
		apply := reg.staleSync(t, e) // its snapshot: x registered
		if err := e.Unregister(t.Context(), "x"); err != nil {
			t.Fatal(err)
		}
		apply()
		if d, ok := e.Definition("x"); ok {
			t.Fatalf("a read taken before the DELETE brought the resource back: %+v", d)
		}
		if _, ok := e.Status("x"); ok {
			t.Fatal("the deleted resource is polled again")
		}
	})

	t.Run("redefine", func(t *testing.T) {
		e, reg := newEngine(t)
		if _, err := e.Register(t.Context(), entry(t, "/old")); err != nil {
			t.Fatal(err)
		}
		apply := reg.staleSync(t, e) // its snapshot: x at /old
		if _, err := e.Register(t.Context(), entry(t, "/new")); err != nil {
			t.Fatal(err)
		}
		apply()
		if st, _ := e.Status("x"); st.URL != o.url("/new") {
			t.Fatalf("after a read taken before the PUT, x polls %q, want the new definition's %q", st.URL, o.url("/new"))
		}
	})

	// Another node's change committed after this node's is newer: the
	// next read applies it, so concurrent PUTs of one id end with the last
	// one everywhere.
	t.Run("later change elsewhere", func(t *testing.T) {
		e, reg := newEngine(t)
		if _, err := e.Register(t.Context(), entry(t, "/here")); err != nil {
			t.Fatal(err)
		}
		b := newTestEngineOpts(t, cfg, newMemStore(), Options{Clock: clk, Registry: reg.memRegistry})
		if _, err := b.Register(t.Context(), entry(t, "/there")); err != nil {
			t.Fatal(err)
		}
		if err := e.SyncRegistry(t.Context()); err != nil {
			t.Fatal(err)
		}
		if st, _ := e.Status("x"); st.URL != o.url("/there") {
			t.Fatalf("x polls %q after another node's later PUT, want %q", st.URL, o.url("/there"))
		}
		if err := b.Unregister(t.Context(), "x"); err != nil {
			t.Fatal(err)
		}
		if err := e.SyncRegistry(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, ok := e.Definition("x"); ok {
			t.Fatal("x still defined after another node's later DELETE")
		}
	})

	// Two reads that cross: the older one, applied last, changes nothing.
	t.Run("older read applied last", func(t *testing.T) {
		e, reg := newEngine(t)
		apply := reg.staleSync(t, e) // its snapshot: no x
		b := newTestEngineOpts(t, cfg, newMemStore(), Options{Clock: clk, Registry: reg.memRegistry})
		if _, err := b.Register(t.Context(), entry(t, "/b")); err != nil {
			t.Fatal(err)
		}
		if err := e.SyncRegistry(t.Context()); err != nil { // a newer read: x
			t.Fatal(err)
		}
		apply()
		if _, ok := e.Definition("x"); !ok {
			t.Fatal("an older read applied after a newer one deleted x")
		}
	})
}

// TestRegistryChangesRead: on another node's change, a registry that can
// tell what changed since a revision is read for that only, and the node
// applies registrations, redefinitions and deletions from it as from a
// full read, its own newer changes left alone.
func TestRegistryChangesRead(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	cfg := testConfig(t, baseYAML(""))
	shared := deltaRegistry{newMemRegistry()}
	engine := func() *Engine {
		e := newTestEngineOpts(t, cfg, newMemStore(), Options{Clock: clk, Registry: shared})
		return e
	}
	a, b := engine(), engine()
	entry := func(id, path string) config.ResourceEntry {
		e, err := config.ParseResource([]byte(`{"url": "`+o.url(path)+`", "policy": {"kind": "flat", "interval": "15m"}}`), id, cfg.Poller)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	url := func(e *Engine, id string) string {
		st, _ := e.Status(id)
		return st.URL
	}
	for _, id := range []string{"x", "y", "z"} {
		if _, err := a.Register(t.Context(), entry(id, "/"+id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.reg.syncChanges(t.Context()); err != nil {
		t.Fatal(err)
	}
	if url(b, "x") != o.url("/x") || url(b, "z") != o.url("/z") {
		t.Fatalf("b after the changes: x %q, z %q", url(b, "x"), url(b, "z"))
	}
	if _, err := a.Register(t.Context(), entry("x", "/x2")); err != nil {
		t.Fatal(err)
	}
	if err := a.Unregister(t.Context(), "y"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Register(t.Context(), entry("z", "/z-b")); err != nil { // b's own, after a's
		t.Fatal(err)
	}
	if err := b.reg.syncChanges(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Status("y"); ok || url(b, "x") != o.url("/x2") || url(b, "z") != o.url("/z-b") {
		t.Errorf("b after a's redefinition of x and deletion of y: x %q, y kept %v, z %q", url(b, "x"), ok, url(b, "z"))
	}
	if err := a.reg.syncChanges(t.Context()); err != nil {
		t.Fatal(err)
	}
	if url(a, "z") != o.url("/z-b") {
		t.Errorf("a after b's redefinition of z: %q", url(a, "z"))
	}
	// A full read agrees with what the changes made.
	for _, e := range []*Engine{a, b} {
		before := e.Definitions()
		if err := e.SyncRegistry(t.Context()); err != nil {
			t.Fatal(err)
		}
		if after := e.Definitions(); len(after) != len(before) || len(after) != 2 {
			t.Errorf("a full read changed %d definitions into %d, want 2 both", len(before), len(after))
		}
	}
}

// unsupportedChanges is a wrapper that has RegistrationsSince but whose
// registry cannot tell: the engine reads it whole instead.
type unsupportedChanges struct{ *memRegistry }

func (unsupportedChanges) RegistrationsSince(context.Context, Revision) (RegistryDelta, error) {
	return RegistryDelta{}, errors.ErrUnsupported
}

func TestRegistryChangesUnsupported(t *testing.T) {
	o := newOrigin(t)
	clk := newFakeClock(t0)
	cfg := testConfig(t, baseYAML(""))
	reg := newMemRegistry()
	a := newTestEngineOpts(t, cfg, newMemStore(), Options{Clock: clk, Registry: reg})
	b := newTestEngineOpts(t, cfg, newMemStore(), Options{Clock: clk, Registry: unsupportedChanges{reg}})
	entry, err := config.ParseResource([]byte(`{"url": "`+o.url("/x")+`"}`), "x", cfg.Poller)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Register(t.Context(), entry); err != nil {
		t.Fatal(err)
	}
	if err := b.reg.syncChanges(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Status("x"); !ok {
		t.Fatal("b did not read the registry whole when it could not tell what changed")
	}
	if err := a.Unregister(t.Context(), "x"); err != nil {
		t.Fatal(err)
	}
	if err := b.reg.syncChanges(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Status("x"); ok {
		t.Fatal("b still polls x deleted through a")
	}
}
