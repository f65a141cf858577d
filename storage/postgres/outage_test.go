package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/postgres/pgtest"
)

// TestStoreGoesAwayAndComesBack: while the database is down, every call
// that needs it fails at once with an error that wraps
// storage.ErrUnavailable (so the REST layer answers 503 or from its cache,
// never 500) and no other sentinel; when the database is back, the same
// Store works again without being reopened, its caches follow other
// nodes' changes again, and RegistryChanged tells that changes made
// meanwhile may have been missed.
func TestStoreGoesAwayAndComesBack(t *testing.T) {
	srv := pgtest.NewServer(t)
	a, b := openAt(t, srv.DSN(), "a"), openAt(t, srv.DSN(), "b")
	ctx := context.Background()
	mustSave(t, a, doc("r", 0, it("x", "X")))
	if _, err := a.Register(ctx, storage.Registration{ID: "reg", Definition: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	changed := a.RegistryChanged()

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		name string
		call func(context.Context) error
	}{
		{"Resources", func(ctx context.Context) error { _, err := b.Resources(ctx); return err }},
		{"Version", func(ctx context.Context) error { _, _, err := a.Version(ctx, "r", 1); return err }},
		{"Versions", func(ctx context.Context) error { _, err := a.Versions(ctx, "r", 0, 0); return err }},
		{"Items", func(ctx context.Context) error { _, err := a.Items(ctx, "r", storage.ItemQuery{}); return err }},
		{"Registrations", func(ctx context.Context) error { _, err := a.Registrations(ctx); return err }},
		{"Register", func(ctx context.Context) error {
			_, err := a.Register(ctx, storage.Registration{ID: "new", Definition: []byte(`{}`)})
			return err
		}},
		{"Unregister", func(ctx context.Context) error { _, err := a.Unregister(ctx, "reg"); return err }},
		{"Save", func(ctx context.Context) error { _, err := a.Save(ctx, doc("r", 1, it("y", "Y"))); return err }},
		{"PollState", func(ctx context.Context) error { _, err := a.PollState(ctx, "r"); return err }},
		{"Record", func(ctx context.Context) error { _, err := a.Record(ctx, "k", "key"); return err }},
	}
	for _, c := range calls {
		t.Run("down/"+c.name, func(t *testing.T) {
			cctx, cancel := context.WithTimeout(ctx, time.Minute) // a bound for a hang, not the expectation
			defer cancel()
			start := time.Now()
			err := c.call(cctx)
			took := time.Since(start)
			switch {
			case !errors.Is(err, storage.ErrUnavailable):
				t.Fatalf("with the database down: %v, want an error wrapping ErrUnavailable", err)
			case errors.Is(err, storage.ErrNotFound), errors.Is(err, storage.ErrInvalid), errors.Is(err, storage.ErrDiskFull):
				t.Errorf("with the database down: %v also matches another sentinel", err)
			case took > 10*time.Second:
				t.Errorf("took %v to fail, want it within 10 s", took)
			}
		})
	}

	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	// The listener's reconnection says changes may have been missed.
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("RegistryChanged not closed after the database came back")
	}
	if res, err := a.Register(ctx, storage.Registration{ID: "new", Definition: []byte(`{}`)}); err != nil || !res.Created {
		t.Fatalf("Register after the restart = %+v, %v", res, err)
	}
	mustSave(t, a, doc("r", 2, it("z", "Z")))
	// b's info cache follows a's writes again (through notifications, or
	// by reading the database while its listener reconnects).
	waitFor(t, "b to see a's save after the restart", func() bool {
		info, err := b.Resource(ctx, "r")
		return err == nil && info.Versions == 2
	})
	snap, err := b.Registrations(ctx)
	if err != nil || len(snap.Registrations) != 2 {
		t.Fatalf("Registrations after the restart = %+v, %v; want reg and new", snap, err)
	}
	if err := a.Check(ctx); err != nil {
		t.Fatal(err)
	}
}
