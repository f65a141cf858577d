package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/tern/v2/migrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// versionTable is where tern records the schema version.
const versionTable = "dynamo_schema_version"

// Options configure a Store; the zero value is valid.
type Options struct {
	// NodeID names this node in leases; "" means hostname:pid.
	NodeID string
	// Logger receives the store's logs; nil discards them.
	Logger *slog.Logger
	// MaxConns bounds the connection pool; 0 means the DSN's
	// pool_max_conns when it sets one, else [DefaultMaxConns]. The store
	// holds one more connection, outside the pool, to LISTEN for other
	// nodes' changes.
	MaxConns int32
}

// DefaultMaxConns is the pool size when neither Options.MaxConns nor the
// DSN's pool_max_conns sets one: 4 per CPU, at least 8 and at most 32.
//
// pgxpool's own default (the larger of 4 and the CPUs) is sized for
// CPU-bound work, but a node's connections mostly wait: on the network, on
// the database's disk, on another node's row lock; with 32 poller workers
// and dozens of concurrent feed requests whose renders miss the cache (a
// version, an items query), 4 connections queue requests behind one
// another (p99 grows with the queue) while the database has spare cores.
// More than 32 per node gains nothing (the database has the same cores
// whatever the number of clients) and N nodes × (pool + 1 listener) must
// fit under the server's max_connections (100 by default: three nodes of
// 32).
func DefaultMaxConns() int32 {
	return int32(min(max(8, 4*runtime.NumCPU()), 32))
}

// Store is the PostgreSQL-backed store. Safe for concurrent use, by any
// number of Stores in any number of processes sharing one database.
type Store struct {
	pool *pgxpool.Pool
	node string
	log  *slog.Logger

	cache      infoCache
	regs       regWatch // RegistryChanged's
	stopListen context.CancelFunc
	listenDone chan struct{} // closed when the listener has stopped

	closeOnce sync.Once
}

// defaultConnectTimeout bounds a new connection's setup when the DSN does
// not (connect_timeout).
const defaultConnectTimeout = 5 * time.Second

// Open connects to the database dsn names (a libpq URL or key=value string,
// as pgx parses it), brings its schema up to date (migrations embedded in
// the binary, applied under an advisory lock, so nodes starting together
// are safe) and returns the store. The caller must [Store.Close] it.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse dsn: %w", err) // pgx's message never repeats the password
	}
	if !strings.Contains(dsn, "connect_timeout") {
		// A database that does not answer (a network cut, a host down)
		// fails a request's connection after this long rather than at
		// the request's deadline, so a feed can be answered from the
		// cache or with a 503 within it.
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	switch {
	case opts.MaxConns > 0:
		cfg.MaxConns = opts.MaxConns
	case !strings.Contains(dsn, "pool_max_conns"):
		cfg.MaxConns = DefaultMaxConns()
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	s := &Store{pool: pool, node: opts.NodeID, log: opts.Logger, listenDone: make(chan struct{})}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.node == "" {
		s.node = DefaultNodeID()
	}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.stopListen = cancel
	go func() {
		defer close(s.listenDone)
		s.listen(lctx, cfg.ConnConfig.Copy())
	}()
	return s, nil
}

// DefaultNodeID is hostname:pid, the node id when none is configured.
func DefaultNodeID() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return host + ":" + strconv.Itoa(os.Getpid())
}

// NodeID is the name this store's leases carry.
func (s *Store) NodeID() string { return s.node }

// Close stops the listener and closes the connection pool; calls after the
// first do nothing.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.stopListen()
		<-s.listenDone
		s.pool.Close()
	})
	return nil
}

// migrate applies the embedded migrations not yet applied. tern takes a
// session advisory lock for the whole run, so concurrent Opens apply each
// migration once.
func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: connect: %w", err)
	}
	defer conn.Release()
	m, err := migrate.NewMigrator(ctx, conn.Conn(), versionTable)
	if err != nil {
		return fmt.Errorf("postgres: migrations: %w", err)
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("postgres: migrations: %w", err)
	}
	if err := m.LoadMigrations(sub); err != nil {
		return fmt.Errorf("postgres: load migrations: %w", err)
	}
	before, err := m.GetCurrentVersion(ctx)
	if err != nil {
		return fmt.Errorf("postgres: schema version: %w", err)
	}
	if int(before) > len(m.Migrations) {
		return fmt.Errorf("postgres: the database's schema is version %d, newer than this dynamo's %d: upgrade dynamo", before, len(m.Migrations))
	}
	// The migrations this node runs: tern calls OnStart under its lock, so
	// of nodes opening an empty database together only the one that
	// migrates it says so (before was read outside the lock).
	var ran []int32
	m.OnStart = func(seq int32, _, _, _ string) { ran = append(ran, seq) }
	if err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	if len(ran) > 0 {
		s.log.InfoContext(ctx, "database schema migrated", slog.Int("from", int(ran[0]-1)), slog.Int("to", int(ran[len(ran)-1])))
	}
	return nil
}

// inTx runs fn in a transaction, committing when it returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return classify(err)
	}
	if err := fn(tx); err != nil {
		return classify(errors.Join(err, rollback(ctx, tx)))
	}
	return classify(tx.Commit(ctx))
}

func rollback(ctx context.Context, tx pgx.Tx) error {
	err := tx.Rollback(context.WithoutCancel(ctx))
	if errors.Is(err, pgx.ErrTxClosed) {
		return nil
	}
	return err
}
