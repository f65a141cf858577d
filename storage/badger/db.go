package badger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	bdg "github.com/dgraph-io/badger/v4"
	"github.com/dynamo-rss/dynamo/storage"
)

// defaultGCInterval is how often the value log is garbage-collected when
// [Options.GCInterval] is zero.
const defaultGCInterval = 10 * time.Minute

// gcDiscardRatio: rewrite a value-log file when at least this share of it is garbage.
const gcDiscardRatio = 0.5

func openBadger(dir string, opts Options, log *slog.Logger) (*bdg.DB, error) {
	bo := bdg.DefaultOptions(dir).
		WithLogger(slogLogger{log: log}).
		// Durability comes from the journal (journal.go), not from
		// Badger's own syncs.
		WithSyncWrites(false).
		// Saves of a resource are serialized by DB.locks and every
		// read-modify-write holds that lock, so Badger need not track reads.
		WithDetectConflicts(false).
		// Versions (a few KB once compressed) go to the value log, out of
		// the LSM tree; metadata, item entries and most item contents stay
		// in the tree, where scans are quick and compaction drops old copies.
		WithValueThreshold(2 << 10).
		// Value-log GC rewrites a whole file once half of it is garbage
		// (pruned versions): small files free space sooner than 1 GB ones,
		// and each synced commit msyncs a smaller mapping.
		WithValueLogFileSize(64 << 20).
		WithMetricsEnabled(false)
	if opts.MemTableSize > 0 {
		bo = bo.WithMemTableSize(opts.MemTableSize)
	}
	if opts.valueLogFileSize > 0 {
		bo = bo.WithValueLogFileSize(opts.valueLogFileSize)
	}
	if opts.InMemory {
		bo = bo.WithDir("").WithValueDir("").WithInMemory(true)
	}
	bdb, err := bdg.Open(bo)
	if err != nil {
		return nil, fmt.Errorf("open badger in %q: %w", dir, err)
	}
	return bdb, nil
}

// pollStateDir is the subdirectory of the poll-state store.
const pollStateDir = "pollstate"

// openPollStore opens the small store of poll states: a Badger of its own
// because its writes are not synced (one per poll, cheap to lose on an OS
// crash, while a synced commit costs an msync: most of a 304 poll's CPU).
// Its WAL is an mmap'd file, so a process crash loses nothing.
func openPollStore(dir string, opts Options, log *slog.Logger) (*bdg.DB, error) {
	path := filepath.Join(dir, pollStateDir)
	bo := bdg.DefaultOptions(path).
		WithLogger(slogLogger{log: log}).
		WithSyncWrites(false).
		WithDetectConflicts(false).
		WithMemTableSize(4 << 20).
		WithValueThreshold(64 << 10). // below what a 4 MiB memtable accepts
		WithBlockCacheSize(1 << 20).
		WithNumCompactors(2).
		WithMetricsEnabled(false)
	if opts.InMemory {
		bo = bo.WithDir("").WithValueDir("").WithInMemory(true)
	}
	bdb, err := bdg.Open(bo)
	if err != nil {
		return nil, fmt.Errorf("open poll-state badger in %q: %w", path, err)
	}
	return bdb, nil
}

// runGC collects the value log every interval until stop is closed.
func (db *DB) runGC(interval time.Duration, stop <-chan struct{}) {
	defer db.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if !db.collect(db.valueLogGC, stop) {
			return
		}
	}
}

// collect is one round of the value-log GC: gc (one file rewritten at
// most) is called again while it finds garbage. A full disk skips the
// round; an error other than "nothing to rewrite" is logged. It reports
// false when stop was closed during the round.
func (db *DB) collect(gc func() error, stop <-chan struct{}) bool {
	if db.space.check() != nil {
		return true // GC writes a new value-log file before it frees the old one
	}
	for {
		err := gc()
		if err == nil {
			select {
			case <-stop:
				return false
			default:
				continue
			}
		}
		if !errors.Is(err, bdg.ErrNoRewrite) && !errors.Is(err, bdg.ErrRejected) {
			db.log.Warn("value log gc", slog.Any("error", err))
		}
		return true
	}
}

// valueLogGC rewrites one value-log file if it is mostly garbage. The GC
// moves the live values of an old file into the current one (unsynced, as
// every Badger write here) and then deletes the old file. With the journal,
// the deletion must wait until the moved values are durable: Badger defers
// deleting a rewritten file while an iterator is open, so one is held until
// a checkpoint has synced the store.
func (db *DB) valueLogGC() error {
	if db.journal == nil {
		return db.bdb.RunValueLogGC(gcDiscardRatio)
	}
	txn := db.bdb.NewTransaction(false)
	it := txn.NewIterator(bdg.IteratorOptions{Prefix: []byte{0xff, 0xff}})
	defer txn.Discard()
	defer it.Close()
	err := db.bdb.RunValueLogGC(gcDiscardRatio)
	if err == nil {
		if cerr := db.checkpoint(); cerr != nil {
			return fmt.Errorf("checkpoint after value-log gc: %w", cerr)
		}
	}
	return err
}

