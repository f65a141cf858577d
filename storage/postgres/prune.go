package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dynamo-rss/dynamo/storage"
)

// Prune drops versions beyond the retention (never the latest), and the
// items no kept version contains, in one transaction; it returns how many
// versions it removed. As in the Badger store, the kept range stays
// contiguous: pruning by age stops at the first version the retention keeps.
func (s *Store) Prune(ctx context.Context, id string, r storage.Retention, now time.Time) (_ int, err error) {
	defer classifyErr(&err)
	if err := readID(id); err != nil {
		return 0, err
	}
	if r.MaxVersions < 0 || r.MaxAge < 0 {
		return 0, fmt.Errorf("prune %q: %w: negative retention %+v", id, storage.ErrInvalid, r)
	}
	if r.MaxVersions == 0 && r.MaxAge == 0 {
		return 0, nil
	}
	dropped := 0
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		cur, err := lockResource(ctx, tx, id, false)
		if err != nil {
			return err
		}
		if cur.gone {
			return gone(id)
		}
		if cur.versions == 0 {
			return fmt.Errorf("resource %q: %w", id, storage.ErrNotFound)
		}
		count := int64(cur.versions)
		var drop int64
		if r.MaxVersions > 0 && count > int64(r.MaxVersions) {
			drop = count - int64(r.MaxVersions)
		}
		drop = min(drop, count-1)
		if r.MaxAge > 0 && drop < count-1 {
			// The first version from oldest+drop on that is young enough is the new oldest.
			var keep int64
			err := tx.QueryRow(ctx, `select coalesce(min(seq), $3) from dynamo_versions where resource_id = $1 and seq >= $2 and ts_ns >= $4`,
				id, cur.oldest+drop, cur.latest, clampNS(now.Add(-r.MaxAge))).Scan(&keep)
			if err != nil {
				return err
			}
			drop = min(keep-cur.oldest, count-1)
		}
		if drop <= 0 {
			return nil
		}
		oldest := cur.oldest + drop
		b := &pgx.Batch{}
		b.Queue(`delete from dynamo_versions where resource_id = $1 and seq < $2`, id, oldest)
		b.Queue(`delete from dynamo_items where resource_id = $1 and last_seq < $2`, id, oldest)
		b.Queue(`update dynamo_resources set oldest_seq = $2, versions = latest_seq - $2 + 1 where id = $1`, id, oldest)
		b.Queue(notifySQL, id)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		dropped = int(drop)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("prune %q: %w", id, err)
	}
	if dropped > 0 {
		s.cache.invalidate(id)
	}
	return dropped, nil
}
