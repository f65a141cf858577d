package badger_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		os.Exit(crashChild(dir)) // the child of TestCrashDurability: never returns
	}
	goleak.VerifyTestMain(m)
}

// t0 is the base of test timestamps.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

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

// it makes an item whose fields derive from id and title.
func it(id, title string) schema.Item {
	return schema.Item{ID: id, Title: title, Link: "https://example.org/a/" + id, Description: "about " + title}
}

// doc makes a valid document of resource id at t0+minutes with the items, indexed in order.
func doc(id string, minutes int, items ...schema.Item) *schema.Document {
	d := &schema.Document{
		URL:       "https://example.org/" + id + ".html",
		RSSID:     id,
		Timestamp: t0.Add(time.Duration(minutes) * time.Minute),
		Channel:   schema.Channel{Title: "Channel " + id, Link: "https://example.org/", Description: "News of " + id},
	}
	for i, x := range items {
		x.Index = i + 1
		d.Items = append(d.Items, x)
	}
	return d
}

func mustSave(t testing.TB, db *badger.DB, d *schema.Document) storage.SaveResult {
	t.Helper()
	res, err := db.Save(context.Background(), d)
	if err != nil {
		t.Fatalf("Save(%s @%v): %v", d.RSSID, d.Timestamp, err)
	}
	return res
}

func mustCheck(t testing.TB, db *badger.DB) {
	t.Helper()
	if err := db.Check(context.Background()); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

func ids(items []storage.Item) string {
	s := ""
	for i, x := range items {
		if i > 0 {
			s += ","
		}
		s += x.ID
	}
	return s
}

func seqs(vs []storage.VersionInfo) string {
	s := ""
	for i, v := range vs {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(v.Seq)
	}
	return s
}
