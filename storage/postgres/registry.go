package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/dynamo-rss/dynamo/storage"
)

// registrationsChannel is the channel every transaction that changes the
// registrations (Register, Unregister) notifies, with the node's id as the
// payload, so that the other nodes re-read the registry at once rather
// than at their next periodic re-read.
const registrationsChannel = "dynamo_registrations"

// notifyRegistrationsSQL queues the notification of a change of the
// registrations made by node $1 in the current transaction (sent on commit).
const notifyRegistrationsSQL = `select pg_notify('` + registrationsChannel + `', $1)`

// RegistryChanged returns a channel that is closed when the registrations
// may have changed through another node since it was returned: another
// node's Register or Unregister committed, or the listener (see doc.go,
// Info cache) connected again, after which changes made while it was not
// listening may have been missed. This Store's own changes do not close it.
// Take the channel before reading the registrations, and read them again
// once it is closed (taking a new one first): a change committed during a
// read then closes the channel taken before it. Notifications can be lost
// beyond what a reconnection tells (a server that restarts drops those not
// yet delivered), so a reader still re-reads from time to time.
func (s *Store) RegistryChanged() <-chan struct{} { return s.regs.wait() }

// regWatch is RegistryChanged's channel: closed at the next change, then
// replaced by a new one when next asked for.
type regWatch struct {
	mu sync.Mutex
	ch chan struct{} // nil: none asked for since the last change
}

func (w *regWatch) wait() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = make(chan struct{})
	}
	return w.ch
}

// changed closes the channel handed out, if any.
func (w *regWatch) changed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
}

// Registrations lists every resource registered at run time, by id, with
// the registry's revision, read in the same statement (so from one
// snapshot: exactly the changes up to that revision).
func (s *Store) Registrations(ctx context.Context) (_ storage.RegistrySnapshot, err error) {
	defer classifyErr(&err)
	rows, err := s.pool.Query(ctx, `select v.revision, r.id, r.definition, r.registered_ns, r.updated_ns
		from dynamo_registry_revision v left join dynamo_registrations r on true order by r.id`)
	if err != nil {
		return storage.RegistrySnapshot{}, fmt.Errorf("list registrations: %w", err)
	}
	defer rows.Close()
	var out storage.RegistrySnapshot
	for rows.Next() {
		var (
			rev      int64
			id       *string
			def      []byte
			reg, upd *int64
		)
		if err := rows.Scan(&rev, &id, &def, &reg, &upd); err != nil {
			return storage.RegistrySnapshot{}, fmt.Errorf("list registrations: %w", err)
		}
		out.Revision = storage.Revision(rev)
		if id == nil { // no registration: the revision's row alone
			continue
		}
		out.Registrations = append(out.Registrations, storage.Registration{ID: *id, Definition: def, Registered: fromNullNS(reg), Updated: fromNullNS(upd)})
	}
	if err := rows.Err(); err != nil {
		return storage.RegistrySnapshot{}, fmt.Errorf("list registrations: %w", err)
	}
	return out, nil
}

// RegistrationsSince reads what changed in the registry after revision
// since: the registrations made or replaced, and the ids unregistered (and
// not registered again), with the revision the read saw; all from one
// snapshot of the database (a repeatable-read transaction). Its cost is
// that of the changes, not of the registry: a node reads it on every
// other node's change.
func (s *Store) RegistrationsSince(ctx context.Context, since storage.Revision) (_ storage.RegistryDelta, err error) {
	defer classifyErr(&err)
	var out storage.RegistryDelta
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var rev int64
		if err := tx.QueryRow(ctx, `select revision from dynamo_registry_revision`).Scan(&rev); err != nil {
			return err
		}
		out.Revision = storage.Revision(rev)
		rows, err := tx.Query(ctx, `select id, definition, registered_ns, updated_ns from dynamo_registrations where revision > $1 order by id`, int64(since))
		if err != nil {
			return err
		}
		for rows.Next() {
			var (
				r        storage.Registration
				reg, upd *int64
			)
			if err := rows.Scan(&r.ID, &r.Definition, &reg, &upd); err != nil {
				rows.Close()
				return err
			}
			r.Registered, r.Updated = fromNullNS(reg), fromNullNS(upd)
			out.Changed = append(out.Changed, r)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `select id from dynamo_registry_deletions where revision > $1 order by id`, int64(since))
		if err != nil {
			return err
		}
		out.Deleted, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return storage.RegistryDelta{}, fmt.Errorf("read registry changes since revision %d: %w", since, err)
	}
	return out, nil
}

