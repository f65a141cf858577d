package badger_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
	"github.com/dynamo-rss/dynamo/storage/storagetest"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		os.Exit(crashChild(dir)) // the child of TestCrashDurability: never returns
	}
	goleak.VerifyTestMain(m)
}

// t0 is the base of test timestamps.
var t0 = storagetest.T0

func openTest(t testing.TB) (*badger.DB, string) {
	t.Helper()
	dir := t.TempDir()
	db, err := badger.Open(dir, badger.Options{MemTableSize: 8 << 20})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db, dir
}

// The suite's helpers under the names the Badger-only tests use.
func it(id, title string) schema.Item { return storagetest.Item(id, title) }

func doc(id string, minutes int, items ...schema.Item) *schema.Document {
	return storagetest.Doc(id, minutes, items...)
}

func mustSave(t testing.TB, db storage.Store, d *schema.Document) storage.SaveResult {
	t.Helper()
	return storagetest.MustSave(t, db, d)
}

func mustCheck(t testing.TB, db storage.Store) {
	t.Helper()
	storagetest.MustCheck(t, db)
}

func ids(items []storage.Item) string { return storagetest.IDs(items) }

// TestContract runs the drivers' contract suite on Badger in a temporary directory.
func TestContract(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		db, _ := openTest(t)
		return db
	})
}
