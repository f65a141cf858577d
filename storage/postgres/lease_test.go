package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/postgres"
	"github.com/dynamo-rss/dynamo/storage/postgres/pgtest"
)

// nodes opens n stores ("nodes") on one fresh database.
func nodes(t *testing.T, n int) []*postgres.Store {
	t.Helper()
	dsn := pgtest.DSN(t)
	out := make([]*postgres.Store, n)
	for i := range out {
		out[i] = openAt(t, dsn, fmt.Sprintf("node%d", i))
	}
	return out
}

func req(id, host string, now time.Time) storage.LeaseRequest {
	return storage.LeaseRequest{ID: id, Host: host, Now: now, Lease: 10 * time.Second}
}

func mustAcquire(t *testing.T, s *postgres.Store, r storage.LeaseRequest) storage.Lease {
	t.Helper()
	l, err := s.Acquire(context.Background(), r)
	if err != nil {
		t.Fatalf("Acquire(%s) on %s: %v", r.ID, s.NodeID(), err)
	}
	return l
}

// commitAt returns a CommitFunc that stores state and makes the resource due at next.
func commitAt(state string, next time.Time) storage.CommitFunc {
	return func(storage.SaveResult) ([]byte, time.Time, error) { return []byte(state), next, nil }
}

// Several nodes race for the same resources at the same instant, round
// after round: each resource is granted to exactly one node per round,
// never to two, and every poll's version is stored exactly once.
func TestLeasesRacingNodesNeverShareAResource(t *testing.T) {
	ns := nodes(t, 4)
	const resources, rounds = 8, 6
	ctx := context.Background()
	for round := range rounds {
		now := t0.Add(time.Duration(round) * time.Minute)
		var (
			mu      sync.Mutex
			holders = map[string][]string{}
			wg      sync.WaitGroup
			errs    = make(chan error, 64)
		)
		for _, s := range ns {
			for g := range 2 { // two goroutines per node, as a node's workers would
				wg.Go(func() {
					for r := range resources {
						id := fmt.Sprintf("r%d", (r+g)%resources)
						l, err := s.Acquire(ctx, req(id, "host-"+id, now))
						if err != nil {
							errs <- err
							return
						}
						if !l.Granted {
							continue
						}
						mu.Lock()
						holders[id] = append(holders[id], s.NodeID())
						mu.Unlock()
					}
				})
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for r := range resources {
			id := fmt.Sprintf("r%d", r)
			if len(holders[id]) > 1 {
				// The same node may be granted twice (its own lease); two nodes never.
				for _, h := range holders[id][1:] {
					if h != holders[id][0] {
						t.Fatalf("round %d: %s granted to %v at once", round, id, holders[id])
					}
				}
			}
		}
		// The holders poll and commit; the resource is due again next round.
		for id, hs := range holders {
			s := storeNamed(ns, hs[0])
			d := doc(id, round, it(fmt.Sprint("item", round), "round"))
			if _, err := s.Complete(ctx, id, d, commitAt("polled", now.Add(time.Minute))); err != nil {
				t.Fatalf("Complete(%s) by %s: %v", id, hs[0], err)
			}
		}
		if round > 0 && len(holders) != resources {
			t.Fatalf("round %d: %d of %d due resources granted", round, len(holders), resources)
		}
	}
	for r := range resources {
		info, err := ns[0].Resource(ctx, fmt.Sprintf("r%d", r))
		if err != nil {
			t.Fatal(err)
		}
		if info.Versions != rounds {
			t.Fatalf("r%d: %d versions after %d polls", r, info.Versions, rounds)
		}
	}
	mustCheck(t, ns[0])
}

func storeNamed(ns []*postgres.Store, name string) *postgres.Store {
	for _, s := range ns {
		if s.NodeID() == name {
			return s
		}
	}
	return nil
}

// A node's lease blocks the others until it ends; past its end another
// node takes the resource over, and the first node's late Complete fails
// with ErrLeaseLost, storing nothing.
func TestLeasesExpireAndAreTakenOver(t *testing.T) {
	ns := nodes(t, 2)
	a, b := ns[0], ns[1]
	ctx := context.Background()
	if l := mustAcquire(t, a, req("r", "h", t0)); !l.Granted || l.State != nil {
		t.Fatalf("first Acquire = %+v, want granted without state", l)
	}
	l := mustAcquire(t, b, req("r", "h", t0.Add(5*time.Second)))
	if l.Granted || !l.Retry.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("Acquire during a's lease = %+v, want refused until %v", l, t0.Add(10*time.Second))
	}
	force := req("r", "h", t0.Add(5*time.Second))
	force.Force = true
	if l := mustAcquire(t, b, force); l.Granted {
		t.Fatal("a forced Acquire was granted while another node holds the lease")
	}
	if l := mustAcquire(t, b, req("r", "h", t0.Add(10*time.Second))); !l.Granted {
		t.Fatalf("Acquire at the lease's end = %+v, want granted", l)
	}
	_, err := a.Complete(ctx, "r", doc("r", 0, it("x", "late")), func(storage.SaveResult) ([]byte, time.Time, error) {
		t.Error("commit called under a lost lease")
		return nil, time.Time{}, nil
	})
	if !errors.Is(err, storage.ErrLeaseLost) {
		t.Fatalf("Complete after takeover = %v, want ErrLeaseLost", err)
	}
	if _, err := a.Resource(ctx, "r"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Resource after a lost Complete = %v, want ErrNotFound (nothing stored)", err)
	}
	if _, err := a.PollState(ctx, "r"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("PollState after a lost Complete = %v, want ErrNotFound", err)
	}
	sr, err := b.Complete(ctx, "r", doc("r", 1, it("x", "new")), commitAt("b's state", t0.Add(time.Hour)))
	if err != nil || !sr.Changed || sr.Seq != 1 {
		t.Fatalf("b's Complete = %+v, %v; want a first version", sr, err)
	}
	// Released: a is refused only because the resource is not due, and sees b's state.
	l = mustAcquire(t, a, req("r", "h", t0.Add(time.Minute)))
	if l.Granted || !l.Retry.Equal(t0.Add(time.Hour)) || string(l.State) != "b's state" {
		t.Fatalf("Acquire before due = %+v, want refused until %v with b's state", l, t0.Add(time.Hour))
	}
	if _, err := b.Complete(ctx, "r", nil, commitAt("again", t0)); !errors.Is(err, storage.ErrLeaseLost) {
		t.Fatalf("Complete without a lease = %v, want ErrLeaseLost", err)
	}
}

// A lease that expired but that nobody took is still its node's.
func TestExpiredLeaseNobodyTookStillCompletes(t *testing.T) {
	a := nodes(t, 1)[0]
	if l := mustAcquire(t, a, req("r", "h", t0)); !l.Granted {
		t.Fatal("not granted")
	}
	if _, err := a.Complete(context.Background(), "r", nil, commitAt("s", t0.Add(time.Hour))); err != nil {
		t.Fatalf("Complete after the lease's end, not taken over: %v", err)
	}
}

// Politeness holds across nodes: two resources of one host, two nodes; the
// second node waits for the host's next slot.
func TestLeasesKeepHostPolitenessAcrossNodes(t *testing.T) {
	ns := nodes(t, 2)
	r1, r2 := req("r1", "example.org", t0), req("r2", "example.org", t0)
	r1.HostInterval, r2.HostInterval = time.Minute, time.Minute
	if l := mustAcquire(t, ns[0], r1); !l.Granted {
		t.Fatal("r1 not granted")
	}
	l := mustAcquire(t, ns[1], r2)
	if l.Granted || !l.Retry.Equal(t0.Add(time.Minute)) {
		t.Fatalf("r2 on the same host at once = %+v, want refused until %v", l, t0.Add(time.Minute))
	}
	other := req("r3", "example.com", t0)
	other.HostInterval = time.Minute
	if l := mustAcquire(t, ns[1], other); !l.Granted {
		t.Fatal("another host's resource refused")
	}
	r2.Now = t0.Add(time.Minute - time.Nanosecond)
	if l := mustAcquire(t, ns[1], r2); l.Granted {
		t.Fatal("granted a nanosecond before the host's slot")
	}
	r2.Now = t0.Add(time.Minute)
	if l := mustAcquire(t, ns[1], r2); !l.Granted {
		t.Fatalf("refused at the host's slot: %+v", l)
	}
}

// Due times and Force: a resource is refused until its due time unless
// forced; the state comes with every answer.
func TestLeasesFollowDueTimes(t *testing.T) {
	s := nodes(t, 1)[0]
	ctx := context.Background()
	mustAcquire(t, s, req("r", "h", t0))
	if _, err := s.Complete(ctx, "r", nil, commitAt("st", t0.Add(10*time.Minute))); err != nil {
		t.Fatal(err)
	}
	l := mustAcquire(t, s, req("r", "h", t0.Add(time.Minute)))
	if l.Granted || !l.Retry.Equal(t0.Add(10*time.Minute)) || string(l.State) != "st" {
		t.Fatalf("before due = %+v", l)
	}
	f := req("r", "h", t0.Add(time.Minute))
	f.Force = true
	if l := mustAcquire(t, s, f); !l.Granted || string(l.State) != "st" {
		t.Fatalf("forced = %+v, want granted with the state", l)
	}
	// A failing commit rolls back everything: no version, the lease kept.
	boom := errors.New("boom")
	_, err := s.Complete(ctx, "r", doc("r", 1, it("a", "A")), func(sr storage.SaveResult) ([]byte, time.Time, error) {
		if !sr.Changed || sr.Seq != 1 {
			t.Errorf("commit got %+v, want a first version", sr)
		}
		return nil, time.Time{}, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Complete with a failing commit = %v", err)
	}
	if _, err := s.Resource(ctx, "r"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a version survived a failed commit: %v", err)
	}
	sr, err := s.Complete(ctx, "r", doc("r", 1, it("a", "A")), commitAt("st2", time.Time{}))
	if err != nil || sr.Seq != 1 {
		t.Fatalf("Complete after the failed one = %+v, %v", sr, err)
	}
	if st, err := s.PollState(ctx, "r"); err != nil || string(st) != "st2" {
		t.Fatalf("PollState = %q, %v", st, err)
	}
	// A zero next due time means due at once.
	if l := mustAcquire(t, s, req("r", "h", t0.Add(time.Minute))); !l.Granted {
		t.Fatalf("due at once = %+v", l)
	}
	if _, err := s.Complete(ctx, "other", doc("r", 2), commitAt("", t0)); err == nil {
		t.Fatal("Complete of another resource's document accepted")
	}
}

// Complete runs Save's semantics: an unchanged document is not stored.
func TestCompleteSavesAsSaveDoes(t *testing.T) {
	s := nodes(t, 1)[0]
	ctx := context.Background()
	var got []storage.SaveResult
	rec := func(sr storage.SaveResult) ([]byte, time.Time, error) {
		got = append(got, sr)
		return []byte("s"), time.Time{}, nil
	}
	for i, d := range []*schema.Document{doc("r", 0, it("a", "A")), doc("r", 1, it("a", "A")), doc("r", 2, it("a", "B"))} {
		mustAcquire(t, s, req("r", "h", t0.Add(time.Duration(i)*time.Hour)))
		if _, err := s.Complete(ctx, "r", d, rec); err != nil {
			t.Fatal(err)
		}
	}
	want := []storage.SaveResult{{Changed: true, Seq: 1, Versions: 1}, {Changed: false, Seq: 1, Versions: 1}, {Changed: true, Seq: 2, Versions: 2}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("save results %v, want %v", got, want)
	}
	mustCheck(t, s)
}

// A refusal writes nothing (no row lock either: the row's xmax stays), and
// a resource whose row another transaction holds is refused at once with
// Retry at the end of the lease being granted there.
func TestLeaseRefusalsAreReadOnly(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := openAt(t, dsn, "a"), openAt(t, dsn, "b")
	ctx := context.Background()
	if l := mustAcquire(t, a, req("r", "h", t0)); !l.Granted {
		t.Fatal("not granted")
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	xmax := func() string {
		t.Helper()
		var x string
		if err := conn.QueryRow(ctx, `select xmax::text from dynamo_resources where id = 'r'`).Scan(&x); err != nil {
			t.Fatal(err)
		}
		return x
	}
	if l := mustAcquire(t, b, req("r", "h", t0.Add(time.Second))); l.Granted || !l.Retry.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("Acquire during a's lease = %+v", l)
	}
	if _, err := a.Complete(ctx, "r", nil, commitAt("s", t0.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	before := xmax()
	if l := mustAcquire(t, b, req("r", "h", t0.Add(time.Minute))); l.Granted || !l.Retry.Equal(t0.Add(time.Hour)) {
		t.Fatalf("Acquire before due = %+v", l)
	}
	if after := xmax(); after != before {
		t.Fatalf("a refusal locked the row: xmax %s → %s", before, after)
	}

	// Another transaction holds the row: refused at once, Retry = now + lease.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `select 1 from dynamo_resources where id = 'r' for update`); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(2 * time.Hour)
	if l := mustAcquire(t, b, req("r", "h", now)); l.Granted || !l.Retry.Equal(now.Add(10*time.Second)) || string(l.State) != "s" {
		t.Fatalf("Acquire of a row held elsewhere = %+v, want refused until %v with the state", l, now.Add(10*time.Second))
	}
}

// Reschedule rewrites the stored states and the due time every node's
// leases follow, of resources whose lease does not run: a leased one's
// poll decides. Nothing is written for a resource never polled, unknown or
// gone, nor for one fn declines.
func TestRescheduleMovesTheDueTimeUnlessLeased(t *testing.T) {
	ns := nodes(t, 2)
	a, b := ns[0], ns[1]
	ctx := context.Background()
	polled := func(id string, state string, due time.Time) {
		t.Helper()
		if l := mustAcquire(t, a, req(id, "h", t0)); !l.Granted {
			t.Fatalf("%s not granted", id)
		}
		if _, err := a.Complete(ctx, id, nil, commitAt(state, due)); err != nil {
			t.Fatal(err)
		}
	}
	polled("free", "polled", t0.Add(10*time.Minute))
	polled("declined", "polled", t0.Add(10*time.Minute))
	polled("leased", "polled", t0.Add(10*time.Minute))
	polled("gone", "polled", t0.Add(10*time.Minute))
	if _, err := a.Register(ctx, storage.Registration{ID: "gone", Definition: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Unregister(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(10 * time.Minute)
	if l := mustAcquire(t, b, req("leased", "h", now)); !l.Granted {
		t.Fatal("leased: not granted")
	}
	if l := mustAcquire(t, b, req("first", "h", now)); !l.Granted { // its first poll, in flight
		t.Fatal("first: not granted")
	}

	var called []string
	err := a.Reschedule(ctx, []string{"unknown", "free", "leased", "first", "gone", "declined"}, now.Add(time.Second), func(id string, old []byte) ([]byte, time.Time, bool) {
		called = append(called, id)
		return []byte("longer after " + string(old)), t0.Add(30 * time.Minute), id != "declined"
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(called, []string{"declined", "free"}) {
		t.Fatalf("fn called for %v, want declined and free (in id order)", called)
	}
	l := mustAcquire(t, b, req("free", "h", now.Add(time.Minute)))
	if l.Granted || !l.Retry.Equal(t0.Add(30*time.Minute)) || string(l.State) != "longer after polled" {
		t.Fatalf("Acquire of free at its old due time = %+v, want refused until the new one, with the new state", l)
	}
	if l := mustAcquire(t, b, req("declined", "h", now.Add(time.Minute))); !l.Granted || string(l.State) != "polled" {
		t.Fatalf("Acquire of declined at its due time = %+v, want granted, the state as it was", l)
	}
	if st, err := a.PollState(ctx, "leased"); err != nil || string(st) != "polled" {
		t.Fatalf("state of leased %q, %v: rewritten under a lease", st, err)
	}
	if _, err := a.PollState(ctx, "unknown"); !errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrGone) {
		t.Fatalf("state of unknown: %v, want none", err)
	}
	if _, err := a.PollState(ctx, "gone"); !errors.Is(err, storage.ErrGone) {
		t.Fatalf("state of gone: %v", err)
	}

	// At the lease's end, it is rescheduled; by this node too.
	called = nil
	err = b.Reschedule(ctx, []string{"leased"}, now.Add(10*time.Second), func(id string, old []byte) ([]byte, time.Time, bool) {
		called = append(called, id)
		return []byte("shorter"), now.Add(time.Minute), true
	})
	if err != nil || len(called) != 1 {
		t.Fatalf("Reschedule at the lease's end: fn called for %v, %v", called, err)
	}
	if l := mustAcquire(t, a, req("leased", "h", now.Add(time.Minute))); !l.Granted || string(l.State) != "shorter" {
		t.Fatalf("Acquire at the new, earlier due time = %+v, want granted with the new state", l)
	}

	// Many resources: every one, over several transactions.
	ids := make([]string, 1234)
	for i := range ids {
		ids[i] = fmt.Sprintf("m%04d", i)
		polled(ids[i], "polled", t0)
	}
	n := 0
	err = a.Reschedule(ctx, ids, now, func(id string, old []byte) ([]byte, time.Time, bool) {
		n++
		return []byte("moved"), now.Add(time.Duration(n) * time.Second), true
	})
	if err != nil || n != len(ids) {
		t.Fatalf("Reschedule of %d resources: fn called %d times, %v", len(ids), n, err)
	}
	for i, id := range ids {
		if l := mustAcquire(t, b, req(id, "h", now)); l.Granted || !l.Retry.Equal(now.Add(time.Duration(i+1)*time.Second)) || string(l.State) != "moved" {
			t.Fatalf("%s: %+v, want refused until its new due time", id, l)
		}
	}
	mustCheck(t, a)
}
