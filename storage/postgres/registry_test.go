package postgres_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/postgres"
	"github.com/dynamo-rss/dynamo/storage/postgres/pgtest"
)

func TestRegistryAndTombstones(t *testing.T) {
	ns := nodes(t, 2)
	a, b := ns[0], ns[1]
	ctx := context.Background()
	reg := storage.Registration{ID: "r", Definition: []byte(`{"id":"r","url":"https://example.org/"}`), Registered: t0, Updated: t0}
	if res, err := a.Register(ctx, reg); err != nil || !res.Created {
		t.Fatalf("Register = %+v, %v; want created", res, err)
	}
	later := reg
	later.Definition = []byte(`{"id":"r", "url":"https://example.org/2"}`)
	later.Registered, later.Updated = t0.Add(time.Hour), t0.Add(time.Hour+time.Nanosecond)
	if res, err := b.Register(ctx, later); err != nil || res.Created {
		t.Fatalf("Register again = %+v, %v; want replaced", res, err)
	}
	if _, err := a.Register(ctx, storage.Registration{ID: "0first", Definition: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	snap, err := b.Registrations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	regs := snap.Registrations
	if len(regs) != 2 || regs[0].ID != "0first" || regs[1].ID != "r" {
		t.Fatalf("Registrations = %+v, want 0first then r", regs)
	}
	if r := regs[1]; string(r.Definition) != string(later.Definition) || !r.Registered.Equal(t0) || !r.Updated.Equal(later.Updated) {
		t.Fatalf("replaced registration = %+v: want the new definition byte for byte, registered %v, updated %v", r, t0, later.Updated)
	}

	mustSave(t, a, doc("r", 0, it("x", "X")))
	mustSave(t, a, doc("r", 1, it("x", "Y")))
	if err := a.SavePollState(ctx, "r", []byte("st")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Unregister(ctx, "r"); err != nil {
		t.Fatalf("Unregister: %v", err)
	}
	gone := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, storage.ErrGone) || !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s after Unregister = %v, want ErrGone (matching ErrNotFound)", what, err)
		}
	}
	_, err = a.Resource(ctx, "r")
	gone("Resource", err)
	_, _, err = a.Version(ctx, "r", 1)
	gone("Version", err)
	_, err = a.Versions(ctx, "r", 0, 0)
	gone("Versions", err)
	_, err = a.Items(ctx, "r", storage.ItemQuery{})
	gone("Items", err)
	_, err = a.PollState(ctx, "r")
	gone("PollState", err)
	_, err = a.Save(ctx, doc("r", 2, it("x", "Z")))
	gone("Save", err)
	gone("SavePollState", a.SavePollState(ctx, "r", []byte("late")))
	_, err = a.Prune(ctx, "r", storage.Retention{MaxVersions: 1}, t0)
	gone("Prune", err)
	_, err = a.Acquire(ctx, req("r", "h", t0))
	gone("Acquire", err)
	_, err = a.Unregister(ctx, "r")
	gone("Unregister twice", err)
	if _, err := a.Unregister(ctx, "never"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Unregister(unknown) = %v, want ErrNotFound", err)
	}
	if rs, err := a.Resources(ctx); err != nil || len(rs) != 0 {
		t.Fatalf("Resources after Unregister = %+v, %v; want none", rs, err)
	}
	mustCheck(t, a)

	// Registered again: a fresh history whose seqs go on after the old ones.
	if res, err := a.Register(ctx, reg); err != nil || !res.Created {
		t.Fatalf("Register after Unregister = %+v, %v; want created", res, err)
	}
	if _, err := a.PollState(ctx, "r"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("PollState of the new registration = %v, want ErrNotFound", err)
	}
	res := mustSave(t, b, doc("r", 3, it("x", "X")))
	if !res.Changed || res.Seq != 3 || res.Versions != 1 {
		t.Fatalf("first save after re-registration = %+v, want seq 3, 1 version", res)
	}
	items, err := a.Items(ctx, "r", storage.ItemQuery{})
	if err != nil || len(items) != 1 || !items[0].FirstSeen.Equal(t0.Add(3*time.Minute)) {
		t.Fatalf("Items = %+v, %v; want only the new history", items, err)
	}
	mustCheck(t, a)
}

