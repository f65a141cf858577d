package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// Acquire asks for the lease of req.ID for this node (the poller's
// Leaser). The lease is granted when no other node holds an unexpired one,
// the resource is due (or req.Force) and its host's next allowed request
// time has come; the host's next allowed time then moves to req.Now +
// req.HostInterval, and the lease runs until req.Now + req.Lease. Every
// time is the poller's (req.Now), never the database's clock. The stored
// poll state comes with every answer.
//
// A refusal costs one plain SELECT, no transaction and no lock: the
// committed row (and the host's slot) is read first, and only a resource
// that looks free and due is taken, in one statement (grantSQL) that
// locks the row with FOR UPDATE SKIP LOCKED and checks every condition
// again under the lock. A refusal's Retry is the
// other node's lease end, the due time or the host's slot, so a loser's
// queue follows the winner's schedule instead of asking at every due time.
// When another transaction holds the row (another node granted it or
// committing its poll right now), the answer is an immediate refusal, never
// a wait, with Retry = req.Now + req.Lease: what the lease being granted
// there will answer once committed, and, should that node die, the moment
// its lease ends and this node may take over.
func (s *Store) Acquire(ctx context.Context, req storage.LeaseRequest) (_ storage.Lease, err error) {
	defer classifyErr(&err)
	if err := storage.ValidateID(req.ID); err != nil {
		return storage.Lease{}, fmt.Errorf("acquire: %w", err)
	}
	now, err := toNS("lease time", req.Now)
	if err != nil {
		return storage.Lease{}, fmt.Errorf("acquire %q: %w", req.ID, err)
	}
	var (
		lease  storage.Lease
		refuse bool
	)
	// The read-only look first: most refusals end here.
	var st leaseRow
	err = s.pool.QueryRow(ctx, preCheckSQL, req.ID, req.Host).Scan(&lease.State, &st.due, &st.owner, &st.until, &st.gone, &st.hostNext)
	switch {
	case errors.Is(err, pgx.ErrNoRows): // a new resource
		if _, err := s.pool.Exec(ctx, `insert into dynamo_resources (id) values ($1) on conflict (id) do nothing`, req.ID); err != nil {
			return storage.Lease{}, fmt.Errorf("acquire %q: create resource: %w", req.ID, classify(err))
		}
	case err != nil:
		return storage.Lease{}, fmt.Errorf("acquire %q: %w", req.ID, err)
	default:
		if lease.Retry, refuse, err = st.refusal(s.node, req, now); err != nil {
			return storage.Lease{}, fmt.Errorf("acquire %q: %w", req.ID, err)
		}
		if refuse {
			return lease, nil
		}
	}
	// It looks due and free: take it in one statement.
	q, args := grantSQL, []any{req.ID, s.node, addNS(now, req.Lease), now, req.Force, req.Host, addNS(now, req.HostInterval)}
	if req.HostInterval <= 0 {
		q, args = grantNoIntervalSQL, args[:6]
	}
	err = s.pool.QueryRow(ctx, q, args...).Scan(&lease.State)
	if err == nil {
		lease.Granted = true
		return lease, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return storage.Lease{}, fmt.Errorf("acquire %q: %w", req.ID, classify(err))
	}
	// Lost a race: say why, from the committed row.
	err = s.pool.QueryRow(ctx, preCheckSQL, req.ID, req.Host).Scan(&lease.State, &st.due, &st.owner, &st.until, &st.gone, &st.hostNext)
	if err != nil {
		return storage.Lease{}, fmt.Errorf("acquire %q: %w", req.ID, err)
	}
	if lease.Retry, refuse, err = st.refusal(s.node, req, now); err != nil {
		return storage.Lease{}, fmt.Errorf("acquire %q: %w", req.ID, err)
	}
	if !refuse {
		// Another transaction held the row (a grant or a commit in
		// progress elsewhere): ask again when such a lease would end.
		lease.Retry = fromNS(addNS(now, req.Lease))
	}
	return lease, nil
}

// preCheckSQL reads what Acquire decides on, without a lock: the row's
// poll state, due time, lease and tombstone, and the host's next slot.
const preCheckSQL = `select r.poll_state, r.due_ns, r.lease_owner, r.lease_until_ns, r.gone, h.next_allowed_ns
	from dynamo_resources r left join dynamo_hosts h on h.host = $2 where r.id = $1`

// grantSQL grants a lease in one statement: the row is taken (SKIP LOCKED:
// a row another transaction holds is not waited for) only when it is not
// gone, no other node holds an unexpired lease ($2 is this node, $4 now)
// and it is due or forced ($5); the host's slot is then reserved until $7
// when free; and only then is the lease ($2 until $3) written. No row
// back: not granted. $1 id, $6 host.
const grantSQL = `with r as (
	select id from dynamo_resources
	where id = $1 and not gone
		and (lease_owner is null or lease_owner = $2 or lease_until_ns <= $4::bigint)
		and ($5::boolean or due_ns is null or due_ns <= $4::bigint)
	for update skip locked),
h as (
	insert into dynamo_hosts as h (host, next_allowed_ns) select $6, $7::bigint from r
	on conflict (host) do update set next_allowed_ns = excluded.next_allowed_ns where h.next_allowed_ns <= $4::bigint
	returning 1)
update dynamo_resources set lease_owner = $2, lease_until_ns = $3::bigint
where id = (select id from r) and exists (select 1 from h)
returning poll_state`

