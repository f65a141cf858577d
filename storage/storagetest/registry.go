package storagetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/storage"
)

// reg makes a registration of id whose definition names url.
func reg(id, url string, at time.Time) storage.Registration {
	return storage.Registration{ID: id, Definition: []byte(`{"id":"` + id + `","url":"` + url + `"}`), Registered: at, Updated: at}
}

func mustRegister(t *testing.T, db storage.Store, r storage.Registration) bool {
	t.Helper()
	res, err := db.Register(context.Background(), r)
	if err != nil {
		t.Fatalf("Register(%s): %v", r.ID, err)
	}
	return res.Created
}

func mustUnregister(t *testing.T, db storage.Store, id string) {
	t.Helper()
	if _, err := db.Unregister(context.Background(), id); err != nil {
		t.Fatalf("Unregister(%s): %v", id, err)
	}
}

// registrations lists db's registrations, without the snapshot's revision.
func registrations(ctx context.Context, db storage.Store) ([]storage.Registration, error) {
	s, err := db.Registrations(ctx)
	return s.Registrations, err
}

func regIDs(regs []storage.Registration) []string {
	out := make([]string, len(regs))
	for i, r := range regs {
		out[i] = r.ID
	}
	return out
}

// testRegistry: registrations are listed by id, a replacement keeps the
// first Registered time, and a registration alone is no resource.
func testRegistry(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	if regs, err := registrations(ctx, db); err != nil || len(regs) != 0 {
		t.Fatalf("Registrations of an empty store = %v, %v", regs, err)
	}
	first := T0
	if !mustRegister(t, db, reg("zeta", "https://example.org/z", first)) {
		t.Error("Register(zeta) created = false, want true")
	}
	if !mustRegister(t, db, reg("alpha", "https://example.org/a", first.Add(time.Minute))) {
		t.Error("Register(alpha) created = false, want true")
	}
	later := first.Add(time.Hour)
	replaced := reg("zeta", "https://example.org/z2", later)
	if mustRegister(t, db, replaced) {
		t.Error("Register(zeta) again: created = true, want false")
	}
	regs, err := registrations(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if got := regIDs(regs); !slices.Equal(got, []string{"alpha", "zeta"}) {
		t.Fatalf("Registrations = %v, want [alpha zeta]", got)
	}
	z := regs[1]
	if string(z.Definition) != string(replaced.Definition) || !z.Registered.Equal(first) || !z.Updated.Equal(later) {
		t.Errorf("replaced registration = {%s registered %v updated %v}, want {%s registered %v updated %v}",
			z.Definition, z.Registered, z.Updated, replaced.Definition, first, later)
	}
	// A registration is no resource until a version is saved.
	if rs, err := db.Resources(ctx); err != nil || len(rs) != 0 {
		t.Errorf("Resources = %v, %v; want none", rs, err)
	}
	if _, err := db.Resource(ctx, "zeta"); !errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrGone) {
		t.Errorf("Resource(registered, never saved) = %v, want ErrNotFound and not ErrGone", err)
	}

	mustUnregister(t, db, "alpha")
	if regs, err := registrations(ctx, db); err != nil || !slices.Equal(regIDs(regs), []string{"zeta"}) {
		t.Errorf("Registrations after Unregister = %v, %v; want [zeta]", regIDs(regs), err)
	}
	if _, err := db.Unregister(ctx, "alpha"); !errors.Is(err, storage.ErrGone) || !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Unregister twice = %v, want ErrGone (and ErrNotFound)", err)
	}
	if _, err := db.Unregister(ctx, "never"); !errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrGone) {
		t.Errorf("Unregister(unknown) = %v, want ErrNotFound and not ErrGone", err)
	}
	// A resource with versions but no registration (removed from the file,
	// its history kept) is removed the same way (API.md: DELETE of a
	// stored-only resource); the caller refuses the ids the file declares.
	MustSave(t, db, Doc("file", 0, Item("a", "A")))
	if _, err := db.Unregister(ctx, "file"); err != nil {
		t.Errorf("Unregister(unregistered resource with versions) = %v, want nil", err)
	}
	if _, err := db.Resource(ctx, "file"); !errors.Is(err, storage.ErrGone) {
		t.Errorf("Resource(file) after Unregister = %v, want ErrGone", err)
	}
	if infos, err := db.Resources(ctx); err != nil || slices.ContainsFunc(infos, func(i storage.ResourceInfo) bool { return i.ID == "file" }) {
		t.Errorf("Resources after Unregister(file) = %v, %v; want it left out", infos, err)
	}
	MustCheck(t, db)
}