// closedWithin reports whether c is closed within 10 s.
func closedWithin(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

// RegistryChanged's channel is closed by another node's Register and
// Unregister, as soon as their notification arrives, not by this node's
// own (which its engine applied already), and by a reconnection of the
// listener (changes may have been missed while it was not listening).
func TestRegistryChangedByOtherNodes(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := openAt(t, dsn, "a"), openAt(t, dsn, "b")
	ctx := context.Background()
	waitFor(t, "A and B listening", func() bool { return postgres.Listening(a) && postgres.Listening(b) })
	reg := storage.Registration{ID: "r", Definition: []byte(`{"id":"r","url":"https://example.org/"}`), Registered: t0, Updated: t0}

	changedOnA, changedOnB := a.RegistryChanged(), b.RegistryChanged()
	if _, err := a.Register(ctx, reg); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(changedOnB) {
		t.Fatal("B not told of A's Register")
	}
	// A's own notification arrives before that of B's later save (in
	// commit order, on one connection): once the save's has dropped A's
	// cached info, A's own Register has been seen, and ignored.
	mustSave(t, a, doc("s", 1, it("x", "one")))
	cachedOn(t, a, "s")
	mustSave(t, b, doc("s", 2, it("y", "two")))
	waitFor(t, "A seeing B's save", func() bool { return !postgres.Cached(a, "s") })
	select {
	case <-changedOnA:
		t.Fatal("A told of its own Register")
	default:
	}

	changedOnB = b.RegistryChanged()
	if _, err := a.Unregister(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(changedOnB) {
		t.Fatal("B not told of A's Unregister")
	}
	if _, err := b.Register(ctx, reg); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(changedOnA) {
		t.Fatal("A not told of B's Register")
	}

	// B's listener killed: B is told once it listens again.
	changedOnB = b.RegistryChanged()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var killed bool
	pid := postgres.ListenerPID(b)
	if err := conn.QueryRow(ctx, `select pg_terminate_backend($1)`, int32(pid)).Scan(&killed); err != nil || !killed {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, killed, err)
	}
	if !closedWithin(changedOnB) {
		t.Fatal("B not told after its listener reconnected")
	}
	if p := postgres.ListenerPID(b); p == pid || p == 0 {
		t.Fatalf("B's listener pid %d after the kill of %d", p, pid)
	}
}

// TestRegistrationsSince: a read of what changed after a revision holds
// the registrations made or replaced since and the ids unregistered since
// (not those registered again), at the revision the read saw.
func TestRegistrationsSince(t *testing.T) {
	a := openTest(t)
	ctx := context.Background()
	reg := func(id, url string) storage.Revision {
		t.Helper()
		res, err := a.Register(ctx, storage.Registration{ID: id, Definition: []byte(url)})
		if err != nil {
			t.Fatal(err)
		}
		return res.Revision
	}
	since := func(rev storage.Revision) (changed []string, deleted []string, at storage.Revision) {
		t.Helper()
		d, err := a.RegistrationsSince(ctx, rev)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range d.Changed {
			changed = append(changed, r.ID+"="+string(r.Definition))
		}
		return changed, d.Deleted, d.Revision
	}
	r1 := reg("a", "1")
	reg("b", "1")
	r3 := reg("a", "2")
	del, err := a.Unregister(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if c, d, at := since(0); !slices.Equal(c, []string{"a=2"}) || !slices.Equal(d, []string{"b"}) || at != del {
		t.Errorf("since 0: changed %v, deleted %v, at %d; want [a=2] [b] %d", c, d, at, del)
	}
	if c, d, _ := since(r3); len(c) != 0 || !slices.Equal(d, []string{"b"}) {
		t.Errorf("since %d: changed %v, deleted %v; want [] [b]", r3, c, d)
	}
	if c, d, at := since(del); len(c) != 0 || len(d) != 0 || at != del {
		t.Errorf("since the last change: changed %v, deleted %v, at %d; want nothing at %d", c, d, at, del)
	}
	r5 := reg("b", "3") // registered again: no longer a deletion
	if c, d, at := since(r1); !slices.Equal(c, []string{"a=2", "b=3"}) || len(d) != 0 || at != r5 {
		t.Errorf("since %d: changed %v, deleted %v, at %d; want [a=2 b=3] [] %d", r1, c, d, at, r5)
	}
}
