package badger

import (
	"context"
	"errors"
	"fmt"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/dynamo-rss/dynamo/storage"
)

// recordKey is c | kind | 0x00 | key: the records of other features.
func recordKey(kind, key string) []byte {
	k := make([]byte, 0, 2+len(kind)+len(key))
	k = append(k, prefixRecord)
	k = append(k, kind...)
	k = append(k, 0)
	return append(k, key...)
}

// Record returns the value of kind/key; storage.ErrNotFound when absent.
func (db *DB) Record(ctx context.Context, kind, key string) ([]byte, error) {
	if err := storage.ValidateRecordKind(kind); err != nil {
		return nil, err
	}
	if err := storage.ValidateRecordKey(kind, key); err != nil {
		return nil, fmt.Errorf("record %s/%q: %w (%w)", kind, key, storage.ErrNotFound, err)
	}
	var out []byte
	err := db.view(ctx, func(txn *bdg.Txn) error {
		v, err := getValue(txn, recordKey(kind, key))
		if errors.Is(err, bdg.ErrKeyNotFound) {
			return fmt.Errorf("record %s/%q: %w", kind, key, storage.ErrNotFound)
		}
		out = v
		return err
	})
	return out, err
}

// Records lists the records of kind whose keys start with prefix, by key.
func (db *DB) Records(ctx context.Context, kind, prefix string) ([]storage.Record, error) {
	if err := storage.ValidateRecordKind(kind); err != nil {
		return nil, err
	}
	var out []storage.Record
	head := len(recordKey(kind, ""))
	err := db.view(ctx, func(txn *bdg.Txn) error {
		return scanPrefix(ctx, txn, recordKey(kind, prefix), func(k, v []byte) error {
			// v is Badger's buffer, reused after the callback returns; an
			// empty value is not nil.
			out = append(out, storage.Record{Key: string(k[head:]), Value: append([]byte{}, v...)})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list records %s: %w", kind, err)
	}
	return out, nil
}

// UpdateRecord changes kind/key in one transaction, retried on conflict.
func (db *DB) UpdateRecord(ctx context.Context, kind, key string, fn func(cur []byte) ([]byte, error)) error {
	if err := storage.ValidateRecordKey(kind, key); err != nil {
		return err
	}
	if err := db.space.check(); err != nil {
		return fmt.Errorf("update record %s/%q: %w", kind, key, err)
	}
	k := recordKey(kind, key)
	// The store serializes writers with its own locks (Badger's conflict
	// detection is off): one per record, named apart from resource ids.
	unlock := db.locks.lock("\x00record\x00" + string(k))
	defer unlock()
	return db.update(ctx, func(txn wtxn) error {
		cur, err := getValue(txn.Txn, k)
		if err != nil && !errors.Is(err, bdg.ErrKeyNotFound) {
			return err
		}
		next, err := fn(cur)
		if err != nil {
			return err
		}
		if next == nil {
			return txn.Delete(k)
		}
		return txn.Set(k, next)
	})
}