func testRegistryErrors(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	for _, id := range []string{"", "a\x00b", "a\nb", "a\xffb", string(make([]byte, storage.MaxIDLen+1))} {
		t.Run(fmt.Sprintf("%q", id), func(t *testing.T) {
			if _, err := db.Register(ctx, reg(id, "https://example.org/", T0)); !errors.Is(err, storage.ErrInvalid) {
				t.Errorf("Register = %v, want ErrInvalid", err)
			}
			if _, err := db.Unregister(ctx, id); !errors.Is(err, storage.ErrInvalid) {
				t.Errorf("Unregister = %v, want ErrInvalid", err)
			}
		})
	}
	if regs, err := registrations(ctx, db); err != nil || len(regs) != 0 {
		t.Errorf("Registrations after refused registrations = %v, %v", regIDs(regs), err)
	}
}

// history3 registers id and saves three versions and a poll state.
func history3(t *testing.T, db storage.Store, id string) {
	t.Helper()
	mustRegister(t, db, reg(id, "https://example.org/"+id, T0))
	for i := range 3 {
		MustSave(t, db, Doc(id, i, Item("keep", "Keep"), Item(fmt.Sprint("v", i), fmt.Sprint("Version ", i))))
	}
	if err := db.SavePollState(context.Background(), id, []byte("state of "+id)); err != nil {
		t.Fatal(err)
	}
}

// testTombstone: after Unregister every read and write of the id fails
// with ErrGone (which also matches ErrNotFound), Resources omits it, and
// other resources are untouched.
func testTombstone(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	history3(t, db, "gone")
	history3(t, db, "kept")
	MustSave(t, db, Doc("file", 0, Item("a", "A"))) // never registered
	// Read everything once first: a driver's caches must not outlive the Unregister.
	if _, err := db.Resource(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Items(ctx, "gone", storage.ItemQuery{Max: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PollState(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	mustUnregister(t, db, "gone")

	ops := []struct {
		name string
		op   func() error
	}{
		{"Resource", func() error { _, err := db.Resource(ctx, "gone"); return err }},
		{"Version", func() error { _, _, err := db.Version(ctx, "gone", 1); return err }},
		{"Versions", func() error { _, err := db.Versions(ctx, "gone", 0, 0); return err }},
		{"Items", func() error { _, err := db.Items(ctx, "gone", storage.ItemQuery{}); return err }},
		{"Items with terms", func() error {
			_, err := db.Items(ctx, "gone", storage.ItemQuery{Max: 1, Terms: titleTerm("keep")})
			return err
		}},
		{"PollState", func() error { _, err := db.PollState(ctx, "gone"); return err }},
		{"Save", func() error { _, err := db.Save(ctx, Doc("gone", 9, Item("new", "New"))); return err }},
		{"SavePollState", func() error { return db.SavePollState(ctx, "gone", []byte("late")) }},
		{"Prune", func() error { _, err := db.Prune(ctx, "gone", storage.Retention{MaxVersions: 1}, T0); return err }},
		{"Unregister", func() error { _, err := db.Unregister(ctx, "gone"); return err }},
	}
	for _, tt := range ops {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.op()
			if !errors.Is(err, storage.ErrGone) {
				t.Fatalf("%s = %v, want ErrGone", tt.name, err)
			}
			if !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("%s = %v, which does not match ErrNotFound", tt.name, err)
			}
		})
	}
	// The refused writes wrote nothing: still gone after all of them.
	if _, err := db.PollState(ctx, "gone"); !errors.Is(err, storage.ErrGone) {
		t.Errorf("PollState after refused writes = %v, want ErrGone", err)
	}
	rs, err := db.Resources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.ID)
	}
	if !slices.Equal(got, []string{"file", "kept"}) {
		t.Errorf("Resources = %v, want [file kept]", got)
	}
	if regs, err := registrations(ctx, db); err != nil || !slices.Equal(regIDs(regs), []string{"kept"}) {
		t.Errorf("Registrations = %v, %v; want [kept]", regIDs(regs), err)
	}
	// The other resources are whole.
	if vs, err := db.Versions(ctx, "kept", 0, 0); err != nil || Seqs(vs) != "3,2,1" {
		t.Errorf("Versions(kept) = %s, %v", Seqs(vs), err)
	}
	if items, err := db.Items(ctx, "kept", storage.ItemQuery{}); err != nil || IDs(items) != "v2,v1,keep,v0" {
		t.Errorf("Items(kept) = %s, %v", IDs(items), err)
	}
	if st, err := db.PollState(ctx, "kept"); err != nil || string(st) != "state of kept" {
		t.Errorf("PollState(kept) = %q, %v", st, err)
	}
	MustCheck(t, db)
}

