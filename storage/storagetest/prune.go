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
		now      time.Time // when zero, 10 minutes after T0: the latest version's time
	}{
		{"unbounded", storage.Retention{}, 0, "10,9,8,7,6,5,4,3,2,1", "v10,v9,late,v8,v7,v6,v5,v4,v3,v2,keep,v1,early", time.Time{}},
		{"max versions 3", storage.Retention{MaxVersions: 3}, 7, "10,9,8", "v10,v9,late,v8,keep", time.Time{}},
		{"max versions 8 keeps early items of v3", storage.Retention{MaxVersions: 8}, 2, "10,9,8,7,6,5,4,3", "v10,v9,late,v8,v7,v6,v5,v4,v3,keep,early", time.Time{}},
		{"max versions 1", storage.Retention{MaxVersions: 1}, 9, "10", "v10,late,keep", time.Time{}},
		{"max versions above count", storage.Retention{MaxVersions: 50}, 0, "10,9,8,7,6,5,4,3,2,1", "v10,v9,late,v8,v7,v6,v5,v4,v3,v2,keep,v1,early", time.Time{}},
		{"max age 2m30s", storage.Retention{MaxAge: 150 * time.Second}, 7, "10,9,8", "v10,v9,late,v8,keep", time.Time{}},
		{"max age keeps the newest", storage.Retention{MaxAge: time.Nanosecond}, 9, "10", "v10,late,keep", time.Time{}},
		{"both: the stricter wins", storage.Retention{MaxVersions: 5, MaxAge: 150 * time.Second}, 7, "10,9,8", "v10,v9,late,v8,keep", time.Time{}},
		{"both: the stricter wins, by count", storage.Retention{MaxVersions: 3, MaxAge: 450 * time.Second}, 7, "10,9,8", "v10,v9,late,v8,keep", time.Time{}},
		{"max versions at the count", storage.Retention{MaxVersions: 10}, 0, "10,9,8,7,6,5,4,3,2,1", "v10,v9,late,v8,v7,v6,v5,v4,v3,v2,keep,v1,early", time.Time{}},
		{"max versions one under the count", storage.Retention{MaxVersions: 9}, 1, "10,9,8,7,6,5,4,3,2", "v10,v9,late,v8,v7,v6,v5,v4,v3,v2,keep,early", time.Time{}},
		// Every version, the latest included, older than max_age: the
		// latest is kept all the same, the feed is never emptied.
		{"every version older than max age", storage.Retention{MaxAge: time.Minute}, 9, "10", "v10,late,keep", T0.Add(time.Hour)},
		{"every version older than max age, with max versions", storage.Retention{MaxVersions: 5, MaxAge: time.Minute}, 9, "10", "v10,late,keep", T0.Add(time.Hour)},
		{"every version far older than max age", storage.Retention{MaxAge: time.Nanosecond}, 9, "10", "v10,late,keep", T0.Add(100 * 365 * 24 * time.Hour)},
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
			now := now
			if !tt.now.IsZero() {
				now = tt.now
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

// testPruneKeepsLatest: retention at its extremes never empties a resource.
// A resource whose one version is older than MaxAge, or whose every version
// is, keeps its latest, readable as the newest with its items, and pruning
// it again removes nothing.
func testPruneKeepsLatest(t *testing.T, open Opener) {
	for _, tc := range []struct {
		name     string
		versions int
		r        storage.Retention
	}{
		{"one version older than max age", 1, storage.Retention{MaxAge: time.Minute}},
		{"one version, max versions 1", 1, storage.Retention{MaxVersions: 1}},
		{"one version, both", 1, storage.Retention{MaxVersions: 1, MaxAge: time.Nanosecond}},
		{"two versions older than max age", 2, storage.Retention{MaxAge: time.Minute}},
		{"three versions older than max age, max versions 2", 3, storage.Retention{MaxVersions: 2, MaxAge: time.Minute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := open(t)
			ctx := context.Background()
			for i := 1; i <= tc.versions; i++ {
				MustSave(t, db, Doc("news", i, Item(fmt.Sprint("v", i), fmt.Sprint("Only in ", i))))
			}
			now := T0.Add(24 * time.Hour) // every version a day old or more
			for pass := 1; pass <= 2; pass++ {
				want := 0
				if pass == 1 {
					want = tc.versions - 1
				}
				if n, err := db.Prune(ctx, "news", tc.r, now); n != want || err != nil {
					t.Fatalf("Prune (pass %d) = %d, %v; want %d, nil", pass, n, err, want)
				}
			}
			vs, err := db.Versions(ctx, "news", 0, 0)
			if err != nil || Seqs(vs) != fmt.Sprint(tc.versions) {
				t.Fatalf("Versions = %s, %v; want %d", Seqs(vs), err, tc.versions)
			}
			d, vi, err := db.Version(ctx, "news", 1)
			if err != nil || vi.Seq != uint64(tc.versions) || !d.Timestamp.Equal(T0.Add(time.Duration(tc.versions)*time.Minute)) {
				t.Fatalf("Version(1) = %+v, %+v, %v; want the latest, seq %d", d, vi, err, tc.versions)
			}
			if items, err := db.Items(ctx, "news", storage.ItemQuery{}); err != nil || IDs(items) != fmt.Sprint("v", tc.versions) {
				t.Errorf("Items = %s, %v; want v%d", IDs(items), err, tc.versions)
			}
			if info, err := db.Resource(ctx, "news"); err != nil || info.Versions != 1 || info.LatestSeq != uint64(tc.versions) {
				t.Errorf("Resource = %+v, %v", info, err)
			}
			MustCheck(t, db)
		})
	}
}

// testPruneMany: one Prune that drops more versions than a driver may drop
// in one transaction (the Badger driver drops 256 at a time) drops exactly
// what the rule says, by count and by age, and unindexes exactly the items
// whose last version went, wherever the chunks fall.
func testPruneMany(t *testing.T, open Opener) {
	const total = 600
	for _, tc := range []struct {
		name string
		r    storage.Retention
		keep int
	}{
		{"max versions", storage.Retention{MaxVersions: 10}, 10},
		{"max age", storage.Retention{MaxAge: 20*time.Minute + 30*time.Second}, 21},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := open(t)
			ctx := context.Background()
			for i := 1; i <= total; i++ {
				// "keep" in every version; "span" in 250–270 (across the
				// first chunk's end); "w<i/100>" in each run of a hundred;
				// "v<i>" only in version i.
				items := []schema.Item{Item("keep", "Keep"), Item(fmt.Sprint("w", i/100), fmt.Sprint("Run ", i/100)), Item(fmt.Sprint("v", i), fmt.Sprint("Only in ", i))}
				if i >= 250 && i <= 270 {
					items = append(items, Item("span", "Span"))
				}
				if i == total-tc.keep+1 {
					items = append(items, Item("edge", "Edge")) // only in the oldest version kept
				}
				MustSave(t, db, Doc("news", i, items...))
			}
			now := T0.Add(total * time.Minute)
			n, err := db.Prune(ctx, "news", tc.r, now)
			if err != nil || n != total-tc.keep {
				t.Fatalf("Prune = %d, %v; want %d", n, err, total-tc.keep)
			}
			vs, err := db.Versions(ctx, "news", 0, 0)
			if err != nil || len(vs) != tc.keep || vs[len(vs)-1].Seq != uint64(total-tc.keep+1) || vs[0].Seq != total {
				t.Fatalf("Versions = %d of them (%v), want %d, seqs %d–%d", len(vs), err, tc.keep, total-tc.keep+1, total)
			}
			items, err := db.Items(ctx, "news", storage.ItemQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != tc.keep+4 { // v<i> of each kept version, keep, edge, w5, w6
				t.Errorf("%d items, want %d", len(items), tc.keep+4)
			}
			got := map[string]bool{}
			for _, x := range items {
				got[x.ID] = true
			}
			for id, want := range map[string]bool{
				"keep": true, "edge": true, "w6": true, "w5": true, "w4": false, "w2": false, "span": false, "w0": false,
				"v600": true, fmt.Sprint("v", total-tc.keep+1): true, fmt.Sprint("v", total-tc.keep): false, "v256": false, "v257": false, "v1": false,
			} {
				if got[id] != want {
					t.Errorf("item %s listed: %v, want %v (items %s)", id, got[id], want, IDs(items))
				}
			}
			MustCheck(t, db)
		})
	}
}
