package storagetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

func testSaveDedup(t *testing.T, open Opener) {
	base := func() *schema.Document { return Doc("news", 0, Item("a", "Alpha"), Item("b", "Beta")) }
	tests := []struct {
		name    string
		edit    func(d *schema.Document)
		changed bool
	}{
		{"same content", func(*schema.Document) {}, false},
		{"later timestamp only", func(d *schema.Document) { d.Timestamp = d.Timestamp.Add(99e9) }, false},
		{"item extension only", func(d *schema.Document) {
			d.Items[0].Extensions = schema.Extensions{{URI: schema.DCNamespace, Prefix: "dc", LocalName: "date", Value: "2026-03-01T10:00:00Z"}}
		}, false},
		{"channel image only", func(d *schema.Document) {
			d.Channel.Image = &schema.Image{Title: "logo", URL: "https://example.org/logo.png", Link: "https://example.org/"}
		}, false},
		{"item id only", func(d *schema.Document) { d.Items[1].ID = "b2" }, false},
		{"item description", func(d *schema.Document) { d.Items[1].Description = "changed" }, true},
		{"channel title", func(d *schema.Document) { d.Channel.Title = "Other" }, true},
		{"item link", func(d *schema.Document) { d.Items[0].Link = "https://example.org/moved" }, true},
		{"items swapped", func(d *schema.Document) {
			d.Items[0], d.Items[1] = d.Items[1], d.Items[0]
			d.Items[0].Index, d.Items[1].Index = 1, 2
		}, true},
		{"item added", func(d *schema.Document) { d.Items = append(d.Items, schema.Item{Index: 3, ID: "c", Title: "C"}) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := open(t)
			first := MustSave(t, db, base())
			if !first.Changed || first.Seq != 1 || first.Versions != 1 {
				t.Fatalf("first save = %+v, want changed seq 1", first)
			}
			d := base()
			tt.edit(d)
			res := MustSave(t, db, d)
			wantSeq, wantN := uint64(1), 1
			if tt.changed {
				wantSeq, wantN = 2, 2
			}
			if res.Changed != tt.changed || res.Seq != wantSeq || res.Versions != wantN {
				t.Fatalf("second save = %+v, want changed=%v seq %d versions %d", res, tt.changed, wantSeq, wantN)
			}
			info, err := db.Resource(context.Background(), "news")
			if err != nil {
				t.Fatal(err)
			}
			if info.Versions != wantN || info.LatestSeq != wantSeq || info.Hash != schema.ContentHash(d) {
				t.Errorf("resource = %+v", info)
			}
			MustCheck(t, db)
		})
	}
}

func testSaveRejectsBadInput(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	tests := []struct {
		name     string
		doc      *schema.Document
		schemaEr bool   // also wraps schema.ErrInvalid
		msg      string // the error mentions this
	}{
		{"nil document", nil, false, "nil document"},
		{"empty id", Doc("", 0), false, "empty resource id"},
		{"NUL in id", Doc("a\x00b", 0), false, "control character"},
		{"newline in id", Doc("a\nb", 0), false, "control character"},
		{"DEL in id", Doc("a\x7fb", 0), false, "control character"},
		{"C1 control in id", Doc("a\u0085b", 0), false, "control character"},
		{"invalid UTF-8 id", Doc("a\xffb", 0), false, "not UTF-8"},
		{"id too long", Doc(strings.Repeat("x", storage.MaxIDLen+1), 0), false, "more than 256"},
		{"relative url", func() *schema.Document { d := Doc("ok", 0); d.URL = "/x.html"; return d }(), true, "not an absolute URL"},
		{"duplicate item ids", Doc("ok", 0, Item("a", "A"), Item("a", "B")), true, `duplicate id "a"`},
		{"illegal XML char", Doc("ok", 0, Item("a", "bell\x07")), true, "characters XML does not allow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.Save(ctx, tt.doc)
			if !errors.Is(err, storage.ErrInvalid) {
				t.Fatalf("Save = %v, want ErrInvalid", err)
			}
			if tt.schemaEr != errors.Is(err, schema.ErrInvalid) {
				t.Errorf("errors.Is(err, schema.ErrInvalid) = %v, want %v (%v)", !tt.schemaEr, tt.schemaEr, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not mention %q", err, tt.msg)
			}
		})
	}
	rs, err := db.Resources(ctx)
	if err != nil || len(rs) != 0 {
		t.Fatalf("Resources after rejected saves = %v, %v; want none", rs, err)
	}
	// Reads with an id that cannot exist say not found (and invalid).
	if _, err := db.Resource(ctx, "a\x00b"); !errors.Is(err, storage.ErrNotFound) || !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("Resource(bad id) = %v", err)
	}
	if err := db.SavePollState(ctx, "a\nb", []byte("x")); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("SavePollState(bad id) = %v", err)
	}
}

