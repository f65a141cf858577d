package badger

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/dynamo-rss/dynamo/storage"
)

// Registrations lists the resources registered at run time, sorted by id,
// with the registry's revision, read in the same transaction.
func (db *DB) Registrations(ctx context.Context) (storage.RegistrySnapshot, error) {
	var out storage.RegistrySnapshot
	err := db.view(ctx, func(txn *bdg.Txn) error {
		rev, err := getRegistryRevision(txn)
		if err != nil {
			return err
		}
		out.Revision = rev
		return scanPrefix(ctx, txn, []byte{prefixReg}, func(k, v []byte) error {
			reg, err := decodeRegistration(string(k[1:]), v)
			if err != nil {
				return err
			}
			out.Registrations = append(out.Registrations, reg)
			return nil
		})
	})
	if err != nil {
		return storage.RegistrySnapshot{}, fmt.Errorf("list registrations: %w", err)
	}
	return out, nil
}

// registryRevisionKey is the key of the registry's revision.
var registryRevisionKey = []byte{prefixRegRev}

// getRegistryRevision reads the registry's revision (0 before the first
// change).
func getRegistryRevision(txn *bdg.Txn) (storage.Revision, error) {
	v, err := getValue(txn, registryRevisionKey)
	switch {
	case errors.Is(err, bdg.ErrKeyNotFound):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("read registry revision: %w", err)
	case len(v) != 8:
		return 0, fmt.Errorf("read registry revision: %d bytes, want 8", len(v))
	}
	return storage.Revision(binary.BigEndian.Uint64(v)), nil
}

// nextRegistryRevision writes the registry's next revision in txn and
// returns it. Every write of the registry goes through the committer, whose
// one goroutine commits transactions in turn, so revisions commit in order.
func nextRegistryRevision(txn wtxn) (storage.Revision, error) {
	rev, err := getRegistryRevision(txn.Txn)
	if err != nil {
		return 0, err
	}
	rev++
	return rev, txn.Set(registryRevisionKey, binary.BigEndian.AppendUint64(nil, uint64(rev)))
}

// Register stores reg, replacing a registration of the same id but keeping
// its Registered time; created reports a new id. Registering an id that was
// unregistered clears its tombstone (the id starts with no versions; its
// sequence numbers continue after the last one it had).
func (db *DB) Register(ctx context.Context, reg storage.Registration) (res storage.RegisterResult, err error) {
	if err := storage.ValidateRegistration(reg); err != nil {
		return res, fmt.Errorf("register: %w", err)
	}
	if err := db.space.check(); err != nil {
		return res, fmt.Errorf("register %q: %w", reg.ID, err)
	}
	unlock := db.locks.lock(reg.ID)
	defer unlock()
	var wasGone bool
	// Through the committer, so that many registrations at once (an
	// operator importing a list) share synced commits as saves do.
	err = db.commits.do(ctx, func(txn wtxn) error {
		res.Created = false
		old, err := getValue(txn.Txn, regKey(reg.ID))
		switch {
		case errors.Is(err, bdg.ErrKeyNotFound):
			res.Created = true
		case err != nil:
			return fmt.Errorf("read registration: %w", err)
		default:
			prev, err := decodeRegistration(reg.ID, old)
			if err != nil {
				return err
			}
			reg.Registered = prev.Registered
		}
		g, found, err := getGone(txn.Txn, reg.ID)
		if err != nil {
			return err
		}
		wasGone = found && g.Gone
		if res.Revision, err = nextRegistryRevision(txn); err != nil {
			return err
		}
		return txn.Set(regKey(reg.ID), encodeRegistration(reg))
	})
	if err != nil {
		return storage.RegisterResult{}, fmt.Errorf("register %q: %w", reg.ID, err)
	}
	if wasGone {
		// Leftovers of an Unregister interrupted by a crash would mix with
		// the new history: remove them before the tombstone goes.
		if err := db.purge(ctx, reg.ID); err != nil {
			return storage.RegisterResult{}, fmt.Errorf("register %q: %w", reg.ID, err)
		}
		err := db.update(ctx, func(txn wtxn) error {
			g, found, err := getGone(txn.Txn, reg.ID)
			if err != nil || !found {
				return err
			}
			g.Gone = false // keep the seq floor for the next Save
			return txn.Set(goneKey(reg.ID), g.encode())
		})
		if err != nil {
			return storage.RegisterResult{}, fmt.Errorf("register %q: clear tombstone: %w", reg.ID, err)
		}
	}
	return res, nil
}

// Unregister removes id's registration, versions, item index and poll state,
// and leaves a tombstone (see [storage.Store.Unregister]).
func (db *DB) Unregister(ctx context.Context, id string) (storage.Revision, error) {
	if err := readID(id); err != nil {
		return 0, fmt.Errorf("unregister: %w", err)
	}
	unlock := db.locks.lock(id)
	defer unlock()
	db.live.forget(id)            // before the tombstone: the next poll-state write reads it
	defer db.infos.invalidate(id) // after the commit, before the unlock
	defer db.hints.forget(id)

	// The poll state first: between the two writes the resource merely has
	// no poll state, and SavePollState waits for the lock we hold.
	var registered bool
	err := db.view(ctx, func(txn *bdg.Txn) error {
		_, err := txn.Get(regKey(id))
		registered = err == nil
		if err != nil && !errors.Is(err, bdg.ErrKeyNotFound) {
			return fmt.Errorf("read registration: %w", err)
		}
		if registered {
			return nil
		}
		g, found, err := getGone(txn, id)
		if err != nil {
			return err
		}
		if found && g.Gone {
			return fmt.Errorf("resource %q: %w", id, storage.ErrGone)
		}
		// Not registered, but with a stored history (a resource the file
		// no longer declares): deleted the same way.
		if _, err := getMetaRecord(txn, id); err == nil {
			return nil
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		return fmt.Errorf("registration of %q: %w", id, storage.ErrNotFound)
	})
	if err != nil {
		return 0, fmt.Errorf("unregister: %w", err)
	}
	if err := db.deletePollState(ctx, id); err != nil {
		return 0, fmt.Errorf("unregister %q: delete poll state: %w", id, err)
	}
	var rev storage.Revision
	err = db.update(ctx, func(txn wtxn) error {
		g, _, err := getGone(txn.Txn, id)
		if err != nil {
			return err
		}
		if rev, err = nextRegistryRevision(txn); err != nil {
			return err
		}
		// The record alone: a damaged present list does not stop a delete.
		m, err := getMetaRecord(txn.Txn, id)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		g.Gone = true
		g.LastSeq = max(g.LastSeq, m.Latest)
		if err := txn.Set(goneKey(id), g.encode()); err != nil {
			return err
		}
		if err := txn.Delete(metaKey(id)); err != nil {
			return err
		}
		for _, r := range m.chunks {
			if err := txn.Delete(chunkKey(id, r.sum)); err != nil {
				return err
			}
		}
		return txn.Delete(regKey(id))
	})
	if err != nil {
		return 0, fmt.Errorf("unregister %q: %w", id, err)
	}
	// Without metadata nothing reads the rest; delete it in batches.
	if err := db.purge(ctx, id); err != nil {
		return rev, fmt.Errorf("unregister %q: %w", id, err)
	}
	return rev, nil
}

// purge deletes id's versions, item index, contents, search pages and
// present-list chunks: every family key but m. The caller holds id's lock.
func (db *DB) purge(ctx context.Context, id string) error {
	var dels []kv
	err := db.view(ctx, func(txn *bdg.Txn) error {
		for _, p := range familiesOfMeta {
			opts := bdg.DefaultIteratorOptions
			opts.Prefix = familyPrefix(p, id)
			opts.PrefetchValues = false
			it := txn.NewIterator(opts)
			var scan scanCheck
			for it.Rewind(); it.Valid(); it.Next() {
				if err := scan.step(ctx); err != nil {
					it.Close()
					return err
				}
				dels = append(dels, kv{key: it.Item().KeyCopy(nil)})
				if len(dels) == opsChunk {
					if err := db.writeAll(ctx, dels); err != nil {
						it.Close()
						return fmt.Errorf("delete: %w", err)
					}
					dels = dels[:0]
				}
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	if err := db.writeAll(ctx, dels); err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	return nil
}

// gone is the g record of an id: whether it is a tombstone (unregistered,
// not registered again) and the last seq it ever used, which outlives the
// tombstone so that a new history continues after it.
type gone struct {
	Gone    bool
	LastSeq uint64
}

func (g gone) encode() []byte {
	e := enc{b: make([]byte, 0, 10)}
	e.byte1(formatV1)
	if g.Gone {
		e.byte1(1)
	} else {
		e.byte1(0)
	}
	e.u64(g.LastSeq)
	return e.b
}

func decodeGone(b []byte) (gone, error) {
	d := dec{b: b}
	d.format("tombstone")
	g := gone{Gone: d.byte1() == 1, LastSeq: d.u64()}
	if d.err != nil {
		return gone{}, fmt.Errorf("decode tombstone: %w", d.err)
	}
	return g, nil
}

// getGone reads id's g record; found is false when it has none.
func getGone(txn *bdg.Txn, id string) (g gone, found bool, err error) {
	v, err := getValue(txn, goneKey(id))
	if errors.Is(err, bdg.ErrKeyNotFound) {
		return gone{}, false, nil
	}
	if err != nil {
		return gone{}, false, fmt.Errorf("read tombstone of %q: %w", id, err)
	}
	g, err = decodeGone(v)
	if err != nil {
		return gone{}, false, fmt.Errorf("resource %q: %w", id, err)
	}
	return g, true, nil
}

func encodeRegistration(reg storage.Registration) []byte {
	e := enc{b: make([]byte, 0, 32+len(reg.Definition))}
	e.byte1(formatV1)
	e.time(reg.Registered)
	e.time(reg.Updated)
	e.str(string(reg.Definition))
	return e.b
}

func decodeRegistration(id string, b []byte) (storage.Registration, error) {
	d := dec{b: b}
	d.format("registration")
	reg := storage.Registration{ID: id, Registered: d.time(), Updated: d.time(), Definition: d.bytes()}
	if d.err != nil {
		return storage.Registration{}, fmt.Errorf("decode registration of %q: %w", id, d.err)
	}
	reg.Definition = append([]byte(nil), reg.Definition...) // out of the transaction's memory
	return reg, nil
}

// deletePollState deletes id's poll state, its progress and its
// poll-history records.
func (db *DB) deletePollState(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.poll.Update(func(txn *bdg.Txn) error {
		keys := append([][]byte{pollKey(id), pollProgressKey(id)}, pollRecordKeys(txn, id)...)
		for _, k := range keys {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// pollRecordKeys lists the keys of id's poll-history records (as many as
// the poller keeps, 200, so a list is fine), reading no value.
func pollRecordKeys(txn *bdg.Txn, id string) [][]byte {
	it := txn.NewIterator(bdg.IteratorOptions{Prefix: familyPrefix(prefixPollRec, id)})
	defer it.Close()
	var keys [][]byte
	for it.Rewind(); it.Valid(); it.Next() {
		keys = append(keys, it.Item().KeyCopy(nil))
	}
	return keys
}

// liveIDs remembers ids found not to be unregistered, so that a poll-state
// write (one per poll) need not read the tombstone each time. Unregister
// forgets its id, under the id's lock, before it writes the tombstone, and
// the writes check under that lock too. Bounded as hashHints is: beyond
// maxHints ids, the set starts again.
type liveIDs struct {
	mu sync.Mutex
	m  map[string]struct{}
}

func (l *liveIDs) has(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.m[id]
	return ok
}

func (l *liveIDs) add(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || len(l.m) >= maxHints {
		l.m = make(map[string]struct{})
	}
	l.m[strings.Clone(id)] = struct{}{}
}

func (l *liveIDs) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.m, id)
}
