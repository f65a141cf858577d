package badger_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

func TestSaveDedup(t *testing.T) {
	base := func() *schema.Document { return doc("news", 0, it("a", "Alpha"), it("b", "Beta")) }
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
			db, _ := openTest(t)
			first := mustSave(t, db, base())
			if !first.Changed || first.Seq != 1 || first.Versions != 1 {
				t.Fatalf("first save = %+v, want changed seq 1", first)
			}
			d := base()
			tt.edit(d)
			res := mustSave(t, db, d)
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
			mustCheck(t, db)
		})
	}
}

func TestSaveRejectsBadInput(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	tests := []struct {
		name     string
		doc      *schema.Document
		schemaEr bool   // also wraps schema.ErrInvalid
		msg      string // the error mentions this
	}{
		{"nil document", nil, false, "nil document"},
		{"empty id", doc("", 0), false, "empty resource id"},
		{"NUL in id", doc("a\x00b", 0), false, "control character"},
		{"newline in id", doc("a\nb", 0), false, "control character"},
		{"DEL in id", doc("a\x7fb", 0), false, "control character"},
		{"C1 control in id", doc("a\u0085b", 0), false, "control character"},
		{"invalid UTF-8 id", doc("a\xffb", 0), false, "not UTF-8"},
		{"id too long", doc(strings.Repeat("x", storage.MaxIDLen+1), 0), false, "more than 256"},
		{"relative url", func() *schema.Document { d := doc("ok", 0); d.URL = "/x.html"; return d }(), true, "not an absolute URL"},
		{"duplicate item ids", doc("ok", 0, it("a", "A"), it("a", "B")), true, `duplicate id "a"`},
		{"illegal XML char", doc("ok", 0, it("a", "bell\x07")), true, "characters XML does not allow"},
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

func TestConcurrentSaves(t *testing.T) {
	const workers, each = 6, 15
	tests := []struct {
		name      string
		resources int // workers share resources round-robin
	}{
		{"same resource", 1},
		{"different resources", workers},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, _ := openTest(t)
			ctx := context.Background()
			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				seen = map[string]map[uint64]bool{}
				errs = make(chan error, workers*each)
			)
			for w := range workers {
				wg.Go(func() {
					id := "r" + string(rune('a'+w%tt.resources))
					for i := range each {
						d := doc(id, w*each+i, it("w", "worker"), it("n", "save "+string(rune('A'+w))+strings.Repeat("!", i)))
						res, err := db.Save(ctx, d)
						if err != nil {
							errs <- err
							return
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
			rs, err := db.Resources(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != tt.resources {
				t.Fatalf("%d resources, want %d", len(rs), tt.resources)
			}
			for _, r := range rs {
				want := workers * each / tt.resources
				if r.Versions != want || r.LatestSeq != uint64(want) || len(seen[r.ID]) != want {
					t.Errorf("%s: %d versions, latest %d, %d seqs seen; want %d", r.ID, r.Versions, r.LatestSeq, len(seen[r.ID]), want)
				}
			}
			mustCheck(t, db)
		})
	}
}

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

func TestPollState(t *testing.T) {
	db, _ := openTest(t)
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

func TestCanceledContext(t *testing.T) {
	db, _ := openTest(t)
	mustSave(t, db, doc("news", 0, it("a", "A")))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := db.Save(ctx, doc("news", 1, it("a", "B"))); !errors.Is(err, context.Canceled) {
		t.Errorf("Save = %v, want context.Canceled", err)
	}
	if _, err := db.Items(ctx, "news", storage.ItemQuery{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Items = %v, want context.Canceled", err)
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
