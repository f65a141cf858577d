package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/internal/syncbuf"
	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
	"github.com/dynamo-rss/dynamo/storage/postgres"
	"github.com/dynamo-rss/dynamo/storage/postgres/pgtest"
)

// reader is what both stores answer, for the differential test.
type reader interface {
	Save(context.Context, *schema.Document) (storage.SaveResult, error)
	Resources(context.Context) ([]storage.ResourceInfo, error)
	Resource(context.Context, string) (storage.ResourceInfo, error)
	Version(context.Context, string, int) (*schema.Document, storage.VersionInfo, error)
	Versions(context.Context, string, int, int) ([]storage.VersionInfo, error)
	Items(context.Context, string, storage.ItemQuery) ([]storage.Item, error)
	Prune(context.Context, string, storage.Retention, time.Time) (int, error)
	PollState(context.Context, string) ([]byte, error)
	SavePollState(context.Context, string, []byte) error
}

// The PostgreSQL store answers every read exactly as the Badger store does,
// through a random history of saves (new, returning, edited and vanishing
// items, unchanged documents, Unicode text), prunes and poll states.
func TestAnswersAsTheBadgerStoreDoes(t *testing.T) {
	ctx := context.Background()
	pg := openTest(t)
	bdb, err := badger.Open(t.TempDir(), badger.Options{MemTableSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bdb.Close() }) // test teardown; Check ran before
	stores := [2]reader{bdb, pg}

	rng := rand.New(rand.NewPCG(7, 11))
	words := []string{"Straße", "STRASSE", "news", "Ünïcode", "council", "ΣΊΣΥΦΟΣ", "σίσυφος", "budget", "Park", "park"}
	ids := []string{"a", "b", "ville/news", "é"}
	minute := 0
	itemOf := func(n int) schema.Item {
		x := it(fmt.Sprintf("i%d", n), words[rng.IntN(len(words))]+" "+words[rng.IntN(len(words))])
		if rng.IntN(4) == 0 {
			x.Image = &schema.Image{Title: "img", Link: "https://example.org/", URL: "https://example.org/i.png"}
		}
		if rng.IntN(4) == 0 {
			x.Extensions = schema.Extensions{{URI: "http://purl.org/dc/elements/1.1/", Prefix: "dc", LocalName: "date", Value: "2026-03-01"}}
		}
		return x
	}
	last := map[string]*schema.Document{}
	same := func(what string, f func(s reader) (any, error)) {
		t.Helper()
		var got [2]any
		var errs [2]error
		for i, s := range stores {
			got[i], errs[i] = f(s)
		}
		if (errs[0] == nil) != (errs[1] == nil) || errs[0] != nil && errors.Is(errs[0], storage.ErrNotFound) != errors.Is(errs[1], storage.ErrNotFound) {
			t.Fatalf("%s: badger error %v, postgres error %v", what, errs[0], errs[1])
		}
		if !reflect.DeepEqual(got[0], got[1]) {
			t.Fatalf("%s:\nbadger   %+v\npostgres %+v", what, got[0], got[1])
		}
	}
	for step := range 120 {
		id := ids[rng.IntN(len(ids))]
		minute += 1 + rng.IntN(30)
		switch op := rng.IntN(10); {
		case op < 6 || last[id] == nil:
			var d *schema.Document
			if prev := last[id]; prev != nil && rng.IntN(5) == 0 {
				c := *prev // same content, later: unchanged
				c.Timestamp = t0.Add(time.Duration(minute) * time.Minute)
				d = &c
			} else {
				var items []schema.Item
				for n := range 12 {
					if rng.IntN(2) == 0 {
						items = append(items, itemOf(n))
					}
				}
				rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
				d = doc(id, minute, items...)
			}
			last[id] = d
			same(fmt.Sprintf("step %d Save", step), func(s reader) (any, error) { return s.Save(ctx, d) })
		case op < 8:
			r := storage.Retention{MaxVersions: rng.IntN(4), MaxAge: time.Duration(rng.IntN(3)) * time.Hour}
			now := t0.Add(time.Duration(minute) * time.Minute)
			same(fmt.Sprintf("step %d Prune %+v", step, r), func(s reader) (any, error) { return s.Prune(ctx, id, r, now) })
		default:
			st := []byte(fmt.Sprint("state", step))
			same(fmt.Sprintf("step %d SavePollState", step), func(s reader) (any, error) { return nil, s.SavePollState(ctx, id, st) })
		}
		same("Resources", func(s reader) (any, error) { return s.Resources(ctx) })
		for _, id := range append(ids, "unknown") {
			same("Resource "+id, func(s reader) (any, error) { return s.Resource(ctx, id) })
			same("PollState "+id, func(s reader) (any, error) { return s.PollState(ctx, id) })
			for n := range 6 {
				same(fmt.Sprintf("Version %s %d", id, n), func(s reader) (any, error) {
					d, vi, err := s.Version(ctx, id, n)
					return []any{d, vi}, err
				})
			}
			for _, ol := range [][2]int{{0, 0}, {1, 2}, {3, 0}, {10, 1}} {
				same(fmt.Sprintf("Versions %s %v", id, ol), func(s reader) (any, error) { return s.Versions(ctx, id, ol[0], ol[1]) })
			}
			queries := []storage.ItemQuery{
				{}, {Max: 3},
				{Terms: schema.Terms{schema.NewTerm(schema.And, schema.FieldTitle, "strasse")}},
				{Max: 2, Terms: schema.Terms{schema.NewTerm(schema.And, schema.FieldTitle, "PARK"), schema.NewTerm(schema.Or, schema.FieldDescription, "σίσυφος")}},
				{Max: 1, Terms: schema.Terms{schema.NewTerm(schema.And, schema.FieldTitle, "\xbc"), schema.NewTerm(schema.Or, schema.FieldTitle, "park")}},
				{Terms: schema.Terms{schema.NewTerm(schema.And, schema.FieldLink, "i1"), schema.NewTerm(schema.And, schema.FieldTitle, "news"), schema.NewTerm(schema.Or, schema.FieldTitle, "")}},
			}
			for _, q := range queries {
				same(fmt.Sprintf("Items %s %+v", id, q), func(s reader) (any, error) { return s.Items(ctx, id, q) })
			}
		}
	}
	if err := bdb.Check(ctx); err != nil {
		t.Fatalf("badger Check: %v", err)
	}
	mustCheck(t, pg)
}