// grantNoIntervalSQL is grantSQL when there is no politeness interval to
// reserve: the host's slot is only checked (another node's configuration
// may have one), never written, so the host's row is no hot spot every
// grant of every node waits for.
const grantNoIntervalSQL = `with r as (
	select id from dynamo_resources
	where id = $1 and not gone
		and (lease_owner is null or lease_owner = $2 or lease_until_ns <= $4::bigint)
		and ($5::boolean or due_ns is null or due_ns <= $4::bigint)
		and not exists (select 1 from dynamo_hosts where host = $6 and next_allowed_ns > $4::bigint)
	for update skip locked)
update dynamo_resources set lease_owner = $2, lease_until_ns = $3::bigint
where id = (select id from r)
returning poll_state`

// leaseRow is what Acquire reads of a resource's row (and of its host's).
type leaseRow struct {
	due, until, hostNext *int64
	owner                *string
	gone                 bool
}

// refusal checks r for a lease request by node at now, in Acquire's order:
// gone (an error), another node's unexpired lease, not due yet (unless
// forced), then the host's slot. It returns the Retry of a
// refusal.
func (r leaseRow) refusal(node string, req storage.LeaseRequest, now int64) (time.Time, bool, error) {
	switch {
	case r.gone:
		return time.Time{}, true, gone(req.ID)
	case r.owner != nil && *r.owner != node && r.until != nil && *r.until > now:
		return fromNS(*r.until), true, nil
	case !req.Force && r.due != nil && *r.due > now:
		return fromNS(*r.due), true, nil
	case r.hostNext != nil && *r.hostNext > now:
		return fromNS(*r.hostNext), true, nil
	}
	return time.Time{}, false, nil
}

// Complete commits a poll of id made under this node's lease (the poller's
// Leaser), in one transaction: it checks that the lease is still this
// node's (else storage.ErrLeaseLost, nothing written), saves doc as Save
// does (nil: no version), calls commit with the save's result, writes the
// poll state and next due time it returns, and releases the lease. An
// error from commit rolls everything back.
func (s *Store) Complete(ctx context.Context, id string, doc *schema.Document, commit storage.CommitFunc) (_ storage.SaveResult, err error) {
	defer classifyErr(&err)
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
	err = s.inTx(ctx, func(tx pgx.Tx) error {
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

// rescheduleBatch is how many resources one Reschedule transaction reads
// and rewrites: a budget change reschedules every budget resource, which a
// transaction each would make a reload of many resources wait for as many
// round trips.
const rescheduleBatch = 500

// Reschedule rewrites the poll states and due times of ids with fn (the
// poller's Leaser), when a node's policy for them changed, each batch of
// them in one transaction that locks their rows (in id order, so that two
// nodes rescheduling the same resources do not deadlock). fn is not called,
// and nothing is written, for a resource whose lease runs at now (any
// node's: the poll under it decides the due time), without a poll state,
// unknown or gone.
func (s *Store) Reschedule(ctx context.Context, ids []string, now time.Time, fn storage.RescheduleFunc) (err error) {
	defer classifyErr(&err)
	for _, id := range ids {
		if err := storage.ValidateID(id); err != nil {
			return fmt.Errorf("reschedule: %w", err)
		}
	}
	at, err := toNS("reschedule time", now)
	if err != nil {
		return fmt.Errorf("reschedule: %w", err)
	}
	for batch := range slices.Chunk(ids, rescheduleBatch) {
		if err := s.inTx(ctx, func(tx pgx.Tx) error { return reschedule(ctx, tx, batch, at, fn) }); err != nil {
			return fmt.Errorf("reschedule %d resources: %w", len(ids), err)
		}
	}
	return nil
}

// reschedule is one batch of Reschedule, in tx.
func reschedule(ctx context.Context, tx pgx.Tx, ids []string, now int64, fn storage.RescheduleFunc) error {
	rows, err := tx.Query(ctx, `select id, poll_state from dynamo_resources
		where id = any($1) and not gone and length(poll_state) > 0 and (lease_owner is null or lease_until_ns <= $2)
		order by id for update`, ids, now)
	if err != nil {
		return err
	}
	type stored struct {
		id    string
		state []byte
	}
	var found []stored
	for rows.Next() {
		var r stored
		if err := rows.Scan(&r.id, &r.state); err != nil {
			rows.Close()
			return err
		}
		found = append(found, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var (
		rid    []string
		states [][]byte
		dues   []*int64
	)
	for _, r := range found {
		state, next, ok := fn(r.id, r.state)
		if !ok {
			continue
		}
		due, err := nullNS("next due time", next)
		if err != nil {
			return fmt.Errorf("%q: %w", r.id, err)
		}
		if state == nil {
			state = []byte{}
		}
		rid, states, dues = append(rid, r.id), append(states, state), append(dues, due)
	}
	if len(rid) == 0 {
		return nil
	}
	_, err = tx.Exec(ctx, `update dynamo_resources r set poll_state = u.state, due_ns = u.due
		from unnest($1::text[], $2::bytea[], $3::bigint[]) as u(id, state, due) where r.id = u.id`, rid, states, dues)
	return err
}