func testConcurrentSaves(t *testing.T, open Opener) {
	const workers, each = 6, 15
	tests := []struct {
		name      string
		resources int  // workers share resources round-robin
		same      bool // every save brings the same content: one is a change
	}{
		{"same resource", 1, false},
		{"different resources", workers, false},
		{"same content", 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := open(t)
			ctx := context.Background()
			var (
				wg      sync.WaitGroup
				mu      sync.Mutex
				seen    = map[string]map[uint64]bool{}
				errs    = make(chan error, workers*each)
				changed atomic.Int32
			)
			for w := range workers {
				wg.Go(func() {
					id := "r" + string(rune('a'+w%tt.resources))
					for i := range each {
						d := Doc(id, w*each+i, Item("w", "worker"), Item("n", "save "+string(rune('A'+w))+strings.Repeat("!", i)))
						if tt.same {
							d = Doc(id, w*each+i, Item("w", "worker"))
						}
						res, err := db.Save(ctx, d)
						if err != nil {
							errs <- err
							return
						}
						if tt.same {
							if res.Changed {
								changed.Add(1)
							}
							if res.Seq != 1 || res.Versions != 1 {
								errs <- fmt.Errorf("same content saved concurrently: %+v, want seq 1, 1 version", res)
							}
							continue
						}
						if !res.Changed {
							errs <- errors.New("distinct content reported unchanged")
							return
						}
						mu.Lock()
						if seen[id] == nil {
							seen[id] = map[uint64]bool{}
						}
						if seen[id][res.Seq] {
							errs <- errors.New("seq handed out twice")
						}
						seen[id][res.Seq] = true
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if tt.same && changed.Load() != 1 {
				t.Errorf("%d saves of the same content reported a change, want 1", changed.Load())
			}
			rs, err := db.Resources(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != tt.resources {
				t.Fatalf("%d resources, want %d", len(rs), tt.resources)
			}
			for _, r := range rs {
				want := workers * each / tt.resources
				if tt.same {
					if r.Versions != 1 || r.LatestSeq != 1 {
						t.Errorf("%s: %d versions, latest %d; want 1 and 1", r.ID, r.Versions, r.LatestSeq)
					}
					continue
				}
				if r.Versions != want || r.LatestSeq != uint64(want) || len(seen[r.ID]) != want {
					t.Errorf("%s: %d versions, latest %d, %d seqs seen; want %d", r.ID, r.Versions, r.LatestSeq, len(seen[r.ID]), want)
				}
			}
			MustCheck(t, db)
		})
	}
}

func testPollState(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	if _, err := db.PollState(ctx, "news"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("PollState before any = %v, want ErrNotFound", err)
	}
	for _, state := range []string{"one", "two", ""} {
		if err := db.SavePollState(ctx, "news", []byte(state)); err != nil {
			t.Fatal(err)
		}
		got, err := db.PollState(ctx, "news")
		if err != nil || string(got) != state {
			t.Fatalf("PollState = %q, %v; want %q", got, err, state)
		}
	}
	// Poll state alone does not make a resource.
	if rs, err := db.Resources(ctx); err != nil || len(rs) != 0 {
		t.Fatalf("Resources = %v, %v", rs, err)
	}
}

func testCanceledContext(t *testing.T, open Opener) {
	db := open(t)
	MustSave(t, db, Doc("news", 0, Item("a", "A")))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := db.Save(ctx, Doc("news", 1, Item("a", "B"))); !errors.Is(err, context.Canceled) {
		t.Errorf("Save = %v, want context.Canceled", err)
	}
	if _, err := db.Items(ctx, "news", storage.ItemQuery{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Items = %v, want context.Canceled", err)
	}
}

// TestResourceInfoFresh: Resource (served from a cache) reflects every save
// and prune at once, also while readers keep filling the cache concurrently.
func testResourceInfoFresh(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, _ = db.Resource(ctx, "news") // ErrNotFound before the first save: fine
			}
		}()
	}
	for i := 1; i <= 40; i++ {
		res := MustSave(t, db, Doc("news", i, Item("a"+strconv.Itoa(i), "Title "+strconv.Itoa(i))))
		info, err := db.Resource(ctx, "news")
		if err != nil {
			t.Fatalf("Resource after save %d: %v", i, err)
		}
		if info.LatestSeq != res.Seq || info.Versions != res.Versions {
			t.Fatalf("after save %d: Resource = seq %d versions %d, want seq %d versions %d", i, info.LatestSeq, info.Versions, res.Seq, res.Versions)
		}
	}
	if _, err := db.Prune(ctx, "news", storage.Retention{MaxVersions: 5}, time.Now()); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	close(stop)
	wg.Wait()
	info, err := db.Resource(ctx, "news")
	if err != nil {
		t.Fatal(err)
	}
	if info.Versions != 5 || info.LatestSeq != 40 {
		t.Errorf("after prune: versions %d seq %d, want 5 and 40", info.Versions, info.LatestSeq)
	}
}

// testTimesExact: every time a store returns is the instant it was given,
// to the nanosecond, in UTC, whatever the zone (and monotonic reading) of
// the time saved: a fresh write, a cached read and a re-read agree, so
// validators derived from them (Last-Modified, ETag) do not move.
func testTimesExact(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	zone := time.FixedZone("IST", 5*3600+1800)
	ts := time.Date(2026, 3, 1, 17, 30, 0, 123456789, zone)
	mono := time.Now() // carries a monotonic reading
	d := Doc("news", 0, Item("a", "A"))
	d.Timestamp = ts
	MustSave(t, db, d)
	d2 := Doc("news", 0, Item("a", "A"), Item("b", "B"))
	d2.Timestamp = mono
	MustSave(t, db, d2)
	check := func(what string, got, want time.Time) {
		t.Helper()
		if !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("%s = %v, want %v in UTC", what, got, want.UTC())
		}
	}
	for range 2 { // the second round reads what the first one cached
		info, err := db.Resource(ctx, "news")
		if err != nil {
			t.Fatal(err)
		}
		check("Resource.Created", info.Created, ts)
		check("Resource.Updated", info.Updated, mono)
		rs, err := db.Resources(ctx)
		if err != nil || len(rs) != 1 {
			t.Fatalf("Resources = %v, %v", rs, err)
		}
		check("Resources[0].Updated", rs[0].Updated, mono)
		vs, err := db.Versions(ctx, "news", 0, 0)
		if err != nil || len(vs) != 2 {
			t.Fatalf("Versions = %v, %v", vs, err)
		}
		check("Versions[0].Timestamp", vs[0].Timestamp, mono)
		check("Versions[1].Timestamp", vs[1].Timestamp, ts)
		doc, vi, err := db.Version(ctx, "news", 2)
		if err != nil {
			t.Fatal(err)
		}
		check("Version(2) document timestamp", doc.Timestamp, ts)
		check("Version(2) info timestamp", vi.Timestamp, ts)
		items, err := db.Items(ctx, "news", storage.ItemQuery{})
		if err != nil || IDs(items) != "b,a" {
			t.Fatalf("Items = %s, %v", IDs(items), err)
		}
		check("Items[b].FirstSeen", items[0].FirstSeen, mono)
		check("Items[a].FirstSeen", items[1].FirstSeen, ts)
		check("Items[a].LastSeen", items[1].LastSeen, mono)
	}
	r := reg("reg", "https://example.org/reg", ts)
	r.Updated = mono
	mustRegister(t, db, r)
	regs, err := registrations(ctx, db)
	if err != nil || len(regs) != 1 {
		t.Fatalf("Registrations = %v, %v", regs, err)
	}
	check("Registered", regs[0].Registered, ts)
	check("Updated", regs[0].Updated, mono)
}

// testTimeRange: a store keeps times as int64 nanoseconds since the Unix
// epoch; a document timestamp outside storage.MinTime…MaxTime (the zero
// time too) and a registration time outside it (zero: unknown, kept) are
// refused with ErrInvalid, before anything else and the same by every driver.
func testTimeRange(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	MustSave(t, db, Doc("news", 0, Item("a", "A")))
	in := []time.Time{storage.MinTime(), storage.MaxTime(), storage.MinTime().In(time.FixedZone("W", -3600))}
	out := []time.Time{
		{},
		storage.MinTime().Add(-1),
		storage.MaxTime().Add(1),
		time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for _, ts := range out {
		d := Doc("news", 0, Item("a", "A")) // unchanged content: refused all the same
		d.Timestamp = ts
		if res, err := db.Save(ctx, d); !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("Save at %v = %+v, %v; want ErrInvalid", ts, res, err)
		}
		if _, err := db.Register(ctx, reg("reg", "https://example.org/", ts)); ts.IsZero() != (err == nil) {
			t.Errorf("Register at %v = %v; want ErrInvalid (nil for the zero time)", ts, err)
		} else if err != nil && !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("Register at %v = %v; want ErrInvalid", ts, err)
		}
	}
	for i, ts := range in {
		res := MustSave(t, db, Doc("news", 0, Item("a", "A"), Item("edge", fmt.Sprint("Edge ", i))))
		d := Doc("edge", 0, Item("a", fmt.Sprint("A", i)))
		d.Timestamp = ts
		MustSave(t, db, d)
		if _, vi, err := db.Version(ctx, "edge", 1); err != nil || !vi.Timestamp.Equal(ts) {
			t.Errorf("Version of a save at %v = %+v, %v (save %+v)", ts, vi, err, res)
		}
		mustRegister(t, db, reg("reg", "https://example.org/", ts))
	}
	if info, err := db.Resource(ctx, "news"); err != nil || info.Versions != 4 {
		t.Errorf("Resource = %+v, %v; want 4 versions", info, err)
	}
	MustCheck(t, db)
}

// testItemIDLimit: an item id longer than storage.MaxItemIDLen bytes is
// refused with ErrInvalid (one of exactly that length is kept), whatever
// the driver's own key limits.
func testItemIDLimit(t *testing.T, open Opener) {
	db := open(t)
	ctx := context.Background()
	// Incompressible, so that no driver's compression hides the length.
	id := func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "%016x", uint64(i)*0x9e3779b97f4a7c15)
		}
		return b.String()[:n]
	}
	long := id(storage.MaxItemIDLen)
	for _, n := range []int{storage.MaxItemIDLen + 1, 70000} {
		_, err := db.Save(ctx, Doc("news", 0, Item("a", "A"), Item(id(n), "Long")))
		if !errors.Is(err, storage.ErrInvalid) || !strings.Contains(err.Error(), "item 2") {
			t.Errorf("Save with an item id of %d bytes = %v; want ErrInvalid naming item 2", n, err)
		}
	}
	MustSave(t, db, Doc("news", 0, Item("a", "A"), Item(long, "Long")))
	MustSave(t, db, Doc("news", 1, Item(long, "Longer")))
	items, err := db.Items(ctx, "news", storage.ItemQuery{})
	if err != nil || len(items) != 2 || items[1].ID != long || items[1].Title != "Longer" || items[1].Seq != 2 {
		t.Errorf("Items = %d items, %v", len(items), err)
	}
	MustCheck(t, db)
}
