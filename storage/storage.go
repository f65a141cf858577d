package storage

// The exported API below is what poller and api code against; signatures
// change only by agreement. Implementation: db.go, save.go, query.go, prune.go, check.go.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/dynamo-rss/dynamo/schema"
)

// ErrNotFound is returned for an unknown resource, a version past the history,
// or absent poll state.
var ErrNotFound = errors.New("storage: not found")

// ErrInvalid is wrapped by errors about input the store refuses: a resource
// id with illegal bytes, a document that fails [schema.Document.Validate]
// (those errors also wrap [schema.ErrInvalid]), a negative offset.
var ErrInvalid = errors.New("storage: invalid input")

// ErrInconsistent is wrapped by every finding of [DB.Check].
var ErrInconsistent = errors.New("storage: inconsistent store")

// Options configure a DB; the zero value is valid.
type Options struct {
	Logger     *slog.Logger  // badger's and the store's logs; nil discards
	GCInterval time.Duration // value-log GC period; 0 means a default
	InMemory   bool          // for tests: no files

	// NoSyncWrites acknowledges saves before they reach the disk: faster,
	// but a crash may lose the last acknowledged saves (never corrupt the store).
	NoSyncWrites bool
	// MemTableSize is Badger's memtable size in bytes; 0 means Badger's default (64 MiB).
	MemTableSize int64

	// MinFree is the free space, in bytes, below which writes are refused
	// with [ErrDiskFull] instead of risking Badger's SIGBUS on a full disk;
	// 0 turns the check off. FreeSpace reads the free space (nil:
	// [StatfsFree]); SpaceInterval is how often it is re-read in the
	// background (0: 10 s). Writes check it themselves as well.
	MinFree       uint64
	FreeSpace     FreeSpaceFunc
	SpaceInterval time.Duration
}

// DB is the Badger-backed store. Safe for concurrent use.
type DB struct {
	bdb   *badger.DB
	poll  *badger.DB // poll states, not synced: see openPollStore
	log   *slog.Logger
	locks keyedLocks
	infos infoCache   // ResourceInfo of resources read lately; see infoCache
	space *spaceGuard // nil: no free-space check

	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating if needed) the store in dir. The caller owns the DB
// and must [DB.Close] it, which stops its value-log GC goroutine.
func Open(dir string, opts Options) (*DB, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	bdb, err := openBadger(dir, opts, log)
	if err != nil {
		return nil, err
	}
	poll, err := openPollStore(dir, opts, log)
	if err != nil {
		return nil, errors.Join(err, bdb.Close())
	}
	db := &DB{bdb: bdb, poll: poll, log: log, stop: make(chan struct{})}
	if !opts.InMemory && opts.MinFree > 0 {
		free := opts.FreeSpace
		if free == nil {
			free = StatfsFree
		}
		db.space = &spaceGuard{dir: dir, min: opts.MinFree, free: free, log: log}
		_ = db.space.check() // know the state from the start; writers check again
		every := opts.SpaceInterval
		if every <= 0 {
			every = defaultSpaceInterval
		}
		db.wg.Add(1)
		go db.space.run(every, db.stop, db.wg.Done)
	}
	if !opts.InMemory {
		interval := opts.GCInterval
		if interval <= 0 {
			interval = defaultGCInterval
		}
		db.wg.Add(1)
		go db.runGC(interval, db.stop)
	}
	return db, nil
}

// Close stops background work and closes Badger. Calls after the first return its result.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		close(db.stop)
		db.wg.Wait()
		var errs []error
		if err := db.bdb.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close badger: %w", err))
		}
		if err := db.poll.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close poll-state badger: %w", err))
		}
		db.closeErr = errors.Join(errs...)
	})
	return db.closeErr
}

// SaveResult says what Save did.
type SaveResult struct {
	Changed  bool   // false: same informational content as the latest version, nothing written
	Seq      uint64 // sequence number of the latest version after the save (1 = the first ever stored)
	Versions int    // versions now kept for the resource
}

