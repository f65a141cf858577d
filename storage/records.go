package storage

import "context"

// Record is one record of a [RecordStore]: a key and its opaque value.
type Record struct {
	Key   string
	Value []byte
}

// RecordStore keeps the small records of features built on the store (the
// WebSub hub's subscriptions and pending deliveries), so that they survive
// restarts and every node sharing the store sees the same ones. Records are
// grouped by kind (a feature's name); keys are valid UTF-8 without NUL (a
// driver may refuse others with ErrInvalid) and sort byte-wise; values are
// opaque to the store.
type RecordStore interface {
	// Record returns the value of kind/key, or an error wrapping ErrNotFound.
	Record(ctx context.Context, kind, key string) ([]byte, error)
	// Records lists the records of kind whose keys start with prefix
	// ("": all), sorted by key.
	Records(ctx context.Context, kind, prefix string) ([]Record, error)
	// UpdateRecord changes kind/key atomically, against every node: fn gets
	// the current value (nil when there is none) and returns the one to
	// store (nil: delete the record). fn may run more than once (a driver
	// may retry a conflicting transaction); an error from fn aborts the
	// update and is returned.
	UpdateRecord(ctx context.Context, kind, key string, fn func(cur []byte) ([]byte, error)) error
}
