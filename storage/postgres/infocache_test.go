package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/postgres"
	"github.com/dynamo-rss/dynamo/storage/postgres/pgtest"
)

// waitFor polls cond until it holds, failing t after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func mustResource(t *testing.T, s *postgres.Store, id string) storage.ResourceInfo {
	t.Helper()
	info, err := s.Resource(context.Background(), id)
	if err != nil {
		t.Fatalf("Resource(%s) on %s: %v", id, s.NodeID(), err)
	}
	return info
}

// cachedOn reads id on s until the info is cached there (the listener is
// connected) and returns it.
func cachedOn(t *testing.T, s *postgres.Store, id string) storage.ResourceInfo {
	t.Helper()
	waitFor(t, s.NodeID()+" listening", func() bool { return postgres.Listening(s) })
	var info storage.ResourceInfo
	waitFor(t, id+" cached on "+s.NodeID(), func() bool {
		info = mustResource(t, s, id)
		return postgres.Cached(s, id)
	})
	return info
}

// A node's cached info follows what another node stores, within the
// notification's delivery: saves, prunes, unregistrations and
// re-registrations made on node A reach node B's Resource and Resources.
func TestInfoCacheFollowsOtherNodes(t *testing.T) {
	ns := nodes(t, 2)
	a, b := ns[0], ns[1]
	ctx := context.Background()
	mustSave(t, a, doc("r", 1, it("x", "one")))
	if got := cachedOn(t, b, "r"); got.LatestSeq != 1 {
		t.Fatalf("B: seq %d, want 1", got.LatestSeq)
	}
	list, err := b.Resources(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("B: Resources = %v, %v", list, err)
	}

	steps := []struct {
		name string
		do   func() error
		want func(storage.ResourceInfo, error) bool
	}{
		{"save", func() error { _, err := a.Save(ctx, doc("r", 2, it("y", "two"))); return err },
			func(i storage.ResourceInfo, err error) bool { return err == nil && i.LatestSeq == 2 && i.Versions == 2 }},
		{"save again", func() error { _, err := a.Save(ctx, doc("r", 3, it("z", "three"))); return err },
			func(i storage.ResourceInfo, err error) bool { return err == nil && i.LatestSeq == 3 && i.Versions == 3 }},
		{"prune", func() error {
			_, err := a.Prune(ctx, "r", storage.Retention{MaxVersions: 1}, t0.Add(time.Hour))
			return err
		}, func(i storage.ResourceInfo, err error) bool { return err == nil && i.LatestSeq == 3 && i.Versions == 1 }},
		{"unregister", func() error { _, err := a.Unregister(ctx, "r"); return err }, func(_ storage.ResourceInfo, err error) bool { return errors.Is(err, storage.ErrGone) }},
		{"register and save", func() error {
			if _, err := a.Register(ctx, storage.Registration{ID: "r", Definition: []byte("{}")}); err != nil {
				return err
			}
			_, err := a.Save(ctx, doc("r", 4, it("w", "four")))
			return err
		}, func(i storage.ResourceInfo, err error) bool { return err == nil && i.LatestSeq == 4 && i.Versions == 1 }},
	}
	for _, st := range steps {
		if st.name == "unregister" { // registering r changes no info
			if _, err := a.Register(ctx, storage.Registration{ID: "r", Definition: []byte("{}")}); err != nil {
				t.Fatal(err)
			}
		}
		if st.name != "register and save" { // r is gone before that one
			cachedOn(t, b, "r")
		}
		if _, err := b.Resources(ctx); err != nil {
			t.Fatal(err)
		}
		if err := st.do(); err != nil {
			t.Fatalf("%s on A: %v", st.name, err)
		}
		// A reads its own write at once.
		if info, err := a.Resource(ctx, "r"); !st.want(info, err) {
			t.Fatalf("%s: A reads %+v, %v", st.name, info, err)
		}
		waitFor(t, st.name+" seen by B", func() bool {
			info, err := b.Resource(ctx, "r")
			return st.want(info, err)
		})
		waitFor(t, st.name+" listed by B", func() bool {
			want, err1 := a.Resources(ctx)
			got, err2 := b.Resources(ctx)
			return err1 == nil && err2 == nil && len(want) == len(got) && (len(got) == 0 || got[0] == want[0])
		})
	}
}

// When B's listening connection is killed, B drops its cache: a save made
// on A while B may have missed its notification is never hidden behind
// B's old entry; B reconnects and caches (coherently) again.
func TestInfoCacheListenerKilled(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := openAt(t, dsn, "a"), openAt(t, dsn, "b")
	ctx := context.Background()
	mustSave(t, a, doc("r", 1, it("x", "one")))
	cachedOn(t, b, "r")
	pid := postgres.ListenerPID(b)

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var killed bool
	if err := conn.QueryRow(ctx, `select pg_terminate_backend($1)`, int32(pid)).Scan(&killed); err != nil || !killed {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, killed, err)
	}
	waitFor(t, "B noticing its lost listener", func() bool { return postgres.ListenerLosses(b) >= 1 })

	mustSave(t, a, doc("r", 2, it("y", "two")))
	if got := mustResource(t, b, "r"); got.LatestSeq != 2 {
		t.Fatalf("B serves seq %d after A stored seq 2 (listener lost)", got.LatestSeq)
	}

	// B listens again on a new connection and its cache follows A again.
	waitFor(t, "B listening again", func() bool {
		p := postgres.ListenerPID(b)
		return p != 0 && p != pid && postgres.Listening(b)
	})
	cachedOn(t, b, "r")
	mustSave(t, a, doc("r", 3, it("z", "three")))
	waitFor(t, "B seeing seq 3", func() bool { return mustResource(t, b, "r").LatestSeq == 3 })
}
