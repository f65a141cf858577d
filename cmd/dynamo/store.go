package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/dynamo-rss/dynamo/api"
	"github.com/dynamo-rss/dynamo/config"
	"github.com/dynamo-rss/dynamo/poller"
	"github.com/dynamo-rss/dynamo/storage"
	"github.com/dynamo-rss/dynamo/storage/badger"
	"github.com/dynamo-rss/dynamo/storage/postgres"
)

// openedStore is the store the configuration names, with what only some
// drivers have: Badger's free-space guard (one node, its own disk), and
// PostgreSQL's leases (several nodes sharing the database).
type openedStore struct {
	storage.Store
	leaser poller.Leaser        // nil: one node polls everything
	space  func() api.DiskSpace // nil: not shown on /
	where  string               // for the start-up log line
}

// postgresOpenTimeout bounds connecting and migrating at start-up.
const postgresOpenTimeout = 30 * time.Second

// openStore opens the configured storage driver.
func openStore(ctx context.Context, cfg *config.Config, log *slog.Logger) (*openedStore, error) {
	log = log.With(slog.String("component", "storage"))
	switch cfg.Storage.Driver {
	case config.DriverPostgres:
		ctx, cancel := context.WithTimeout(ctx, postgresOpenTimeout)
		defer cancel()
		st, err := postgres.Open(ctx, cfg.Storage.DSN, postgres.Options{NodeID: cfg.NodeID, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("open storage (postgres): %w", err)
		}
		return &openedStore{Store: st, leaser: st, where: "postgres"}, nil
	default:
		db, err := badger.Open(cfg.Storage.Path, badger.Options{
			Logger:       log,
			NoSyncWrites: !cfg.Storage.SyncWrites,
			MinFree:      uint64(cfg.Storage.MinFree), //nolint:gosec // validated non-negative
		})
		if err != nil {
			return nil, fmt.Errorf("open storage %s: %w", cfg.Storage.Path, err)
		}
		return &openedStore{Store: db, where: cfg.Storage.Path, space: func() api.DiskSpace {
			sp := db.Space()
			return api.DiskSpace{Low: sp.Low, Free: sp.Free, MinFree: sp.MinFree}
		}}, nil
	}
}
