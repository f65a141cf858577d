package badger

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	bdg "github.com/dgraph-io/badger/v4"
)

// setter is a commit fn writing value under key.
func setter(key string, value []byte) func(wtxn) error {
	return func(txn wtxn) error { return txn.Set([]byte(key), value) }
}

func request(fn func(wtxn) error) *commitReq {
	return &commitReq{fn: fn, done: make(chan error, 1)}
}

func readKey(t *testing.T, db *DB, key string) ([]byte, bool) {
	t.Helper()
	var v []byte
	err := db.bdb.View(func(txn *bdg.Txn) error {
		it, err := txn.Get([]byte(key))
		if err != nil {
			return err
		}
		v, err = it.ValueCopy(nil)
		return err
	})
	if errors.Is(err, bdg.ErrKeyNotFound) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return v, true
}

// One failing save in a batch fails alone: the others are committed, and
// what the failing one wrote before its error is not.
func TestCommitBatchIsolatesAFailure(t *testing.T) {
	db := openInternal(t)
	boom := errors.New("boom")
	batch := []*commitReq{
		request(setter("a", []byte("1"))),
		request(func(txn wtxn) error {
			if err := txn.Set([]byte("half"), []byte("written")); err != nil {
				return err
			}
			return boom
		}),
		request(setter("c", []byte("3"))),
	}
	db.commits.commit(batch)
	for i, want := range []error{nil, boom, nil} {
		if err := <-batch[i].done; !errors.Is(err, want) {
			t.Errorf("request %d: %v, want %v", i, err, want)
		}
	}
	for key, want := range map[string]bool{"a": true, "half": false, "c": true} {
		if _, ok := readKey(t, db, key); ok != want {
			t.Errorf("key %q stored: %v, want %v", key, ok, want)
		}
	}
	if commits, saves := db.CommitStats(); commits != 1 || saves != 2 {
		t.Errorf("CommitStats = %d commits, %d saves; want 1, 2", commits, saves)
	}
}

// A batch bigger than one Badger transaction is committed in parts; a
// single save too big for any transaction fails alone.
func TestCommitBatchTooBigIsSplit(t *testing.T) {
	db, err := Open(t.TempDir(), Options{MemTableSize: 1 << 20}) // transactions up to ~150 KB
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Values under the value-log threshold count in full.
	value := bytes.Repeat([]byte("x"), 1<<10)
	many := func(prefix string, n int) func(wtxn) error {
		return func(txn wtxn) error {
			for j := range n {
				if err := txn.Set([]byte(fmt.Sprint(prefix, "/", j)), value); err != nil {
					return err
				}
			}
			return setter(prefix, value)(txn)
		}
	}
	var batch []*commitReq
	for i := range 12 { // 12 × 30 KB
		batch = append(batch, request(many(fmt.Sprint("k", i), 30)))
	}
	huge := request(many("huge", 300))
	batch = append(batch, huge)
	db.commits.commit(batch)
	for i, r := range batch[:12] {
		if err := <-r.done; err != nil {
			t.Errorf("request %d: %v", i, err)
		}
		if v, ok := readKey(t, db, fmt.Sprint("k", i)); !ok || !bytes.Equal(v, value) {
			t.Errorf("k%d not stored", i)
		}
	}
	if err := <-huge.done; !errors.Is(err, bdg.ErrTxnTooBig) {
		t.Errorf("huge save: %v, want ErrTxnTooBig", err)
	}
	if commits, saves := db.CommitStats(); commits < 2 || saves != 12 {
		t.Errorf("CommitStats = %d commits, %d saves; want ≥ 2, 12", commits, saves)
	}
}

// Concurrent saves share commits, and every one is answered.
func TestCommitConcurrentSavesShareCommits(t *testing.T) {
	db := openInternal(t)
	const n = 64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			if err := db.commits.do(t.Context(), setter(fmt.Sprint("c", i), []byte("v"))); err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		if _, ok := readKey(t, db, fmt.Sprint("c", i)); !ok {
			t.Errorf("c%d not stored", i)
		}
	}
	if commits, saves := db.CommitStats(); saves != n || commits > n {
		t.Errorf("CommitStats = %d commits, %d saves; want ≤ %d, %d", commits, saves, n, n)
	}
}

func TestCommitAfterCloseFails(t *testing.T) {
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.commits.do(t.Context(), setter("late", nil)); !errors.Is(err, errClosed) {
		t.Fatalf("save after Close: %v, want errClosed", err)
	}
}

// A save that brings nothing new is answered without a commit, whether the
// store knows the latest hash from memory or reads it (after a restart).
func TestUnchangedSaveDoesNotCommit(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	if _, err := db.Save(ctx, testDoc("news", at, "a", "b")); err != nil {
		t.Fatal(err)
	}
	commits, _ := db.CommitStats()
	res, err := db.Save(ctx, testDoc("news", at.Add(time.Hour), "a", "b"))
	if err != nil || res.Changed || res.Seq != 1 || res.Versions != 1 {
		t.Fatalf("same content: %+v, %v", res, err)
	}
	if after, _ := db.CommitStats(); after != commits {
		t.Errorf("an unchanged save committed (%d → %d commits)", commits, after)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err = db.Save(ctx, testDoc("news", at.Add(2*time.Hour), "a", "b"))
	if err != nil || res.Changed || res.Seq != 1 {
		t.Fatalf("same content after a restart: %+v, %v", res, err)
	}
	if commits, _ := db.CommitStats(); commits != 0 {
		t.Errorf("an unchanged save after a restart committed %d times", commits)
	}
	res, err = db.Save(ctx, testDoc("news", at.Add(3*time.Hour), "a", "b", "c"))
	if err != nil || !res.Changed || res.Seq != 2 {
		t.Fatalf("new content: %+v, %v", res, err)
	}
}

// visible runs once the batch's writes are readable and before the caller
// is answered: a save drops its cached info there (see DB.Save).
func TestCommitVisibleBeforeAnswer(t *testing.T) {
	db := openInternal(t)
	var ran bool
	var readErr error
	err := db.commits.doVisible(t.Context(), setter("k", []byte("v")), func() {
		// On the committer's goroutine: no t.Fatal here.
		readErr = db.bdb.View(func(txn *bdg.Txn) error { _, err := txn.Get([]byte("k")); return err })
		ran = true
	})
	if err != nil {
		t.Fatal(err)
	}
	if !ran || readErr != nil {
		t.Errorf("visible ran %v, reading the write: %v; want it run, the write readable, before do returns", ran, readErr)
	}
}

// A save's cached info goes with the commit: Resource, read (and cached)
// before the save, shows the new version once Save returns.
func TestSaveRefreshesCachedInfo(t *testing.T) {
	db := openInternal(t)
	ctx := t.Context()
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		if _, err := db.Save(ctx, testDoc("r", ts.Add(time.Duration(i)*time.Minute), fmt.Sprint("item", i))); err != nil {
			t.Fatal(err)
		}
		info, err := db.Resource(ctx, "r") // cached from here until the next save
		if err != nil || info.LatestSeq != uint64(i+1) || info.Versions != i+1 {
			t.Fatalf("after save %d: %+v, %v", i+1, info, err)
		}
	}
}
