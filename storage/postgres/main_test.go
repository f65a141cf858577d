package postgres_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dynamo-rss/dynamo/poller"
	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/postgres"
	"github.com/dynamo-rss/dynamo/storage/postgres/pgtest"
)

func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// The store is what the poller and the API consume.
var (
	_ poller.Store           = (*postgres.Store)(nil)
	_ poller.Leaser          = (*postgres.Store)(nil)
	_ poller.Registry        = (*postgres.Store)(nil)
	_ poller.RegistryChanges = (*postgres.Store)(nil)
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// openAt opens a store on dsn as node name, closed when t ends.
func openAt(t testing.TB, dsn, name string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn, postgres.Options{NodeID: name})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// openTest opens a store on a fresh database.
func openTest(t testing.TB) *postgres.Store { return openAt(t, pgtest.DSN(t), "node") }

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

func mustSave(t testing.TB, s interface {
	Save(context.Context, *schema.Document) (storage.SaveResult, error)
}, d *schema.Document) storage.SaveResult {
	t.Helper()
	res, err := s.Save(context.Background(), d)
	if err != nil {
		t.Fatalf("Save(%s @%v): %v", d.RSSID, d.Timestamp, err)
	}
	return res
}

func mustCheck(t testing.TB, s *postgres.Store) {
	t.Helper()
	if err := s.Check(context.Background()); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

var _ storage.Store = (*postgres.Store)(nil)
