package badger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/dynamo-rss/dynamo/storage"
)

// TestCollect: one round of the value-log GC calls Badger's GC again while
// it rewrites a file, stops at "nothing to rewrite" without a word, warns
// of any other error once, and skips the round on a full disk (a rewrite
// writes a new file before it frees the old one).
func TestCollect(t *testing.T) {
	errIO := errors.New("read value log: input/output error")
	for _, tc := range []struct {
		name    string
		results []error // what each call of gc returns, in turn
		free    uint64  // bytes free (the minimum is 100)
		stop    bool    // stop closed before the round
		calls   int
		more    bool // collect's answer
		warning string
	}{
		{name: "garbage in three files", results: []error{nil, nil, nil, bdg.ErrNoRewrite}, free: 1000, calls: 4, more: true},
		{name: "nothing to rewrite", results: []error{bdg.ErrNoRewrite}, free: 1000, calls: 1, more: true},
		{name: "another GC running", results: []error{bdg.ErrRejected}, free: 1000, calls: 1, more: true},
		{name: "a failure after a rewrite", results: []error{nil, errIO}, free: 1000, calls: 2, more: true, warning: "input/output error"},
		{name: "a full disk", results: []error{nil}, free: 99, calls: 0, more: true},
		{name: "exactly the minimum free", results: []error{bdg.ErrNoRewrite}, free: 100, calls: 1, more: true},
		{name: "stopped after a rewrite", results: []error{nil, nil}, free: 1000, stop: true, calls: 1, more: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logged bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logged, nil))
			db := &DB{log: log, space: &spaceGuard{dir: t.TempDir(), min: 100, log: log,
				free: func(string) (uint64, error) { return tc.free, nil }}}
			calls := 0
			gc := func() error {
				calls++
				if calls > len(tc.results) {
					t.Fatalf("gc called %d times: once more after %v", calls, tc.results[len(tc.results)-1])
				}
				return tc.results[calls-1]
			}
			stop := make(chan struct{})
			if tc.stop {
				close(stop)
			}
			if more := db.collect(gc, stop); more != tc.more {
				t.Errorf("collect = %v, want %v", more, tc.more)
			}
			if calls != tc.calls {
				t.Errorf("gc called %d times, want %d", calls, tc.calls)
			}
			warned := strings.Count(logged.String(), "value log gc")
			switch {
			case tc.warning == "" && warned > 0:
				t.Errorf("warned of a GC that went well:\n%s", logged.String())
			case tc.warning != "" && (warned != 1 || !strings.Contains(logged.String(), tc.warning)):
				t.Errorf("want one warning naming %q, got:\n%s", tc.warning, logged.String())
			}
		})
	}
}

// A journal record bigger than one Badger transaction (a big purge, a
// version with many items) is replayed in several: every operation is
// applied, none dropped where one transaction ends and the next begins.
func TestApplyRecordBiggerThanATransaction(t *testing.T) {
	bdb, err := openBadger(t.TempDir(), Options{MemTableSize: 1 << 20}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	if err := bdb.Update(func(txn *bdg.Txn) error { return txn.Set([]byte("gone"), []byte("x")) }); err != nil {
		t.Fatal(err)
	}
	// Badger bounds a transaction by 15 % of the memtable and by a count
	// of writes derived from it: 6,000 small writes need several.
	const n = 6000
	value := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, 16+i%64) }
	var rec []byte
	for i := range n {
		rec = appendOp(rec, []byte(fmt.Sprintf("k/%04d", i)), value(i), false)
	}
	rec = appendOp(rec, []byte("gone"), nil, true)
	if err := applyRecord(bdb, rec); err != nil {
		t.Fatal(err)
	}
	err = bdb.View(func(txn *bdg.Txn) error {
		for i := range n {
			key := fmt.Sprintf("k/%04d", i)
			item, err := txn.Get([]byte(key))
			if err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			v, err := item.ValueCopy(nil)
			if err != nil || !bytes.Equal(v, value(i)) {
				return fmt.Errorf("%s: wrong value (%v)", key, err)
			}
		}
		if _, err := txn.Get([]byte("gone")); !errors.Is(err, bdg.ErrKeyNotFound) {
			return fmt.Errorf("the deleted key: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// errAfter is a context whose Err reports Canceled from its nth call on:
// a context that ends in the middle of a walk, at a chosen step.
type errAfter struct {
	context.Context
	n, calls int
}

func (c *errAfter) Err() error {
	c.calls++
	if c.n > 0 && c.calls >= c.n {
		return context.Canceled
	}
	return nil
}

// A prune's walk over the items it unindexes goes past ctxCheckEvery of
// them whole, and stops with the context's error when it ends midway.
func TestItemsBelowLongWalk(t *testing.T) {
	db := openInternal(t)
	ctx := context.Background()
	const n = ctxCheckEvery + 76
	titles := make([]string, n)
	for i := range titles {
		titles[i] = fmt.Sprintf("t%05d", i)
	}
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	if _, err := db.Save(ctx, testDoc("r", t0, titles...)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Save(ctx, testDoc("r", t0.Add(time.Hour), "other")); err != nil {
		t.Fatal(err)
	}
	whole := &errAfter{Context: ctx}
	gone, err := db.itemsBelow(whole, "r", 2)
	if err != nil || len(gone) != n {
		t.Fatalf("itemsBelow = %d items, %v; want %d", len(gone), err, n)
	}
	if whole.calls < 2 {
		t.Fatalf("the context was read %d times over %d items", whole.calls, n)
	}
	// Ending at the last read, the one inside the walk:
	if _, err := db.itemsBelow(&errAfter{Context: ctx, n: whole.calls}, "r", 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("itemsBelow with the context ending midway = %v, want context.Canceled", err)
	}
	if dropped, err := db.Prune(ctx, "r", storage.Retention{MaxVersions: 1}, t0.Add(2*time.Hour)); err != nil || dropped != 1 {
		t.Fatalf("Prune = %d, %v", dropped, err)
	}
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if gone, err := db.itemsBelow(ctx, "r", 3); err != nil || len(gone) != 0 {
		t.Fatalf("after the prune, itemsBelow = %d items, %v; want none", len(gone), err)
	}
}

// TestScanCheck: a scan looks at its context at every ctxCheckEvery-th key,
// and only then: a cancelled query stops within that many keys.
func TestScanCheck(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var scan scanCheck
	for round := range 3 {
		for i := 1; i <= ctxCheckEvery; i++ {
			err := scan.step(ctx)
			if want := i == ctxCheckEvery; (err != nil) != want || (want && !errors.Is(err, context.Canceled)) {
				t.Fatalf("round %d, key %d: step = %v", round+1, i, err)
			}
		}
	}
	var live scanCheck
	for i := range 3 * ctxCheckEvery {
		if err := live.step(t.Context()); err != nil {
			t.Fatalf("key %d of a live scan: %v", i+1, err)
		}
	}
}
