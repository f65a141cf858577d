package storage

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Record is one record of a [RecordStore]: a key and its opaque value.
type Record struct {
	Key   string
	Value []byte
}

// RecordStore keeps the small records of features built on the store (the
// WebSub hub's subscriptions and pending deliveries), so that they survive
// restarts and every node sharing the store sees the same ones. Records are
// grouped by kind (a feature's name); kinds and keys are valid UTF-8
// without NUL, at most [MaxRecordKeyLen] bytes together (see
// [ValidateRecordKey]), and keys sort byte-wise; values are opaque to the
// store, and an empty value is a record like any other (read back empty,
// not nil).
type RecordStore interface {
	// Record returns the value of kind/key, or an error wrapping ErrNotFound
	// (and ErrInvalid too for a key no record can have; a bad kind is
	// ErrInvalid alone).
	Record(ctx context.Context, kind, key string) ([]byte, error)
	// Records lists the records of kind whose keys start with prefix
	// ("": all), sorted by key. The prefix is bytes: one that ends inside a
	// UTF-8 sequence lists the keys it is a byte prefix of.
	Records(ctx context.Context, kind, prefix string) ([]Record, error)
	// UpdateRecord changes kind/key atomically, against every node: fn gets
	// the current value (nil when there is none) and returns the one to
	// store (nil: delete the record). fn may run more than once (a driver
	// may retry a conflicting transaction); an error from fn aborts the
	// update and is returned. A kind/key [ValidateRecordKey] refuses fails
	// with its error.
	UpdateRecord(ctx context.Context, kind, key string, fn func(cur []byte) ([]byte, error)) error
}

// MaxRecordKeyLen bounds a record's kind and key together, in bytes
// (PostgreSQL's B-tree entries hold at most ~2.7 KB).
const MaxRecordKeyLen = 2048

// ValidateRecordKind reports whether kind can group records: valid UTF-8,
// not empty, without NUL. The error wraps [ErrInvalid].
func ValidateRecordKind(kind string) error {
	if kind == "" || !recordText(kind) {
		return fmt.Errorf("%w: record kind %q", ErrInvalid, kind)
	}
	return nil
}

// ValidateRecordKey reports whether kind/key can name a record: a kind
// [ValidateRecordKind] accepts, a key of valid UTF-8 without NUL, both
// together at most [MaxRecordKeyLen] bytes. The error wraps [ErrInvalid].
func ValidateRecordKey(kind, key string) error {
	if err := ValidateRecordKind(kind); err != nil {
		return err
	}
	switch {
	case !recordText(key):
		return fmt.Errorf("%w: record key %q is not UTF-8 text without NUL", ErrInvalid, key)
	case len(kind)+len(key) > MaxRecordKeyLen:
		return fmt.Errorf("%w: record key of %d bytes, more than %d with its kind", ErrInvalid, len(key), MaxRecordKeyLen)
	}
	return nil
}

func recordText(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }
