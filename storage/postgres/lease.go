package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// busyRetry is when to ask again for a resource whose row another
// transaction holds (another node acquiring or committing it right now).
const busyRetry = time.Second

// Acquire asks for the lease of req.ID for this node (the poller's
// Leaser). The resource's row is taken with SELECT … FOR UPDATE SKIP
// LOCKED: when another node's transaction holds it, the answer is an
// immediate refusal (retry in a second), never a wait. The lease is granted
// when no other node holds an unexpired one, the resource is due (or
// req.Force) and its host's next allowed request time has come; the host's
// next allowed time then moves to req.Now + req.HostInterval, and the lease
// runs until req.Now + req.Lease. Every time is the poller's (req.Now),
// never the database's clock. The stored poll state comes with every answer.
func (s *Store) Acquire(ctx context.Context, req storage.LeaseRequest) (storage.Lease, error) {
	if err := storage.ValidateID(req.ID); err != nil {
		return storage.Lease{}, fmt.Errorf("acquire: %w", err)
	}
	now, err := toNS("lease time", req.Now)
	if err != nil {
		return storage.Lease{}, fmt.Errorf("acquire %q: %w", req.ID, err)
	}
	var lease storage.Lease
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var (
			due, until *int64
			owner      *string
			isGone     bool
		)
		const q = `select poll_state, due_ns, lease_owner, lease_until_ns, gone from dynamo_resources where id = $1 for update skip locked`
		err := tx.QueryRow(ctx, q, req.ID).Scan(&lease.State, &due, &owner, &until, &isGone)
		if errors.Is(err, pgx.ErrNoRows) {
			var created bool
			if created, err = createRow(ctx, tx, req.ID); err == nil && !created {
				// Held by another transaction: answer at once with the
				// committed state, without waiting.
				err = tx.QueryRow(ctx, `select poll_state from dynamo_resources where id = $1`, req.ID).Scan(&lease.State)
				lease.Retry = fromNS(addNS(now, busyRetry))
				return err
			}
		}
		if err != nil {
			return err
		}
		switch {
		case isGone:
			return gone(req.ID)
		case owner != nil && *owner != s.node && until != nil && *until > now:
			lease.Retry = fromNS(*until)
			return nil
		case !req.Force && due != nil && *due > now:
			lease.Retry = fromNS(*due)
			return nil
		}
		var next int64
		err = tx.QueryRow(ctx, `insert into dynamo_hosts as h (host, next_allowed_ns) values ($1, $2)
			on conflict (host) do update set next_allowed_ns = excluded.next_allowed_ns where h.next_allowed_ns <= $3
			returning next_allowed_ns`, req.Host, addNS(now, req.HostInterval), now).Scan(&next)
		if errors.Is(err, pgx.ErrNoRows) { // the host's slot is not free yet
			err = tx.QueryRow(ctx, `select next_allowed_ns from dynamo_hosts where host = $1`, req.Host).Scan(&next)
			lease.Retry = fromNS(next)
			return err
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `update dynamo_resources set lease_owner = $2, lease_until_ns = $3 where id = $1`,
			req.ID, s.node, addNS(now, req.Lease)); err != nil {
			return err
		}
		lease.Granted = true
		return nil
	})
	if err != nil {
		return storage.Lease{}, fmt.Errorf("acquire %q: %w", req.ID, err)
	}
	return lease, nil
}

// createRow inserts id's row (locked by this transaction when created);
// false when it exists already.
func createRow(ctx context.Context, tx pgx.Tx, id string) (bool, error) {
	tag, err := tx.Exec(ctx, `insert into dynamo_resources (id) values ($1) on conflict (id) do nothing`, id)
	return tag.RowsAffected() == 1, err
}

// Complete commits a poll of id made under this node's lease (the poller's
// Leaser), in one transaction: it checks that the lease is still this
// node's (else storage.ErrLeaseLost, nothing written), saves doc as Save
// does (nil: no version), calls commit with the save's result, writes the
// poll state and next due time it returns, and releases the lease. An
// error from commit rolls everything back.
func (s *Store) Complete(ctx context.Context, id string, doc *schema.Document, commit storage.CommitFunc) (storage.SaveResult, error) {
	if err := storage.ValidateID(id); err != nil {
		return storage.SaveResult{}, fmt.Errorf("complete: %w", err)
	}
	var p *prepared
	if doc != nil {
		var err error
		if p, err = prepare(doc); err != nil {
			return storage.SaveResult{}, fmt.Errorf("complete %q: %w", id, err)
		}
		if p.id != id {
			return storage.SaveResult{}, fmt.Errorf("complete %q: %w: document of resource %q", id, storage.ErrInvalid, p.id)
		}
	}
	var sr storage.SaveResult
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		cur, err := lockResource(ctx, tx, id, false)
		if errors.Is(err, storage.ErrNotFound) || err == nil && (cur.owner == nil || *cur.owner != s.node) {
			return storage.ErrLeaseLost
		}
		if err != nil {
			return err
		}
		if p != nil {
			if sr, err = saveLocked(ctx, tx, p, cur); err != nil {
				return err
			}
		}
		state, next, err := commit(sr)
		if err != nil {
			return err
		}
		due, err := nullNS("next due time", next)
		if err != nil {
			return err
		}
		if state == nil {
			state = []byte{}
		}
		_, err = tx.Exec(ctx, `update dynamo_resources set poll_state = $2, due_ns = $3, lease_owner = null, lease_until_ns = null where id = $1`,
			id, state, due)
		return err
	})
	if err != nil {
		return storage.SaveResult{}, fmt.Errorf("complete %q: %w", id, err)
	}
	if sr.Changed {
		s.cache.invalidate(id)
	}
	return sr, nil
}
