package badger

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	bdg "github.com/dgraph-io/badger/v4"
)

// Group commit.
//
// Every write to the store goes through one goroutine, the committer: the
// requests that arrive while it is busy run in ONE transaction, which is
// written to the journal (journal.go: one synced write for the whole batch)
// and then committed to Badger, which does not sync. Each caller waits until
// the batch is durable, so a nil error still means "on disk". (Badger's own
// synced commit gathers concurrent transactions into one write too, but
// then syncs the memtable's log once per transaction, and each sync is an
// msync of a memory-mapped file.) With NoSyncWrites there is no journal and
// nothing is synced.
//
// A save's fn runs on the committer's goroutine, inside the shared
// transaction. It must only touch its own resource's keys (the caller holds
// that resource's lock, so no two fns of one batch touch the same keys), and
// it must be safe to run again: a batch is rebuilt without a save whose fn
// failed, and split when it is too big for one transaction.

// maxBatch bounds the saves of one transaction (Badger also bounds its size:
// a batch over that is split in two).
const maxBatch = 128

// errClosed answers saves that arrive after Close.
var errClosed = errors.New("store closed")

type commitReq struct {
	fn      func(txn wtxn) error
	visible func()     // nil, or run once the batch's writes are readable, before done
	done    chan error // buffered: the committer never blocks on a caller
}

type committer struct {
	bdb  *bdg.DB
	j    *journal        // nil: nothing is synced (NoSyncWrites, InMemory)
	rec  []byte          // the journal record of the transaction being built
	reqs chan *commitReq // unbuffered: a request is either taken or refused
	stop <-chan struct{}

	commits, saves atomic.Uint64 // transactions committed, and the saves in them
}

// do runs fn in the next batch and returns once that batch is committed
// (durable with synced writes) or failed. ctx ends the wait for a batch to
// take fn; once taken, fn runs and do waits for its commit.
func (c *committer) do(ctx context.Context, fn func(txn wtxn) error) error {
	return c.doVisible(ctx, fn, nil)
}

// doVisible is do, with visible run on the committer's goroutine as soon as
// Badger has applied the batch (its writes readable), before the callers
// are answered: a cache of what fn changes is dropped there, so that no
// reader sees the new writes beside the cache's old summary of them while
// the callers are woken.
func (c *committer) doVisible(ctx context.Context, fn func(txn wtxn) error, visible func()) error {
	r := &commitReq{fn: fn, visible: visible, done: make(chan error, 1)}
	select {
	case c.reqs <- r:
	case <-c.stop:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-r.done
}

// run takes requests until stop is closed: one, then every other caller
// already waiting, committed together.
func (c *committer) run() {
	batch := make([]*commitReq, 0, maxBatch)
	for {
		select {
		case r := <-c.reqs:
			batch = append(batch[:0], r)
		case <-c.stop:
			return
		}
	gather:
		for len(batch) < maxBatch {
			select {
			case r := <-c.reqs:
				batch = append(batch, r)
			default:
				break gather
			}
		}
		c.commit(batch)
		clear(batch) // let the requests go
	}
}

// commit runs the batch's fns in one transaction and answers every request.
func (c *committer) commit(batch []*commitReq) {
	for len(batch) > 0 {
		txn := c.bdb.NewTransaction(true)
		w := wtxn{Txn: txn}
		if c.j != nil {
			c.rec = append(c.rec[:0], make([]byte, journalHeader)...) // room for the header
			w.rec = &c.rec
		}
		failed, tooBig := -1, false
		var ferr error
		for i, r := range batch {
			if ferr = r.fn(w); ferr != nil {
				failed, tooBig = i, errors.Is(ferr, bdg.ErrTxnTooBig)
				break
			}
		}
		switch {
		case failed < 0:
			err := c.commitTxn(txn)
			c.commits.Add(1)
			c.saves.Add(uint64(len(batch)))
			if err != nil {
				err = fmt.Errorf("commit: %w", err)
			}
			for _, r := range batch {
				if r.visible != nil {
					r.visible() // even after an error: the writes may be readable
				}
			}
			for _, r := range batch {
				r.done <- err
			}
			return
		case tooBig && failed > 0:
			// Commit the requests that fit; the rest go in the next round.
			// The transaction is rebuilt without the one that overflowed,
			// whose writes are partly in it.
			txn.Discard()
			c.commit(batch[:failed])
			batch = batch[failed:]
		default:
			// This save fails alone; the others run again without it.
			txn.Discard()
			batch[failed].done <- ferr
			batch = append(batch[:failed:failed], batch[failed+1:]...)
		}
	}
}

// commitTxn commits txn. With the journal, the batch's record is written
// and synced first: Badger must never hold a write the journal lacks (a
// replay would then revert some of its keys and not others). After a failed
// Badger commit the journal stops (see journal.write).
func (c *committer) commitTxn(txn *bdg.Txn) error {
	if c.j == nil || len(c.rec) == journalHeader {
		return txn.Commit()
	}
	if err := c.j.write(c.rec); err != nil {
		txn.Discard()
		return err
	}
	err := txn.Commit()
	if err != nil {
		c.j.fail(err)
	}
	return err
}

// wtxn is a read-write transaction of the committer: its writes are also
// recorded for the journal. Everything that writes to the store writes
// through one.
//
// A planning wtxn wraps a read-only transaction and only records: a save
// computes its writes on its own goroutine, and the committer's transaction
// then just applies them (see [wtxn.apply]).
type wtxn struct {
	*bdg.Txn
	rec  *[]byte // nil: no journal
	plan bool    // record the writes without making them
}

func (t wtxn) Set(key, value []byte) error {
	if !t.plan {
		if err := t.Txn.Set(key, value); err != nil {
			return err
		}
	}
	if t.rec != nil {
		*t.rec = appendOp(*t.rec, key, value, false)
	}
	return nil
}

func (t wtxn) Delete(key []byte) error {
	if !t.plan {
		if err := t.Txn.Delete(key); err != nil {
			return err
		}
	}
	if t.rec != nil {
		*t.rec = appendOp(*t.rec, key, nil, true)
	}
	return nil
}

// apply makes the writes a planning wtxn recorded in ops (which must stay
// unchanged until the commit: Badger keeps the slices).
func (t wtxn) apply(ops []byte) error {
	err := forEachOp(ops, func(key, value []byte, del bool) error { return writeOp(t.Txn, key, value, del) })
	if err != nil {
		return err
	}
	if t.rec != nil {
		*t.rec = append(*t.rec, ops...)
	}
	return nil
}
