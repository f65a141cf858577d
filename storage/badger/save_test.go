package badger_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

func TestReopenAfterClose(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db, err := badger.Open(dir, badger.Options{MemTableSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	mustSave(t, db, doc("news", 0, it("a", "A")))
	mustSave(t, db, doc("news", 1, it("a", "A2"), it("b", "B")))
	if err := db.SavePollState(ctx, "news", []byte(`{"etag":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	db, err = badger.Open(dir, badger.Options{MemTableSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}()
	mustCheck(t, db)
	info, err := db.Resource(ctx, "news")
	if err != nil || info.Versions != 2 || info.LatestSeq != 2 {
		t.Fatalf("Resource = %+v, %v", info, err)
	}
	items, err := db.Items(ctx, "news", storage.ItemQuery{})
	if err != nil || ids(items) != "b,a" || items[1].Title != "A2" {
		t.Fatalf("Items = %v (%+v), %v", ids(items), items, err)
	}
	st, err := db.PollState(ctx, "news")
	if err != nil || string(st) != `{"etag":"x"}` {
		t.Fatalf("PollState = %q, %v", st, err)
	}
	if res := mustSave(t, db, doc("news", 2, it("a", "A2"), it("b", "B"))); res.Changed || res.Seq != 2 {
		t.Fatalf("dedup after reopen: %+v", res)
	}
}

// TestSaveFirstAfterReopen: the first save after a reopen, before any read
// (nothing cached: Save compares with the stored record), stores a changed
// document and not the same one again.
func TestSaveFirstAfterReopen(t *testing.T) {
	dir := t.TempDir()
	open := func() *badger.DB {
		db, err := badger.Open(dir, badger.Options{MemTableSize: 8 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	mustSave(t, db, doc("news", 0, it("a", "A")))
	for i, tc := range []struct {
		title   string
		changed bool
	}{{"A", false}, {"A2", true}, {"A2", false}} {
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db = open()
		res := mustSave(t, db, doc("news", i+1, it("a", tc.title)))
		if res.Changed != tc.changed {
			t.Errorf("first save after reopen %d (title %s): changed %v, want %v", i+1, tc.title, res.Changed, tc.changed)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestInMemory(t *testing.T) {
	db, err := badger.Open("", badger.Options{InMemory: true, MemTableSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}()
	mustSave(t, db, doc("m", 0, it("a", "A")))
	mustCheck(t, db)
	if err := db.SavePollState(context.Background(), "m", []byte("s")); err != nil {
		t.Fatal(err)
	}
	if st, err := db.PollState(context.Background(), "m"); err != nil || string(st) != "s" {
		t.Fatalf("PollState = %q, %v", st, err)
	}
}

// TestGCWhileWriting runs the value-log GC goroutine every millisecond while
// saves and prunes rewrite the store; Close must stop it (goleak checks).
func TestGCWhileWriting(t *testing.T) {
	db, err := badger.Open(t.TempDir(), badger.Options{MemTableSize: 8 << 20, GCInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 60 {
		mustSave(t, db, doc("gc", i, it("a", strings.Repeat("long title ", 300)+strconv.Itoa(i))))
		if i%10 == 9 {
			if _, err := db.Prune(ctx, "gc", storage.Retention{MaxVersions: 2}, t0); err != nil {
				t.Fatal(err)
			}
		}
	}
	mustCheck(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRegistryAfterReopen: registrations, tombstones and the seq floor of an
// unregistered id are on disk, not in memory.
func TestRegistryAfterReopen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	open := func() *badger.DB {
		db, err := badger.Open(dir, badger.Options{MemTableSize: 8 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	for _, id := range []string{"kept", "gone"} {
		if _, err := db.Register(ctx, storage.Registration{ID: id, Definition: []byte(`{"id":"` + id + `"}`), Registered: t0, Updated: t0}); err != nil {
			t.Fatal(err)
		}
		mustSave(t, db, doc(id, 0, it("a", "A")))
		mustSave(t, db, doc(id, 1, it("b", "B")))
	}
	if _, err := db.Unregister(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = open()
	snap, err := db.Registrations(ctx)
	regs := snap.Registrations
	if err != nil || len(regs) != 1 || regs[0].ID != "kept" || string(regs[0].Definition) != `{"id":"kept"}` || !regs[0].Registered.Equal(t0) {
		t.Fatalf("Registrations after reopen = %+v, %v", regs, err)
	}
	if _, err := db.Resource(ctx, "gone"); !errors.Is(err, storage.ErrGone) {
		t.Fatalf("Resource(gone) after reopen = %v, want ErrGone", err)
	}
	mustCheck(t, db)
	if _, err := db.Register(ctx, storage.Registration{ID: "gone", Registered: t0, Updated: t0}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = open()
	defer func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}()
	if res := mustSave(t, db, doc("gone", 2, it("c", "C"))); res.Seq != 3 || res.Versions != 1 {
		t.Errorf("save after re-registering and reopening = %+v, want seq 3, 1 version", res)
	}
	mustCheck(t, db)
}

// Prune by age drops the oldest versions while they are older than the
// cutoff and stops at the first that is not: a version saved with an
// earlier timestamp than the one before it (a feed's clock going back) does
// not make Prune count past that one and drop a version newer than the cutoff.
func TestPruneByAgeStopsAtFirstRecentVersion(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	for i, minutes := range []int{0, 100, 10, 200} { // version 3 goes back in time
		mustSave(t, db, doc("r", minutes, it("i"+strconv.Itoa(i), "Item")))
	}
	n, err := db.Prune(ctx, "r", storage.Retention{MaxAge: 50 * time.Minute}, t0.Add(100*time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1 (version 1, older than the cutoff)", n, err)
	}
	vs, err := db.Versions(ctx, "r", 0, 0)
	if err != nil || len(vs) != 3 || vs[len(vs)-1].Seq != 2 {
		t.Fatalf("Versions = %+v, %v; want 4, 3 and 2", vs, err)
	}
	mustCheck(t, db)
}
