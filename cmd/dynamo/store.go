package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
	leaser poller.Leaser // nil: one node polls everything
	// sessions keeps the browser sessions ended by a logout, for every
	// node sharing the store (both drivers have it).
	sessions storage.Sessions
	space    func() api.DiskSpace // nil: not shown on /
	where    string               // for the start-up log line
	// commits reports the embedded store's transactions and the writes
	// they held (group commit); nil for PostgreSQL.
	commits func() (transactions, writes uint64)
	badger  *badger.DB // the embedded store, nil for PostgreSQL: see notifyingBadger
}

// registry is the runtime registry the poller keeps registrations in: the
// driver's store itself, since this wrapper, which embeds only the
// storage.Store interface, would hide what only a driver has
// (PostgreSQL's word of other nodes' changes, poller.RegistryWatcher).
func (s *openedStore) registry() poller.Registry { return s.Store }

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
		return &openedStore{Store: st, leaser: st, sessions: st, where: "postgres"}, nil
	default:
		db, err := badger.Open(cfg.Storage.Path, badger.Options{
			Logger:       log,
			NoSyncWrites: !cfg.Storage.SyncWrites,
			MinFree:      uint64(cfg.Storage.MinFree), //nolint:gosec // validated non-negative
		})
		if err != nil {
			return nil, fmt.Errorf("open storage %s: %w", cfg.Storage.Path, err)
		}
		return &openedStore{Store: db, sessions: db, where: cfg.Storage.Path, space: func() api.DiskSpace {
			sp := db.Space()
			return api.DiskSpace{Low: sp.Low, Free: sp.Free, MinFree: sp.MinFree}
		}, commits: db.CommitStats, badger: db}, nil
	}
}

// registerCommitMetrics exports the embedded store's group commit: each
// transaction is one synced journal write, so writes per transaction is
// how many callers shared each sync.
func registerCommitMetrics(reg prometheus.Registerer, stats func() (uint64, uint64)) error {
	for _, c := range []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "dynamo_storage_commits_total",
			Help: "Transactions committed by the embedded store (with sync_writes, one synced journal write each).",
		}, func() float64 { t, _ := stats(); return float64(t) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "dynamo_storage_commit_writes_total",
			Help: "Writes (saves, registrations, records, prunes) those transactions held.",
		}, func() float64 { _, w := stats(); return float64(w) }),
	} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register storage metrics: %w", err)
		}
	}
	return nil
}
