package badger_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

// With an injected free-space function: below MinFree every write is
// refused with ErrDiskFull, reads go on, and writes resume by themselves.
func TestDiskFullRefusesWritesAndResumes(t *testing.T) {
	var free atomic.Uint64
	free.Store(1 << 30)
	dir := t.TempDir()
	db, err := badger.Open(dir, badger.Options{
		MemTableSize: 8 << 20,
		MinFree:      64 << 20,
		FreeSpace:    func(string) (uint64, error) { return free.Load(), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	mustSave(t, db, doc("news", 0, it("a", "Alpha")))
	if sp := db.Space(); sp.Low || sp.Free != 1<<30 || sp.MinFree != 64<<20 {
		t.Fatalf("space %+v", sp)
	}

	free.Store(10 << 20)
	_, err = db.Save(ctx, doc("news", 1, it("a", "Alpha"), it("b", "Beta")))
	if !errors.Is(err, storage.ErrDiskFull) {
		t.Fatalf("save on a full disk: %v, want ErrDiskFull", err)
	}
	if err := db.SavePollState(ctx, "news", []byte("state")); !errors.Is(err, storage.ErrDiskFull) {
		t.Fatalf("poll state on a full disk: %v, want ErrDiskFull", err)
	}
	if sp := db.Space(); !sp.Low || sp.Free != 10<<20 {
		t.Fatalf("space %+v, want low", sp)
	}
	// Serving goes on: what was stored is read as before.
	info, err := db.Resource(ctx, "news")
	if err != nil || info.Versions != 1 {
		t.Fatalf("resource during disk full: %+v %v", info, err)
	}

	free.Store(1 << 30)
	res := mustSave(t, db, doc("news", 2, it("a", "Alpha"), it("b", "Beta")))
	if !res.Changed || res.Seq != 2 {
		t.Fatalf("after space returned: %+v", res)
	}
	if db.Space().Low {
		t.Fatal("still low after space returned")
	}
	mustCheck(t, db)
}

// On a real, small file system (tmpfs): writing until the disk is almost
// full ends in ErrDiskFull, not in Badger's SIGBUS; every acknowledged
// version survives a reopen; freeing space lets writes resume.
func TestDiskFullOnRealFilesystem(t *testing.T) {
	dir := smallFilesystem(t, 160<<20)
	// Leave about 72 MiB: room for Badger's files, then the margin.
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, 88<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	opts := badger.Options{MemTableSize: 4 << 20, MinFree: 24 << 20, SpaceInterval: time.Hour}
	db, err := badger.Open(data, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var acked []storage.SaveResult
	var full error
	for i := 0; i < 10_000 && full == nil; i++ {
		res, err := db.Save(ctx, bulky("news", i))
		switch {
		case errors.Is(err, storage.ErrDiskFull):
			full = err
		case err != nil:
			t.Fatalf("save %d: %v (want success or ErrDiskFull)", i, err)
		default:
			acked = append(acked, res)
		}
	}
	if full == nil {
		t.Fatal("the disk never filled")
	}
	if len(acked) < 10 {
		t.Fatalf("only %d versions before disk full: the test's sizes are off", len(acked))
	}
	t.Logf("%d versions stored, then: %v", len(acked), full)
	if err := db.Close(); err != nil {
		t.Fatalf("close on a nearly full disk: %v", err)
	}

	db, err = badger.Open(data, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	info, err := db.Resource(ctx, "news")
	if err != nil || info.Versions != len(acked) || info.LatestSeq != acked[len(acked)-1].Seq {
		t.Fatalf("after reopen %+v %v, want %d versions", info, err, len(acked))
	}
	for n := 1; n <= len(acked); n += len(acked)/7 + 1 {
		if _, _, err := db.Version(ctx, "news", n); err != nil {
			t.Fatalf("version %d: %v", n, err)
		}
	}
	mustCheck(t, db)

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Save(ctx, bulky("news", 10_001)); err != nil {
		t.Fatalf("save after space returned: %v", err)
	}
}

// bulky is a document whose description does not compress, so the store grows.
func bulky(id string, n int) *schema.Document {
	b := make([]byte, 96<<10)
	_, _ = rand.Read(b) // crypto/rand never fails on Linux
	return doc(id, n, schema.Item{ID: "x", Title: "Item", Link: "https://example.org/x", Description: base64.StdEncoding.EncodeToString(b)})
}

// smallFilesystem mounts a tmpfs of size bytes for the test. It needs root
// (CI runs as root); elsewhere the test is skipped, unless
// DYNAMO_REQUIRE_VALIDATORS=1 asks that nothing be skipped.
func smallFilesystem(t *testing.T, size int) string {
	t.Helper()
	skip := func(format string, args ...any) {
		if os.Getenv("DYNAMO_REQUIRE_VALIDATORS") == "1" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	if os.Geteuid() != 0 {
		skip("a real small file system needs root to mount a tmpfs; run as root (CI does)")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.Itoa(size)); err != nil {
		skip("mount tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// An in-memory store has no disk to fill: MinFree is ignored there, and
// saves go on whatever the free-space function says.
func TestInMemoryIgnoresMinFree(t *testing.T) {
	db, err := badger.Open("", badger.Options{InMemory: true, MemTableSize: 8 << 20, MinFree: 64 << 20,
		FreeSpace: func(string) (uint64, error) { return 0, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if res := mustSave(t, db, doc("news", 0, it("a", "Alpha"))); !res.Changed || res.Seq != 1 {
		t.Fatalf("save in memory: %+v", res)
	}
	if sp := db.Space(); sp != (badger.Space{}) {
		t.Errorf("space %+v, want no guard", sp)
	}
}