func TestRefusesInvalidInput(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	bad := doc("x", 0, it("a", "A"), it("a", "again"))
	if _, err := s.Save(ctx, bad); !errors.Is(err, storage.ErrInvalid) || !errors.Is(err, schema.ErrInvalid) {
		t.Fatalf("Save(duplicate item ids) = %v, want ErrInvalid and schema.ErrInvalid", err)
	}
	if _, err := s.Save(ctx, doc("bad\x01id", 0)); !errors.Is(err, storage.ErrInvalid) {
		t.Fatalf("Save(control character in id) = %v, want ErrInvalid", err)
	}
	if _, err := s.Save(ctx, nil); !errors.Is(err, storage.ErrInvalid) {
		t.Fatalf("Save(nil) = %v, want ErrInvalid", err)
	}
	old := doc("x", 0)
	old.Timestamp = time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := s.Save(ctx, old); !errors.Is(err, storage.ErrInvalid) {
		t.Fatalf("Save(year 1000) = %v, want ErrInvalid", err)
	}
	if _, err := s.Versions(ctx, "x", -1, 0); !errors.Is(err, storage.ErrInvalid) && !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Versions(-1) = %v", err)
	}
	if _, err := s.Resource(ctx, ""); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Resource(\"\") = %v, want ErrNotFound", err)
	}
	mustCheck(t, s)
}

// Saves of one resource from several nodes at once are serialized: every
// changed document gets its own seq, 1…n without gaps, and the index agrees.
func TestConcurrentSavesFromSeveralNodes(t *testing.T) {
	dsn := pgtest.DSN(t)
	nodes := []*postgres.Store{openAt(t, dsn, "n1"), openAt(t, dsn, "n2"), openAt(t, dsn, "n3")}
	const perNode = 15
	var wg sync.WaitGroup
	errs := make(chan error, len(nodes)*perNode)
	for k, s := range nodes {
		wg.Go(func() {
			for i := range perNode {
				d := doc("shared", k*perNode+i, it(fmt.Sprintf("n%d-%d", k, i), "from node"), it("common", fmt.Sprint("edit ", k, i)))
				if _, err := s.Save(context.Background(), d); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	info, err := nodes[0].Resource(context.Background(), "shared")
	if err != nil {
		t.Fatal(err)
	}
	if info.LatestSeq != uint64(len(nodes)*perNode) || info.Versions != len(nodes)*perNode {
		t.Fatalf("latest seq %d, %d versions; want %d of each", info.LatestSeq, info.Versions, len(nodes)*perNode)
	}
	items, err := nodes[1].Items(context.Background(), "shared", storage.ItemQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != len(nodes)*perNode+1 {
		t.Fatalf("%d items, want %d", len(items), len(nodes)*perNode+1)
	}
	mustCheck(t, nodes[2])
}

// Nodes starting together on an empty database migrate it once, and say
// so once; a node opening it later has nothing to migrate and says nothing.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	var logs syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var wg sync.WaitGroup
	stores := make([]*postgres.Store, 4)
	errs := make([]error, len(stores))
	for i := range stores {
		wg.Go(func() {
			stores[i], errs[i] = postgres.Open(context.Background(), dsn, postgres.Options{Logger: logger})
		})
	}
	wg.Wait()
	for i, s := range stores {
		if errs[i] != nil {
			t.Fatalf("Open %d: %v", i, errs[i])
		}
		t.Cleanup(func() { _ = s.Close() }) // Close never fails
	}
	mustSave(t, stores[0], doc("r", 0, it("a", "A")))
	if _, err := stores[3].Resource(context.Background(), "r"); err != nil {
		t.Fatal(err)
	}
	migrated := regexp.MustCompile(`msg="database schema migrated" from=0 to=[1-9]`)
	if n := len(migrated.FindAllString(logs.String(), -1)); n != 1 || strings.Count(logs.String(), "schema migrated") != 1 {
		t.Errorf("%d migrations from an empty database logged, want 1:\n%s", n, logs.String())
	}
	later, err := postgres.Open(context.Background(), dsn, postgres.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	_ = later.Close()
	if n := strings.Count(logs.String(), "schema migrated"); n != 1 {
		t.Errorf("a later open logged a migration (%d in all):\n%s", n, logs.String())
	}
}