// Save stores doc as the newest version of resource doc.RSSID unless its
// informational content equals the latest version's. An invalid document or
// id fails with an error wrapping [ErrInvalid]. Saves of one resource are
// serialized; a nil error means the version is durable (unless
// [Options.NoSyncWrites]).
func (db *DB) Save(ctx context.Context, doc *schema.Document) (SaveResult, error) {
	return db.save(ctx, doc)
}

// ResourceInfo describes a resource (a collection) and its latest version.
type ResourceInfo struct {
	ID          string
	URL         string
	Created     time.Time // first version stored
	Updated     time.Time // timestamp of the latest version
	Versions    int       // versions kept
	LatestSeq   uint64
	Title       string // channel title of the latest version
	Description string // channel description of the latest version
	Hash        schema.Hash
}

// Resources lists every resource with stored versions, sorted by id.
func (db *DB) Resources(ctx context.Context) ([]ResourceInfo, error) { return db.resources(ctx) }

// Resource describes one resource; ErrNotFound if it has no versions.
func (db *DB) Resource(ctx context.Context, id string) (ResourceInfo, error) {
	return db.resource(ctx, id)
}

// VersionInfo describes one stored version without its document.
type VersionInfo struct {
	Seq         uint64
	Timestamp   time.Time
	Title       string // channel title
	Description string // channel description
	Items       int
}

// Version returns the n-th newest version (1 = newest); ErrNotFound past the history.
func (db *DB) Version(ctx context.Context, id string, n int) (*schema.Document, VersionInfo, error) {
	return db.version(ctx, id, n)
}

// Versions lists versions newest first, skipping offset and returning at most
// limit (limit <= 0: all). ErrNotFound for an unknown resource; a negative
// offset wraps ErrInvalid.
func (db *DB) Versions(ctx context.Context, id string, offset, limit int) ([]VersionInfo, error) {
	return db.versions(ctx, id, offset, limit)
}

// ItemQuery selects items aggregated over a resource's whole history.
type ItemQuery struct {
	Max   int          // at most this many; 0 = no limit
	Terms schema.Terms // keyword filter; empty = all
}

// Item is one item id's latest content, with when it was first and last seen.
// Its Index is its position in the last version it was seen in.
type Item struct {
	schema.Item
	FirstSeen time.Time
	LastSeen  time.Time
	Seq       uint64 // the version its latest content came from
}

// Items returns items newest first by FirstSeen, one per item id, answered from the item index.
func (db *DB) Items(ctx context.Context, id string, q ItemQuery) ([]Item, error) {
	return db.items(ctx, id, q)
}

// PollState returns the poller's opaque persisted state; ErrNotFound if none.
func (db *DB) PollState(ctx context.Context, id string) ([]byte, error) {
	return db.pollState(ctx, id)
}

// SavePollState replaces the poller's persisted state for a resource. Unlike
// versions, poll states are not synced to disk: they survive a process crash
// but an OS crash or power loss may lose the last ones (a restarted poller
// then polls a little early), which keeps a 304 poll free of an fsync.
func (db *DB) SavePollState(ctx context.Context, id string, state []byte) error {
	return db.savePollState(ctx, id, state)
}

// Retention bounds a resource's history; zero fields mean unbounded.
type Retention struct {
	MaxVersions int
	MaxAge      time.Duration
}

// Prune drops versions beyond the retention (never the latest), keeping the
// item index consistent; it returns how many versions it removed.
func (db *DB) Prune(ctx context.Context, id string, r Retention, now time.Time) (int, error) {
	return db.prune(ctx, id, r, now)
}

// Check verifies the whole store: every resource's metadata agrees with its
// versions (count, seq range, latest hash and channel), and its item index
// agrees with what those versions contain. It reads and parses every stored
// document, so it is slow on large stores; findings wrap [ErrInconsistent].
func (db *DB) Check(ctx context.Context) error { return db.check(ctx) }
