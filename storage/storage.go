package storage

// CONTRACT STUB: the exported API below is what poller and api code against.
// The storage implementation replaces the bodies; signatures change only by agreement.

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
)

// ErrNotFound is returned for an unknown resource, a version past the history,
// or absent poll state.
var ErrNotFound = errors.New("storage: not found")

// Options configure a DB; the zero value is valid.
type Options struct {
	Logger     *slog.Logger  // badger's and the store's logs; nil discards
	GCInterval time.Duration // value-log GC period; 0 means a default
	InMemory   bool          // for tests: no files
}

// DB is the Badger-backed store. Safe for concurrent use.
type DB struct{}

// Open opens (creating if needed) the store in dir.
func Open(dir string, opts Options) (*DB, error) {
	return nil, errors.New("storage: not implemented yet")
}

// Close stops background work and closes Badger.
func (db *DB) Close() error { return nil }

// SaveResult says what Save did.
type SaveResult struct {
	Changed  bool   // false: same informational content as the latest version, nothing written
	Seq      uint64 // sequence number of the latest version after the save (1 = the first ever stored)
	Versions int    // versions now kept for the resource
}

// Save stores doc as the newest version of resource doc.RSSID unless its
// informational content equals the latest version's.
func (db *DB) Save(ctx context.Context, doc *schema.Document) (SaveResult, error) {
	return SaveResult{}, errors.New("storage: not implemented yet")
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
func (db *DB) Resources(ctx context.Context) ([]ResourceInfo, error) { return nil, nil }

// Resource describes one resource; ErrNotFound if it has no versions.
func (db *DB) Resource(ctx context.Context, id string) (ResourceInfo, error) {
	return ResourceInfo{}, ErrNotFound
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
	return nil, VersionInfo{}, ErrNotFound
}

// Versions lists versions newest first, skipping offset and returning at most limit.
func (db *DB) Versions(ctx context.Context, id string, offset, limit int) ([]VersionInfo, error) {
	return nil, ErrNotFound
}

// ItemQuery selects items aggregated over a resource's whole history.
type ItemQuery struct {
	Max   int          // at most this many; 0 = no limit
	Terms schema.Terms // keyword filter; empty = all
}

// Item is one item id's latest content, with when it was first and last seen.
type Item struct {
	schema.Item
	FirstSeen time.Time
	LastSeen  time.Time
	Seq       uint64 // the version its latest content came from
}

// Items returns items newest first by FirstSeen, one per item id, answered from the item index.
func (db *DB) Items(ctx context.Context, id string, q ItemQuery) ([]Item, error) {
	return nil, ErrNotFound
}

// PollState returns the poller's opaque persisted state; ErrNotFound if none.
func (db *DB) PollState(ctx context.Context, id string) ([]byte, error) { return nil, ErrNotFound }

// SavePollState replaces the poller's persisted state for a resource.
func (db *DB) SavePollState(ctx context.Context, id string, state []byte) error { return nil }

// Retention bounds a resource's history; zero fields mean unbounded.
type Retention struct {
	MaxVersions int
	MaxAge      time.Duration
}

// Prune drops versions beyond the retention (never the latest), keeping the
// item index consistent; it returns how many versions it removed.
func (db *DB) Prune(ctx context.Context, id string, r Retention, now time.Time) (int, error) {
	return 0, nil
}
