package storagetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dynamo-rss/dynamo/storage"
)

// testReadsRejectBadInput: an id that cannot name a resource is refused by
// every method; reads say it names nothing (ErrNotFound) as well.
func testReadsRejectBadInput(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	ops := []struct {
		name  string
		read  bool
		call  func(id string) error
		extra func() error // the same method with another bad argument, if any
	}{
		{"Resource", true, func(id string) error { _, err := db.Resource(ctx, id); return err }, nil},
		{"Version", true, func(id string) error { _, _, err := db.Version(ctx, id, 1); return err }, nil},
		{"Versions", true, func(id string) error { _, err := db.Versions(ctx, id, 0, 0); return err }, nil},
		{"Items", true, func(id string) error { _, err := db.Items(ctx, id, storage.ItemQuery{}); return err }, nil},
		{"PollState", true, func(id string) error { _, err := db.PollState(ctx, id); return err }, nil},
		{"SavePollState", false, func(id string) error { return db.SavePollState(ctx, id, []byte("x")) }, nil},
		{"Prune", false, func(id string) error {
			_, err := db.Prune(ctx, id, storage.Retention{MaxVersions: 1}, T0)
			return err
		}, nil},
	}
	bad := []string{"", "a\x00b", "a\nb", "a\u0085b", "a\xffb", strings.Repeat("x", storage.MaxIDLen+1)}
	for _, op := range ops {
		for _, id := range bad {
			t.Run(fmt.Sprintf("%s(%q)", op.name, id), func(t *testing.T) {
				err := op.call(id)
				if !errors.Is(err, storage.ErrInvalid) {
					t.Errorf("%s = %v, want ErrInvalid", op.name, err)
				}
				if op.read && !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("%s = %v, which does not match ErrNotFound", op.name, err)
				}
			})
		}
	}
	if rs, err := db.Resources(ctx); err != nil || len(rs) != 0 {
		t.Errorf("Resources = %v, %v; want none", rs, err)
	}
	MustCheck(t, db)
}

// testSeqNeverReused: seqs run 1, 2, 3… per resource, an unchanged save
// takes none, and pruning never frees one.
func testSeqNeverReused(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		if res := MustSave(t, db, Doc("a", i, Item("x", fmt.Sprint("X", i)))); res.Seq != uint64(i) || !res.Changed {
			t.Fatalf("save %d = %+v, want changed seq %d", i, res, i)
		}
		if res := MustSave(t, db, Doc("a", i+100, Item("x", fmt.Sprint("X", i)))); res.Seq != uint64(i) || res.Changed || res.Versions != i {
			t.Fatalf("unchanged save after %d = %+v, want unchanged seq %d", i, res, i)
		}
	}
	if res := MustSave(t, db, Doc("b", 0, Item("x", "X"))); res.Seq != 1 {
		t.Errorf("another resource's first save: seq %d, want 1", res.Seq)
	}
	if n, err := db.Prune(ctx, "a", storage.Retention{MaxVersions: 1}, T0); err != nil || n != 2 {
		t.Fatalf("Prune = %d, %v; want 2", n, err)
	}
	if res := MustSave(t, db, Doc("a", 4, Item("x", "X4"))); res.Seq != 4 || res.Versions != 2 {
		t.Errorf("save after prune = %+v, want seq 4, 2 versions", res)
	}
	if vs, err := db.Versions(ctx, "a", 0, 0); err != nil || Seqs(vs) != "4,3" {
		t.Errorf("Versions = %s, %v; want 4,3", Seqs(vs), err)
	}
	MustCheck(t, db)
}

// testCheckHealthy: Check finds nothing in a store that only went through
// the API, at each stage.
func testCheckHealthy(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	MustCheck(t, db) // empty
	history3(t, db, "reg")
	for i := range 6 {
		MustSave(t, db, Doc("file", i, Item("k", "K"), Item(fmt.Sprint("i", i), "I"), Item(fmt.Sprint("j", i%2), fmt.Sprint("J", i))))
	}
	if err := db.SavePollState(ctx, "file", []byte("s")); err != nil {
		t.Fatal(err)
	}
	MustCheck(t, db)
	if _, err := db.Prune(ctx, "file", storage.Retention{MaxVersions: 2}, T0); err != nil {
		t.Fatal(err)
	}
	MustCheck(t, db)
	mustUnregister(t, db, "reg")
	MustCheck(t, db)
	mustRegister(t, db, reg("reg", "https://example.org/reg", T0))
	MustCheck(t, db)
	MustSave(t, db, Doc("reg", 9, Item("n", "N")))
	MustCheck(t, db)
}

// testClose: Close returns nil, and so does every later call.
func testClose(t *testing.T, open Opener) {
	db := open(t)
	MustSave(t, db, Doc("a", 0, Item("x", "X")))
	for i := range 2 {
		if err := db.Close(); err != nil {
			t.Fatalf("Close #%d: %v", i+1, err)
		}
	}
}