// testReRegister: registering an unregistered id clears its tombstone; the
// id starts without versions, items or poll state, and its sequence numbers
// continue after the last one it had.
func testReRegister(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	history3(t, db, "news")
	mustUnregister(t, db, "news")
	if !mustRegister(t, db, reg("news", "https://example.org/news2", T0.Add(time.Hour))) {
		t.Error("Register after Unregister: created = false, want true")
	}
	regs, err := registrations(ctx, db)
	if err != nil || len(regs) != 1 || !regs[0].Registered.Equal(T0.Add(time.Hour)) {
		t.Fatalf("Registrations = %+v, %v; want news registered anew at T0+1h", regs, err)
	}
	for name, err := range map[string]error{
		"Resource":  func() error { _, err := db.Resource(ctx, "news"); return err }(),
		"Items":     func() error { _, err := db.Items(ctx, "news", storage.ItemQuery{}); return err }(),
		"PollState": func() error { _, err := db.PollState(ctx, "news"); return err }(),
	} {
		if !errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrGone) {
			t.Errorf("%s after Register = %v, want ErrNotFound and not ErrGone", name, err)
		}
	}
	res := MustSave(t, db, Doc("news", 10, Item("fresh", "Fresh")))
	if !res.Changed || res.Seq != 4 || res.Versions != 1 {
		t.Fatalf("first save after re-registering = %+v, want changed, seq 4, 1 version", res)
	}
	if items, err := db.Items(ctx, "news", storage.ItemQuery{}); err != nil || IDs(items) != "fresh" {
		t.Errorf("Items = %s, %v; want only the new history's", IDs(items), err)
	}
	if items, err := db.Items(ctx, "news", storage.ItemQuery{Terms: titleTerm("keep")}); err != nil || len(items) != 0 {
		t.Errorf("keyword Items for an old item = %s, %v; want none", IDs(items), err)
	}
	info, err := db.Resource(ctx, "news")
	if err != nil || info.Versions != 1 || info.LatestSeq != 4 || !info.Created.Equal(T0.Add(10*time.Minute)) {
		t.Errorf("Resource = %+v, %v", info, err)
	}
	if _, _, err := db.Version(ctx, "news", 2); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Version(2) = %v, want ErrNotFound", err)
	}
	MustCheck(t, db)

	// Again, and once without any save in between: the floor holds.
	mustUnregister(t, db, "news")
	mustRegister(t, db, reg("news", "https://example.org/news", T0))
	mustUnregister(t, db, "news")
	mustRegister(t, db, reg("news", "https://example.org/news", T0))
	if res := MustSave(t, db, Doc("news", 20, Item("a", "A"))); res.Seq != 5 {
		t.Errorf("save after two more cycles: seq %d, want 5", res.Seq)
	}
	MustCheck(t, db)
}

