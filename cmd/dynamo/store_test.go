package main

import (
	"log/slog"
	"os"
	"testing"

	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/poller"
	"github.com/dynamo-rss/dynamo/storage/postgres/pgtest"
)

// TestMain starts a throwaway PostgreSQL only if a test asks for one.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// With PostgreSQL the poller is given a registry that tells of the other
// nodes' changes (poller.RegistryWatcher), so that a registration made
// through another node is applied at once, not at the next periodic
// re-read: what the store wrapper embeds must not hide it.
func TestPostgresRegistryTellsOfOtherNodes(t *testing.T) {
	cfg := &config.Config{NodeID: "n1", Storage: config.StorageConfig{Driver: config.DriverPostgres, DSN: pgtest.DSN(t)}}
	db, err := openStore(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}()
	// What serve gives the poller: the driver's registry, wrapped so that
	// deletions reach the WebSub hub.
	var reg poller.Registry = notifyingRegistry{Registry: db.registry(), c: &changes{}}
	w, ok := reg.(poller.RegistryWatcher)
	if !ok || w.RegistryChanged() == nil {
		t.Fatalf("the poller's registry, a %T, does not tell of other nodes' changes", reg)
	}
	// Nor what changed since a revision, which a node reads on each of them.
	rc, ok := reg.(poller.RegistryChanges)
	if !ok {
		t.Fatalf("the poller's registry, a %T, cannot tell what changed", reg)
	}
	if _, err := rc.RegistrationsSince(t.Context(), 0); err != nil {
		t.Fatalf("RegistrationsSince through the wrapper: %v", err)
	}
}
