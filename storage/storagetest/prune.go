package storagetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// history saves 10 versions, one a minute: item "keep" in all, "early" only in
// versions 1–3, "late" from 8 on, and "v<i>" only in version i.
func history(t *testing.T, db storage.Store) {
	t.Helper()
	for i := 1; i <= 10; i++ {
		d := Doc("news", i, Item("keep", "Keep"), Item(fmt.Sprintf("v%d", i), fmt.Sprintf("Only in %d", i)))
		if i <= 3 {
			d = Doc("news", i, Item("keep", "Keep"), Item(fmt.Sprintf("v%d", i), fmt.Sprintf("Only in %d", i)), Item("early", "Early"))
		}
		if i >= 8 {
			d = Doc("news", i, Item("late", "Late"), Item("keep", "Keep"), Item(fmt.Sprintf("v%d", i), fmt.Sprintf("Only in %d", i)))
		}
		MustSave(t, db, d)
	}
}

func testPrune(t *testing.T, open Opener) {
	now := T0.Add(10 * time.Minute)
	tests := []struct {
		name     string
		r        storage.Retention
		removed  int
		versions string // seqs kept, newest first
		items    string
	}{
		{"unbounded", storage.Retention{}, 0, "10,9,8,7,6,5,4,3,2,1", "v10,v9,late,v8,v7,v6,v5,v4,v3,v2,keep,v1,early"},
		{"max versions 3", storage.Retention{MaxVersions: 3}, 7, "10,9,8", "v10,v9,late,v8,keep"},
		{"max versions 8 keeps early items of v3", storage.Retention{MaxVersions: 8}, 2, "10,9,8,7,6,5,4,3", "v10,v9,late,v8,v7,v6,v5,v4,v3,keep,early"},
		{"max versions 1", storage.Retention{MaxVersions: 1}, 9, "10", "v10,late,keep"},
		{"max versions above count", storage.Retention{MaxVersions: 50}, 0, "10,9,8,7,6,5,4,3,2,1", "v10,v9,late,v8,v7,v6,v5,v4,v3,v2,keep,v1,early"},
		{"max age 2m30s", storage.Retention{MaxAge: 150 * time.Second}, 7, "10,9,8", "v10,v9,late,v8,keep"},
		{"max age keeps the newest", storage.Retention{MaxAge: time.Nanosecond}, 9, "10", "v10,late,keep"},
		{"both: the stricter wins", storage.Retention{MaxVersions: 5, MaxAge: 150 * time.Second}, 7, "10,9,8", "v10,v9,late,v8,keep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := open(t)
			ctx := context.Background()
			history(t, db)
			before, err := db.Items(ctx, "news", storage.ItemQuery{})
			if err != nil {
				t.Fatal(err)
			}
			n, err := db.Prune(ctx, "news", tt.r, now)
			if err != nil {
				t.Fatal(err)
			}
			if n != tt.removed {
				t.Errorf("Prune removed %d, want %d", n, tt.removed)
			}
			vs, err := db.Versions(ctx, "news", 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if Seqs(vs) != tt.versions {
				t.Errorf("versions = %s, want %s", Seqs(vs), tt.versions)
			}
			items, err := db.Items(ctx, "news", storage.ItemQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if IDs(items) != tt.items {
				t.Errorf("items = %s, want %s", IDs(items), tt.items)
			}
			// Keyword queries agree with the pruned index.
			kw, err := db.Items(ctx, "news", storage.ItemQuery{Terms: schema.Terms{schema.NewTerm(schema.And, schema.FieldTitle, "only in")}})
			if err != nil {
				t.Fatal(err)
			}
			var only []string
			for _, x := range items {
				if strings.HasPrefix(x.ID, "v") {
					only = append(only, x.ID)
				}
			}
			if IDs(kw) != strings.Join(only, ",") {
				t.Errorf("keyword items = %s, want %s", IDs(kw), strings.Join(only, ","))
			}
			// Surviving items keep their first seen.
			first := map[string]time.Time{}
			for _, x := range before {
				first[x.ID] = x.FirstSeen
			}
			for _, x := range items {
				if !x.FirstSeen.Equal(first[x.ID]) {
					t.Errorf("item %s first seen %v, was %v", x.ID, x.FirstSeen, first[x.ID])
				}
			}
			info, err := db.Resource(ctx, "news")
			if err != nil || info.Versions != len(vs) || info.LatestSeq != 10 {
				t.Errorf("Resource = %+v, %v", info, err)
			}
			if _, _, err := db.Version(ctx, "news", len(vs)+1); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("Version past pruned history = %v", err)
			}
			if d, _, err := db.Version(ctx, "news", len(vs)); err != nil || d.Timestamp.Sub(T0) != time.Duration(11-len(vs))*time.Minute {
				t.Errorf("oldest kept version = %v, %v", d, err)
			}
			MustCheck(t, db)
			// Saving after a prune continues the sequence.
			if res := MustSave(t, db, Doc("news", 11, Item("new", "New"))); res.Seq != 11 || res.Versions != len(vs)+1 {
				t.Errorf("save after prune = %+v", res)
			}
			MustCheck(t, db)
		})
	}
}

func testPruneErrors(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	if _, err := db.Prune(ctx, "nope", storage.Retention{MaxVersions: 1}, T0); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Prune unknown = %v", err)
	}
	MustSave(t, db, Doc("news", 0, Item("a", "A")))
	if _, err := db.Prune(ctx, "news", storage.Retention{MaxVersions: -1}, T0); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("Prune negative = %v", err)
	}
	// A zero retention keeps everything without looking at the resource.
	mustRegister(t, db, reg("gone", "https://example.org/gone", T0))
	mustUnregister(t, db, "gone")
	for _, id := range []string{"news", "nope", "gone"} {
		if n, err := db.Prune(ctx, id, storage.Retention{}, T0); n != 0 || err != nil {
			t.Errorf("Prune(%s, zero retention) = %d, %v; want 0, nil", id, n, err)
		}
	}
}

// testPruneAgeBoundary: MaxAge keeps a version exactly MaxAge old, to the
// nanosecond, and drops one a nanosecond older, whatever now's zone.
func testPruneAgeBoundary(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	at := T0.Add(time.Nanosecond)
	for i, ts := range []time.Time{at.Add(-time.Nanosecond), at, at.Add(time.Hour)} {
		d := Doc("news", 0, Item("a", fmt.Sprint("A", i)))
		d.Timestamp = ts
		MustSave(t, db, d)
	}
	now := at.Add(time.Hour).In(time.FixedZone("E", 7200))
	if n, err := db.Prune(ctx, "news", storage.Retention{MaxAge: time.Hour}, now); n != 1 || err != nil {
		t.Fatalf("Prune = %d, %v; want 1", n, err)
	}
	if vs, err := db.Versions(ctx, "news", 0, 0); err != nil || Seqs(vs) != "3,2" {
		t.Errorf("Versions = %s, %v; want 3,2", Seqs(vs), err)
	}
}
