package storage

import (
	"context"
	"errors"
	"time"

	"github.com/dynamo-rss/dynamo/schema"
)

// ErrNotFound is returned for an unknown resource, a version past the history,
// absent poll state, or an unknown registration.
var ErrNotFound = errors.New("storage: not found")

// ErrInvalid is wrapped by errors about input the store refuses: a resource
// id with illegal bytes, a document that fails [schema.Document.Validate]
// (those errors also wrap [schema.ErrInvalid]), a negative offset.
var ErrInvalid = errors.New("storage: invalid input")

// ErrInconsistent is wrapped by every finding of [Store.Check].
var ErrInconsistent = errors.New("storage: inconsistent store")

// ErrGone is wrapped by the errors about a resource that was unregistered
// ([Store.Unregister]): its reads (Resource, Version, Versions, Items,
// PollState) and its writes (Save, SavePollState, Prune) fail with it until
// the id is registered again, so its feeds can answer 410 Gone and an
// in-flight poll cannot bring it back. An error that wraps ErrGone also
// matches [ErrNotFound] (errors.Is), so a caller that knows nothing of
// tombstones treats the resource as absent; check ErrGone first.
var ErrGone error = goneError{}

// goneError is ErrGone's type: comparable, and Is ErrNotFound.
type goneError struct{}

func (goneError) Error() string        { return "storage: resource gone" }
func (goneError) Is(target error) bool { return target == ErrNotFound } //nolint:errorlint // identity of the sentinel is what Is compares

// ErrUnavailable is wrapped by the errors of a store that cannot be
// reached (a database restarting, a network cut, no connection to be had
// before the context's deadline): nothing was read or written, and the same
// call may succeed once the store is back. The REST layer answers it with
// 503 and Retry-After, or from what it rendered before.
var ErrUnavailable = errors.New("storage: store unreachable")

// ErrDiskFull is returned by writes while the store has no room for them
// (for Badger: the free space of its file system is below its minimum).
// Nothing is written; the store stays consistent and readable, and writes
// succeed again by themselves once space returns.
var ErrDiskFull = errors.New("storage: disk full")

// Store is what every storage driver implements (storage/badger, the
// default, and storage/postgres); storage/storagetest is the contract suite
// both pass. Consumers (poller, api) still declare the few methods they use;
// cmd opens a driver and hands it to them. Implementations are safe for
// concurrent use. Every time a store returns is the instant it was given,
// to the nanosecond, in UTC (whatever zone it was given in).
type Store interface {
	// Save stores doc as the newest version of resource doc.RSSID unless its
	// informational content equals the latest version's (Changed false,
	// nothing written). A document [ValidateDocument] refuses (a bad id or
	// document, a timestamp outside [MinTime]…[MaxTime], the zero time
	// included, an item id over [MaxItemIDLen] bytes) fails with its error,
	// which wraps [ErrInvalid], even when its content is unchanged; a
	// resource that was unregistered fails with [ErrGone]. Saves of one
	// resource are serialized; a nil error means the version is durable as
	// the driver promises.
	Save(ctx context.Context, doc *schema.Document) (SaveResult, error)

	// Resources lists every resource with stored versions, sorted by id.
	Resources(ctx context.Context) ([]ResourceInfo, error)
	// Resource describes one resource; [ErrNotFound] if it has no versions.
	Resource(ctx context.Context, id string) (ResourceInfo, error)
	// Version returns the n-th newest version (1 = newest); [ErrNotFound]
	// past the history.
	Version(ctx context.Context, id string, n int) (*schema.Document, VersionInfo, error)
	// Versions lists versions newest first, skipping offset and returning at
	// most limit (limit <= 0: all). [ErrNotFound] for an unknown resource; a
	// negative offset wraps [ErrInvalid].
	Versions(ctx context.Context, id string, offset, limit int) ([]VersionInfo, error)
	// Items returns items newest first by FirstSeen, one per item id,
	// aggregated over the resource's whole kept history.
	Items(ctx context.Context, id string, q ItemQuery) ([]Item, error)

	// PollState returns the poller's opaque persisted state; [ErrNotFound] if none.
	PollState(ctx context.Context, id string) ([]byte, error)
	// SavePollState replaces the poller's persisted state for a resource.
	SavePollState(ctx context.Context, id string, state []byte) error

	// Prune drops versions beyond the retention (never the latest), keeping
	// the item index consistent; it returns how many versions it removed.
	// MaxAge keeps a version exactly that old (its timestamp ≥ now−MaxAge).
	// Sequence numbers are never reused. A zero Retention keeps everything:
	// Prune returns 0 and nil at once, without looking at the resource
	// (an unknown or unregistered id included).
	Prune(ctx context.Context, id string, r Retention, now time.Time) (int, error)
	// Check verifies the whole store; findings wrap [ErrInconsistent].
	Check(ctx context.Context) error

	// Registrations reads every resource registered at run time, sorted by
	// id, with the registry's revision the read saw.
	Registrations(ctx context.Context) (RegistrySnapshot, error)
	// Register stores reg, replacing a registration of the same id (whose
	// Registered time is kept), and says whether the id is new and the
	// change's revision, higher than that of every change committed before
	// it. A registration [ValidateRegistration] refuses fails with its
	// error (wrapping [ErrInvalid]); a zero time is kept as unknown.
	Register(ctx context.Context, reg Registration) (RegisterResult, error)
	// Unregister removes the registration and everything stored for the
	// resource (versions, item index, poll state) and leaves a tombstone:
	// from then on the id's reads and writes fail with [ErrGone] and
	// [Store.Resources] omits it, until Register clears the tombstone. The
	// tombstone keeps only the last sequence number used, so a resource
	// registered again continues after it: seq numbers (the GUIDs and
	// permalinks of versions) are never reused for an id. An id that is not
	// registered but has a stored history (a resource the file no longer
	// declares) is removed the same way. [ErrNotFound] when the id is
	// neither registered nor stored; an id already unregistered fails with
	// [ErrGone] (which matches ErrNotFound too). It returns the change's
	// revision, as Register does.
	Unregister(ctx context.Context, id string) (Revision, error)

	// RecordStore keeps other features' records (push subscriptions).
	RecordStore

	// Close releases the store; calls after the first return its result.
	Close() error
}

// SaveResult says what Save did.
type SaveResult struct {
	Changed  bool   // false: same informational content as the latest version, nothing written
	Seq      uint64 // sequence number of the latest version after the save (1 = the first ever stored)
	Versions int    // versions now kept for the resource
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

// VersionInfo describes one stored version without its document.
type VersionInfo struct {
	Seq         uint64
	Timestamp   time.Time
	Title       string // channel title
	Description string // channel description
	Items       int
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

// Retention bounds a resource's history; zero fields mean unbounded.
type Retention struct {
	MaxVersions int
	MaxAge      time.Duration
}