// testUnregisterRacesSaves: saves and poll-state writes racing an
// Unregister either land before it (and are removed with the rest) or fail
// with ErrGone; none brings the resource back, and a new registration
// continues after the highest seq any save was given.
func testUnregisterRacesSaves(t *testing.T, open Opener) {
	const workers = 4
	db := open(t)
	ctx := context.Background()
	mustRegister(t, db, reg("news", "https://example.org/news", T0))
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		maxSeq  uint64
		saved   = make(chan struct{}, 1)
		failure = make(chan error, workers)
	)
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				if i > 100000 {
					failure <- errors.New("saves never saw the Unregister")
					return
				}
				res, err := db.Save(ctx, Doc("news", i, Item("w", fmt.Sprint("worker ", w, " save ", i))))
				if errors.Is(err, storage.ErrGone) {
					return
				}
				if err != nil {
					failure <- err
					return
				}
				mu.Lock()
				maxSeq = max(maxSeq, res.Seq)
				mu.Unlock()
				select {
				case saved <- struct{}{}:
				default:
				}
				if err := db.SavePollState(ctx, "news", []byte(fmt.Sprint(w, i))); err != nil && !errors.Is(err, storage.ErrGone) {
					failure <- err
					return
				}
			}
		})
	}
	<-saved // unregister while the saves go on
	_, unregErr := db.Unregister(ctx, "news")
	wg.Wait()
	close(failure)
	for err := range failure {
		t.Error(err)
	}
	if unregErr != nil {
		t.Fatalf("Unregister: %v", unregErr)
	}
	for name, err := range map[string]error{
		"Resource":  func() error { _, err := db.Resource(ctx, "news"); return err }(),
		"Items":     func() error { _, err := db.Items(ctx, "news", storage.ItemQuery{}); return err }(),
		"PollState": func() error { _, err := db.PollState(ctx, "news"); return err }(),
	} {
		if !errors.Is(err, storage.ErrGone) {
			t.Errorf("%s after the race = %v, want ErrGone", name, err)
		}
	}
	if rs, err := db.Resources(ctx); err != nil || len(rs) != 0 {
		t.Errorf("Resources after the race = %+v, %v; want none", rs, err)
	}
	MustCheck(t, db)
	mustRegister(t, db, reg("news", "https://example.org/news", T0))
	if res := MustSave(t, db, Doc("news", 0, Item("again", "Again"))); res.Seq != maxSeq+1 {
		t.Errorf("save after re-registering: seq %d, want %d (after the highest given)", res.Seq, maxSeq+1)
	}
	MustCheck(t, db)
}

