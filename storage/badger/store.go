package badger

// The exported API below is what poller and api code against; signatures
// change only by agreement. Implementation: db.go, save.go, query.go, prune.go, check.go.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// Options configure a DB; the zero value is valid.
type Options struct {
	Logger     *slog.Logger  // badger's and the store's logs; nil discards
	GCInterval time.Duration // value-log GC period; 0 means a default
	InMemory   bool          // for tests: no files

	// NoSyncWrites acknowledges saves before they reach the disk: faster,
	// but an OS crash or power loss may lose the last acknowledged saves
	// (never corrupt the store). Without it, every commit is synced through
	// the journal (see journal.go).
	NoSyncWrites bool
	// MemTableSize is Badger's memtable size in bytes; 0 means Badger's default (64 MiB).
	MemTableSize int64

	// MinFree is the free space, in bytes, below which writes are refused
	// with [storage.ErrDiskFull] instead of risking Badger's SIGBUS on a full disk;
	// 0 turns the check off. FreeSpace reads the free space (nil:
	// [StatfsFree]); SpaceInterval is how often it is re-read in the
	// background (0: 10 s). Writes check it themselves as well.
	MinFree       uint64
	FreeSpace     FreeSpaceFunc
	SpaceInterval time.Duration

	journalSegment   int64 // journal segment size; 0: defaultJournalSeg (tests set it)
	valueLogFileSize int64 // 0: 64 MiB (tests copying a store set less)
	// syncStore is the checkpoint of the store's directory that startJournal
	// makes and gives the journal; nil: syncFiles (tests count the calls).
	syncStore func(dir string) error
}

// DB is the Badger-backed store. Safe for concurrent use.
type DB struct {
	dir   string
	bdb   *bdg.DB
	poll  *bdg.DB // poll states, not synced: see openPollStore
	log   *slog.Logger
	locks keyedLocks
	infos infoCache   // storage.ResourceInfo of resources read lately; see infoCache
	space *spaceGuard // nil: no free-space check

	commits *committer // every write, batched into one transaction: see commit.go
	journal *journal   // nil with NoSyncWrites or InMemory: see journal.go
	// checkpoint makes every write Badger has done durable (syncFiles).
	checkpoint func() error
	hints      hashHints // latest content hashes, in part: see save.go
	live       liveIDs   // ids known not to be unregistered: see registry.go
	xmlBufs    sync.Pool // *[]byte: buffers for versions' XML before compression
	opsBufs    sync.Pool // *[]byte: buffers for a save's planned writes, reused once committed

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
	var j *journal
	if !opts.InMemory {
		if j, err = startJournal(dir, bdb, opts, log); err != nil {
			return nil, errors.Join(err, bdb.Close())
		}
	}
	poll, err := openPollStore(dir, opts, log)
	if err != nil {
		return nil, errors.Join(err, j.closeIfAny(), bdb.Close())
	}
	db := &DB{dir: dir, bdb: bdb, poll: poll, log: log, journal: j, stop: make(chan struct{}),
		checkpoint: func() error { return syncFiles(dir) }}
	db.commits = &committer{bdb: bdb, j: j, reqs: make(chan *commitReq), stop: db.stop}
	db.wg.Go(db.commits.run)
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
			errs = append(errs, fmt.Errorf("close badger: %w", err), db.journal.closeIfAny())
		} else if db.journal != nil {
			// Badger is closed; once its files are synced the journal
			// has nothing left to replay, and says so.
			if err := syncFiles(db.dir); err != nil {
				errs = append(errs, fmt.Errorf("close: sync store: %w", err), db.journal.close())
			} else if err := db.journal.closeClean(); err != nil {
				errs = append(errs, fmt.Errorf("close journal: %w", err))
			}
		}
		if err := db.poll.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close poll-state badger: %w", err))
		}
		db.closeErr = errors.Join(errs...)
	})
	return db.closeErr
}

// Save stores doc as the newest version of resource doc.RSSID unless its
// informational content equals the latest version's. An invalid document or
// id fails with an error wrapping [storage.ErrInvalid]. Saves of one resource are
// serialized; a nil error means the version is durable (unless
// [Options.NoSyncWrites]).
func (db *DB) Save(ctx context.Context, doc *schema.Document) (storage.SaveResult, error) {
	return db.save(ctx, doc)
}

// CommitStats reports how many transactions the committer committed and
// how many writes (saves, registrations, records, prune and purge steps)
// they held: concurrent writes share one synced commit (see commit.go), so
// writes/commits is the mean batch.
func (db *DB) CommitStats() (commits, saves uint64) {
	return db.commits.commits.Load(), db.commits.saves.Load()
}

// Resources lists every resource with stored versions, sorted by id.
func (db *DB) Resources(ctx context.Context) ([]storage.ResourceInfo, error) {
	return db.resources(ctx)
}

// Resource describes one resource; storage.ErrNotFound if it has no versions.
func (db *DB) Resource(ctx context.Context, id string) (storage.ResourceInfo, error) {
	return db.resource(ctx, id)
}

// Version returns the n-th newest version (1 = newest); storage.ErrNotFound past the history.
func (db *DB) Version(ctx context.Context, id string, n int) (*schema.Document, storage.VersionInfo, error) {
	return db.version(ctx, id, n)
}

// Versions lists versions newest first, skipping offset and returning at most
// limit (limit <= 0: all). storage.ErrNotFound for an unknown resource; a negative
// offset wraps storage.ErrInvalid.
func (db *DB) Versions(ctx context.Context, id string, offset, limit int) ([]storage.VersionInfo, error) {
	return db.versions(ctx, id, offset, limit)
}

// Items returns items newest first by FirstSeen, one per item id, answered from the item index.
func (db *DB) Items(ctx context.Context, id string, q storage.ItemQuery) ([]storage.Item, error) {
	return db.items(ctx, id, q)
}

// PollState returns the poller's opaque persisted state; storage.ErrNotFound if none.
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

// SavePollStateRecords replaces id's poll state and its progress, and in the
// same write appends recs to its poll history as records first, first+1, …,
// dropping the record keep before each: the history grows without being
// read back. first and keep must be positive; records numbered from 1
// start the history again, replacing any records left.
//
// The progress is a second, small value the poller keeps beside the state
// (what every poll changes: times, counters), so that a poll which changes
// nothing else writes that and its record only. A nil state leaves the
// stored one as it is; a nil progress deletes the stored one, as
// SavePollState does. Both are opaque to the store.
func (db *DB) SavePollStateRecords(ctx context.Context, id string, state, progress []byte, first uint64, recs [][]byte, keep uint64) error {
	return db.savePollStateRecords(ctx, id, state, progress, first, recs, keep)
}

// PollStateProgress returns id's poll state and its progress (nil when it
// has none; see SavePollStateRecords), read together; [storage.ErrNotFound]
// when it has no state.
func (db *DB) PollStateProgress(ctx context.Context, id string) (state, progress []byte, err error) {
	return db.pollStateProgress(ctx, id)
}

// PollRecords returns id's poll-history records, oldest first (none for an
// id without any).
func (db *DB) PollRecords(ctx context.Context, id string) ([][]byte, error) {
	return db.pollRecords(ctx, id)
}

// Prune drops versions beyond the retention (never the latest), keeping the
// item index consistent; it returns how many versions it removed.
func (db *DB) Prune(ctx context.Context, id string, r storage.Retention, now time.Time) (int, error) {
	return db.prune(ctx, id, r, now)
}

// Check verifies the whole store: every resource's metadata agrees with its
// versions (count, seq range, latest hash and channel), and its item index
// agrees with what those versions contain. It reads and parses every stored
// document, so it is slow on large stores; findings wrap [storage.ErrInconsistent].
func (db *DB) Check(ctx context.Context) error { return db.check(ctx) }
