package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dynamo-rss/dynamo/storage"
)

// Store keeps the sessions ended by a logout, for every node sharing the
// database.
var _ storage.Sessions = (*Store)(nil)

// RevokeSession records that session id is revoked until until and, in the
// same transaction, deletes the revocations whose until is not after now.
func (s *Store) RevokeSession(ctx context.Context, id string, until, now time.Time) (err error) {
	defer classifyErr(&err)
	if err := storage.ValidateSessionID(id); err != nil {
		return fmt.Errorf("revoke session: %w", err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `delete from dynamo_revoked_sessions where until <= $1`, clampNS(now)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `insert into dynamo_revoked_sessions (id, until) values ($1, $2)
			on conflict (id) do update set until = greatest(dynamo_revoked_sessions.until, excluded.until)`, id, clampNS(until))
		return err
	})
	if err != nil {
		return fmt.Errorf("revoke session: %w", err)
	}
	return nil
}

// SessionRevoked reports whether session id is revoked.
func (s *Store) SessionRevoked(ctx context.Context, id string) (_ bool, err error) {
	defer classifyErr(&err)
	if storage.ValidateSessionID(id) != nil {
		return false, ctx.Err()
	}
	var revoked bool
	err = s.pool.QueryRow(ctx, `select exists (select 1 from dynamo_revoked_sessions where id = $1)`, id).Scan(&revoked)
	if err != nil {
		return false, fmt.Errorf("read session revocation: %w", err)
	}
	return revoked, nil
}