// nextRevisionSQL takes the registry's next revision: the row stays locked
// until the transaction ends, so registry changes commit in revision order.
const nextRevisionSQL = `update dynamo_registry_revision set revision = revision + 1 returning revision`

// Register stores reg, replacing a registration of the same id (whose
// Registered time is kept); created reports a new id. It lifts the
// tombstone of a resource unregistered before.
func (s *Store) Register(ctx context.Context, reg storage.Registration) (_ storage.RegisterResult, err error) {
	defer classifyErr(&err)
	if err := storage.ValidateRegistration(reg); err != nil {
		return storage.RegisterResult{}, fmt.Errorf("register: %w", err)
	}
	registered, err1 := nullNS("registration time", reg.Registered)
	updated, err2 := nullNS("update time", reg.Updated)
	if err := errors.Join(err1, err2); err != nil {
		return storage.RegisterResult{}, fmt.Errorf("register %q: %w", reg.ID, err)
	}
	def := reg.Definition
	if def == nil {
		def = []byte{}
	}
	var (
		res     storage.RegisterResult
		revived bool
	)
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var rev int64
		if err := tx.QueryRow(ctx, nextRevisionSQL).Scan(&rev); err != nil {
			return err
		}
		res.Revision = storage.Revision(rev)
		err := tx.QueryRow(ctx, `insert into dynamo_registrations as r (id, definition, registered_ns, updated_ns, revision) values ($1, $2, $3, $4, $5)
			on conflict (id) do update set definition = excluded.definition, updated_ns = excluded.updated_ns, revision = excluded.revision
			returning (xmax = 0)`, reg.ID, def, registered, updated, rev).Scan(&res.Created)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `delete from dynamo_registry_deletions where id = $1`, reg.ID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, notifyRegistrationsSQL, s.node); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `update dynamo_resources set gone = false where id = $1 and gone`, reg.ID)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		revived = true
		return notify(ctx, tx, reg.ID)
	})
	if err != nil {
		return storage.RegisterResult{}, fmt.Errorf("register %q: %w", reg.ID, err)
	}
	if revived {
		s.cache.invalidate(reg.ID)
	}
	return res, nil
}

// Unregister removes the registration and everything stored for the
// resource (versions, items, poll state, lease), leaving a tombstone: reads
// then fail as gone, saves and leases are refused, until it is registered
// again. Sequence numbers go on from where they were, so a version number
// never names two documents. ErrNotFound when id is not registered.
func (s *Store) Unregister(ctx context.Context, id string) (_ storage.Revision, err error) {
	defer classifyErr(&err)
	if err := readID(id); err != nil {
		return 0, err
	}
	var rev int64
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		// The revision first, as Register takes it: the two lock the
		// revision's row and then the resource's, never the other way.
		if err := tx.QueryRow(ctx, nextRevisionSQL).Scan(&rev); err != nil {
			return err
		}
		cur, err := lockResource(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if cur.gone {
			return gone(id)
		}
		tag, err := tx.Exec(ctx, `delete from dynamo_registrations where id = $1`, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 && cur.versions == 0 {
			// Neither registered nor a stored history (which a resource
			// the file no longer declares keeps, and is deleted the same way).
			return fmt.Errorf("registration of %q: %w", id, storage.ErrNotFound)
		}
		b := &pgx.Batch{}
		b.Queue(`insert into dynamo_registry_deletions (id, revision) values ($1, $2)
			on conflict (id) do update set revision = excluded.revision`, id, rev)
		b.Queue(`delete from dynamo_items where resource_id = $1`, id)
		b.Queue(`delete from dynamo_versions where resource_id = $1`, id)
		b.Queue(`update dynamo_resources set url = '', created_ns = 0, updated_ns = 0, oldest_seq = 0, versions = 0, hash = null,
			title = '', description = '', poll_state = null, due_ns = null, lease_owner = null, lease_until_ns = null, gone = true
			where id = $1`, id)
		b.Queue(notifySQL, id)
		b.Queue(notifyRegistrationsSQL, s.node)
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return 0, fmt.Errorf("unregister %q: %w", id, err)
	}
	s.cache.invalidate(id)
	return storage.Revision(rev), nil
}
