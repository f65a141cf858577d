package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/storage"
)

func TestRegistryAndTombstones(t *testing.T) {
	ns := nodes(t, 2)
	a, b := ns[0], ns[1]
	ctx := context.Background()
	reg := storage.Registration{ID: "r", Definition: []byte(`{"id":"r","url":"https://example.org/"}`), Registered: t0, Updated: t0}
	if created, err := a.Register(ctx, reg); err != nil || !created {
		t.Fatalf("Register = %v, %v; want created", created, err)
	}
	later := reg
	later.Definition = []byte(`{"id":"r", "url":"https://example.org/2"}`)
	later.Registered, later.Updated = t0.Add(time.Hour), t0.Add(time.Hour+time.Nanosecond)
	if created, err := b.Register(ctx, later); err != nil || created {
		t.Fatalf("Register again = %v, %v; want replaced", created, err)
	}
	if _, err := a.Register(ctx, storage.Registration{ID: "0first", Definition: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	regs, err := b.Registrations(ctx)
	if err != nil {
		t.Fatal(err)
	}
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
	if err := b.Unregister(ctx, "r"); err != nil {
		t.Fatalf("Unregister: %v", err)
	}
	gone := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, storage.ErrNotFound) || err.Error() == "" {
			t.Errorf("%s after Unregister = %v, want gone (matching ErrNotFound)", what, err)
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
	gone("Unregister twice", a.Unregister(ctx, "r"))
	if err := a.Unregister(ctx, "never"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Unregister(unknown) = %v, want ErrNotFound", err)
	}
	if rs, err := a.Resources(ctx); err != nil || len(rs) != 0 {
		t.Fatalf("Resources after Unregister = %+v, %v; want none", rs, err)
	}
	mustCheck(t, a)

	// Registered again: a fresh history whose seqs go on after the old ones.
	if created, err := a.Register(ctx, reg); err != nil || !created {
		t.Fatalf("Register after Unregister = %v, %v; want created", created, err)
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