// testConcurrentRegister: of many concurrent first registrations of one id,
// exactly one reports created, and the registration is one of theirs.
func testConcurrentRegister(t *testing.T, open Opener) {
	const workers = 8
	db := open(t)
	ctx := context.Background()
	var (
		wg      sync.WaitGroup
		created = make(chan bool, workers)
		mu      sync.Mutex
		revs    = map[storage.Revision]int{} // revision → the call's worker
	)
	for w := range workers {
		wg.Go(func() {
			res, err := db.Register(ctx, reg("news", fmt.Sprint("https://example.org/", w), T0.Add(time.Duration(w)*time.Second)))
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			revs[res.Revision] = w
			mu.Unlock()
			created <- res.Created
		})
	}
	wg.Wait()
	close(created)
	n := 0
	for c := range created {
		if c {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d registrations reported created, want 1", n)
	}
	if len(revs) != workers {
		t.Errorf("%d calls got %d distinct revisions, want one each", workers, len(revs))
	}
	regs, err := registrations(ctx, db)
	if err != nil || len(regs) != 1 {
		t.Fatalf("Registrations = %+v, %v", regs, err)
	}
	// The last writer's definition and Updated, the first one's Registered:
	// each from one of the calls, the first two from the same one.
	r := regs[0]
	var w int
	if _, err := fmt.Sscanf(string(r.Definition), `{"id":"news","url":"https://example.org/%d"}`, &w); err != nil {
		t.Fatalf("definition %s: %v", r.Definition, err)
	}
	if !r.Updated.Equal(T0.Add(time.Duration(w) * time.Second)) {
		t.Errorf("definition of call %d with Updated %v, not that call's", w, r.Updated)
	}
	// The definition kept is that of the change with the highest revision:
	// revisions order the changes as they committed.
	if last := revs[slices.Max(slices.Collect(maps.Keys(revs)))]; last != w {
		t.Errorf("definition of call %d kept, but call %d has the highest revision", w, last)
	}
	if d := r.Registered.Sub(T0); d < 0 || d >= workers*time.Second || d%time.Second != 0 {
		t.Errorf("Registered %v is no call's", r.Registered)
	}
	MustCheck(t, db)
}

// testRegistryRevisions: every change takes a higher revision than the
// changes before it, a refused change takes none, and a snapshot's revision
// is that of the last change it holds.
func testRegistryRevisions(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	snap := func() storage.RegistrySnapshot {
		t.Helper()
		s, err := db.Registrations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	r0 := snap().Revision
	a, err := db.Register(ctx, reg("a", "https://example.org/a", T0))
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.Register(ctx, reg("b", "https://example.org/b", T0))
	if err != nil {
		t.Fatal(err)
	}
	a2, err := db.Register(ctx, reg("a", "https://example.org/a2", T0))
	if err != nil {
		t.Fatal(err)
	}
	if !(r0 < a.Revision && a.Revision < b.Revision && b.Revision < a2.Revision) {
		t.Errorf("revisions %d (empty), %d, %d, %d: want increasing", r0, a.Revision, b.Revision, a2.Revision)
	}
	if s := snap(); s.Revision != a2.Revision || !slices.Equal(regIDs(s.Registrations), []string{"a", "b"}) {
		t.Errorf("snapshot = revision %d %v, want %d [a b]", s.Revision, regIDs(s.Registrations), a2.Revision)
	}
	del, err := db.Unregister(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if del <= a2.Revision {
		t.Errorf("Unregister's revision %d is not above the last Register's %d", del, a2.Revision)
	}
	// Refused changes take no revision.
	if _, err := db.Unregister(ctx, "a"); !errors.Is(err, storage.ErrGone) {
		t.Errorf("Unregister twice = %v", err)
	}
	if _, err := db.Unregister(ctx, "never"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Unregister(never) = %v", err)
	}
	if _, err := db.Register(ctx, reg("", "https://example.org/", T0)); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("Register(\"\") = %v", err)
	}
	if s := snap(); s.Revision != del || !slices.Equal(regIDs(s.Registrations), []string{"b"}) {
		t.Errorf("after refused changes, snapshot = revision %d %v, want %d [b]", s.Revision, regIDs(s.Registrations), del)
	}
}

// testRegistrySnapshots: under concurrent registrations and deletions, every
// snapshot holds exactly the changes up to its revision, so that a reader
// that compares revisions can never take an older state for a newer one.
func testRegistrySnapshots(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	const writers, changes, ids = 4, 40, 5
	type change struct {
		id, url string // url "": deleted
	}
	var (
		mu  sync.Mutex
		log = map[storage.Revision]change{}
	)
	var snaps []storage.RegistrySnapshot
	done := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			s, err := db.Registrations(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			snaps = append(snaps, s)
		}
	})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range changes {
				id := fmt.Sprint("r", (w+i)%ids)
				if (w+i)%3 == 2 {
					rev, err := db.Unregister(ctx, id)
					if errors.Is(err, storage.ErrNotFound) {
						continue // not registered now (or gone): no change
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					log[rev] = change{id: id}
					mu.Unlock()
					continue
				}
				url := fmt.Sprintf("https://example.org/%d/%d", w, i)
				res, err := db.Register(ctx, reg(id, url, T0))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				log[res.Revision] = change{id: id, url: url}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(done)
	readers.Wait()
	final, err := db.Registrations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snaps = append(snaps, final)
	revs := slices.Sorted(maps.Keys(log))
	for _, s := range snaps {
		want := map[string]string{} // the changes up to s.Revision, replayed in revision order
		for _, r := range revs {
			if r > s.Revision {
				break
			}
			if c := log[r]; c.url == "" {
				delete(want, c.id)
			} else {
				want[c.id] = c.url
			}
		}
		got := map[string]string{}
		for _, r := range s.Registrations {
			got[r.ID] = string(r.Definition)
		}
		if len(got) != len(want) {
			t.Fatalf("snapshot at revision %d holds %v, want the ids of %v", s.Revision, slices.Sorted(maps.Keys(got)), want)
		}
		for id, url := range want {
			if d := got[id]; d != string(reg(id, url, T0).Definition) {
				t.Fatalf("snapshot at revision %d: %s = %s, want %s", s.Revision, id, d, url)
			}
		}
	}
	if final.Revision != revs[len(revs)-1] {
		t.Errorf("final snapshot at revision %d, last change at %d", final.Revision, revs[len(revs)-1])
	}
}
