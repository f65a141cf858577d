package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/dynamo-rss/dynamo/storage"
)

// textPrefix is the longest prefix of s that PostgreSQL text can hold:
// up to its first NUL or byte that is not UTF-8.
func textPrefix(s string) string {
	for i, r := range s {
		if r == 0 || r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			return s[:i]
		}
	}
	return s
}

// Record returns the value of kind/key; storage.ErrNotFound when absent.
func (s *Store) Record(ctx context.Context, kind, key string) (_ []byte, err error) {
	defer classifyErr(&err)
	if err := storage.ValidateRecordKind(kind); err != nil {
		return nil, err
	}
	if err := storage.ValidateRecordKey(kind, key); err != nil {
		return nil, fmt.Errorf("record %s/%q: %w (%w)", kind, key, storage.ErrNotFound, err)
	}
	var v []byte
	err = s.pool.QueryRow(ctx, `select value from dynamo_records where kind = $1 and key = $2 and value is not null`, kind, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("record %s/%q: %w", kind, key, storage.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read record %s/%q: %w", kind, key, err)
	}
	return v, nil
}

// Records lists the records of kind whose keys start with prefix, by key.
func (s *Store) Records(ctx context.Context, kind, prefix string) (_ []storage.Record, err error) {
	defer classifyErr(&err)
	if err := storage.ValidateRecordKind(kind); err != nil {
		return nil, err
	}
	// A range on the "C"-collated key, from the part of the prefix text can
	// hold (a prefix may end inside a UTF-8 sequence), up to the first key
	// past it; the rest of the prefix is compared here.
	lo := textPrefix(prefix)
	if rest := prefix[len(lo):]; len(rest) >= utf8.UTFMax || strings.IndexByte(rest, 0) >= 0 {
		return nil, nil // more than the start of one UTF-8 sequence: no key has it
	}
	rows, err := s.pool.Query(ctx, `select key, value from dynamo_records
		where kind = $1 and key >= $2 and value is not null order by key`, kind, lo)
	if err != nil {
		return nil, fmt.Errorf("list records %s: %w", kind, err)
	}
	defer rows.Close()
	var out []storage.Record
	for rows.Next() {
		var r storage.Record
		if err := rows.Scan(&r.Key, &r.Value); err != nil {
			return nil, fmt.Errorf("list records %s: %w", kind, err)
		}
		if !strings.HasPrefix(r.Key, lo) {
			break // sorted: past the prefix's range
		}
		if strings.HasPrefix(r.Key, prefix) {
			out = append(out, r)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list records %s: %w", kind, err)
	}
	return out, nil
}

// UpdateRecord changes kind/key in one transaction under the row's lock, so
// concurrent updates from any node are applied one after the other.
func (s *Store) UpdateRecord(ctx context.Context, kind, key string, fn func(cur []byte) ([]byte, error)) (err error) {
	defer classifyErr(&err)
	if err := storage.ValidateRecordKey(kind, key); err != nil {
		return err
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		// Make sure the row exists, so that FOR UPDATE has a row to lock
		// even when two nodes create the record at once.
		if _, err := tx.Exec(ctx, `insert into dynamo_records (kind, key, value) values ($1, $2, null) on conflict do nothing`, kind, key); err != nil {
			return err
		}
		var cur []byte
		if err := tx.QueryRow(ctx, `select value from dynamo_records where kind = $1 and key = $2 for update`, kind, key).Scan(&cur); err != nil {
			return err
		}
		next, err := fn(cur)
		if err != nil {
			return err
		}
		if next == nil {
			_, err = tx.Exec(ctx, `delete from dynamo_records where kind = $1 and key = $2`, kind, key)
			return err
		}
		_, err = tx.Exec(ctx, `update dynamo_records set value = $3 where kind = $1 and key = $2`, kind, key, next)
		return err
	})
	if err != nil {
		return fmt.Errorf("update record %s/%q: %w", kind, key, classify(err))
	}
	return nil
}