// slogLogger adapts log/slog to bdg.Logger. Badger's messages are format
// strings, so they go into the "detail" attribute under a constant message.
type slogLogger struct{ log *slog.Logger }

func (l slogLogger) logf(level slog.Level, format string, args ...any) {
	ctx := context.Background() // badger passes no context
	if !l.log.Enabled(ctx, level) {
		return
	}
	l.log.LogAttrs(ctx, level, "badger", slog.String("detail", trimNewline(fmt.Sprintf(format, args...))))
}

func trimNewline(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
}

func (l slogLogger) Errorf(f string, a ...any)   { l.logf(slog.LevelError, f, a...) }
func (l slogLogger) Warningf(f string, a ...any) { l.logf(slog.LevelWarn, f, a...) }

// Infof logs at debug level: Badger's "info" is its internal bookkeeping
// (tables opened, discard stats, compactions), noise in an operator's log.
func (l slogLogger) Infof(f string, a ...any)  { l.logf(slog.LevelDebug, f, a...) }
func (l slogLogger) Debugf(f string, a ...any) { l.logf(slog.LevelDebug, f, a...) }

// keyedLocks holds one mutex per resource id in use, and forgets it when no
// one holds or waits for it, so memory stays bounded by concurrent callers.
type keyedLocks struct {
	mu    sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	mu   sync.Mutex
	refs int
}

func (k *keyedLocks) lock(id string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = make(map[string]*keyedLock)
	}
	l := k.locks[id]
	if l == nil {
		l = &keyedLock{}
		k.locks[id] = l
	}
	l.refs++
	k.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		k.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(k.locks, id)
		}
		k.mu.Unlock()
	}
}

// update runs fn in the committer's next transaction (see commit.go): every
// write to the store goes through it, and so through the journal. fn may run
// more than once.
func (db *DB) update(ctx context.Context, fn func(txn wtxn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.commits.do(ctx, fn)
}

// kv is one write of writeAll: value nil deletes key.
type kv struct{ key, value []byte }

// writeAll commits ops in order, in transactions of at most opsChunk (fewer
// when Badger finds that too big): a write too big for one transaction (a
// prune, a purge) is split, and an interruption leaves a prefix of ops
// written.
func (db *DB) writeAll(ctx context.Context, ops []kv) error {
	size := opsChunk
	for len(ops) > 0 {
		chunk := ops[:min(len(ops), size)]
		err := db.update(ctx, func(txn wtxn) error {
			write := setOrDelete(txn)
			for _, o := range chunk {
				if err := write(o.key, o.value); err != nil {
					return err
				}
			}
			return nil
		})
		if errors.Is(err, bdg.ErrTxnTooBig) && size > 1 {
			size /= 2 // a small memtable: smaller transactions
			continue
		}
		if err != nil {
			return err
		}
		ops = ops[len(chunk):]
	}
	return nil
}

// opsChunk bounds the writes writeAll puts in one transaction.
const opsChunk = 4096

// view runs fn in a read-only transaction.
func (db *DB) view(ctx context.Context, fn func(txn *bdg.Txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.bdb.View(fn)
}

// getMeta reads a resource's metadata; storage.ErrGone if it was
// unregistered, else storage.ErrNotFound if it has none, with a meta whose
// Latest is the last seq the id used before (0 for a new id).
func getMeta(txn *bdg.Txn, id string) (meta, error) {
	m, err := getMetaRecord(txn, id)
	if err == nil {
		if err = loadPresent(txn, id, &m); err != nil {
			return meta{}, fmt.Errorf("resource %q: %w", id, err)
		}
	}
	return m, err
}

// getMetaRecord is getMeta without the present list when that is in chunks
// (m.chunks says how many).
func getMetaRecord(txn *bdg.Txn, id string) (meta, error) {
	it, err := txn.Get(metaKey(id))
	if errors.Is(err, bdg.ErrKeyNotFound) {
		g, _, err := getGone(txn, id)
		if err != nil {
			return meta{}, err
		}
		if g.Gone {
			return meta{}, fmt.Errorf("resource %q: %w", id, storage.ErrGone)
		}
		return meta{Latest: g.LastSeq}, fmt.Errorf("resource %q: %w", id, storage.ErrNotFound)
	}
	if err != nil {
		return meta{}, fmt.Errorf("read metadata of %q: %w", id, err)
	}
	var m meta
	err = it.Value(func(v []byte) error {
		m, err = decodeMeta(v)
		return err
	})
	if err != nil {
		return meta{}, fmt.Errorf("resource %q: %w", id, err)
	}
	return m, nil
}

// readID validates an id given to a read; an invalid id names no resource,
// so the error wraps both storage.ErrInvalid and storage.ErrNotFound.
func readID(id string) error {
	if err := storage.ValidateID(id); err != nil {
		return fmt.Errorf("%w (%w)", storage.ErrNotFound, err)
	}
	return nil
}
