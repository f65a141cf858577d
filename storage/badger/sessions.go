package badger

import (
	"context"
	"errors"
	"fmt"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/dynamo-rss/dynamo/storage"
)

// DB keeps the sessions ended by a logout, for every api node sharing it.
var _ storage.Sessions = (*DB)(nil)

// sessionKey is e | id: a revoked session, its value the time (12 bytes)
// until which it stays revoked.
func sessionKey(id string) []byte {
	return append([]byte{prefixSession}, id...)
}

// sessionsLock serializes revocations, which prune each other's keys.
const sessionsLock = "\x00sessions"

// RevokeSession records that session id is revoked until until and, in the
// same transaction, deletes the revocations whose until is not after now.
// It does not wait for free disk space as other writes do: a revocation
// is a few bytes, and a logout that cannot be recorded leaves a session
// open.
func (db *DB) RevokeSession(ctx context.Context, id string, until, now time.Time) error {
	if err := storage.ValidateSessionID(id); err != nil {
		return fmt.Errorf("revoke session: %w", err)
	}
	unlock := db.locks.lock(sessionsLock)
	defer unlock()
	err := db.update(ctx, func(txn wtxn) error {
		var stale [][]byte
		keep := until
		err := scanPrefix(ctx, txn.Txn, []byte{prefixSession}, func(k, v []byte) error {
			if len(v) != timeLen {
				return fmt.Errorf("%w: revoked session %q: %d bytes, want %d", storage.ErrInconsistent, k[1:], len(v), timeLen)
			}
			t := readTime(v)
			switch {
			case string(k[1:]) == id:
				if t.After(keep) {
					keep = t
				}
			case !t.After(now):
				stale = append(stale, append([]byte{}, k...)) // k is Badger's buffer
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range stale {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		return txn.Set(sessionKey(id), appendTime(nil, keep))
	})
	if err != nil {
		return fmt.Errorf("revoke session: %w", err)
	}
	return nil
}

// SessionRevoked reports whether session id is revoked.
func (db *DB) SessionRevoked(ctx context.Context, id string) (bool, error) {
	if storage.ValidateSessionID(id) != nil {
		return false, ctx.Err()
	}
	revoked := false
	err := db.view(ctx, func(txn *bdg.Txn) error {
		_, err := txn.Get(sessionKey(id))
		if errors.Is(err, bdg.ErrKeyNotFound) {
			return nil
		}
		revoked = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("read session revocation: %w", err)
	}
	return revoked, nil
}
