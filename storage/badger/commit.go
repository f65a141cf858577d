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
// With synced writes Badger makes every committed transaction durable before
// Commit returns, and it already gathers the transactions committed at the
// same time into one write; but it then syncs the memtable's log once per
// transaction of that write (writeToLSM), so N concurrent saves still cost N
// msyncs. The committer instead runs the saves that arrive while it is busy
// in ONE transaction: one write, one sync of the value log and one of the
// memtable's log for the whole batch. Each caller waits until the batch is
// durable, so a nil error still means "on disk".
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
	fn   func(txn *bdg.Txn) error
	done chan error // buffered: the committer never blocks on a caller
}

type committer struct {
	bdb  *bdg.DB
	reqs chan *commitReq // unbuffered: a request is either taken or refused
	stop <-chan struct{}

	commits, saves atomic.Uint64 // transactions committed, and the saves in them
}

// do runs fn in the next batch and returns once that batch is committed
// (durable with synced writes) or failed. ctx ends the wait for a batch to
// take fn; once taken, fn runs and do waits for its commit.
func (c *committer) do(ctx context.Context, fn func(txn *bdg.Txn) error) error {
	r := &commitReq{fn: fn, done: make(chan error, 1)}
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
		failed, tooBig := -1, false
		var ferr error
		for i, r := range batch {
			if ferr = r.fn(txn); ferr != nil {
				failed, tooBig = i, errors.Is(ferr, bdg.ErrTxnTooBig)
				break
			}
		}
		switch {
		case failed < 0:
			err := txn.Commit()
			c.commits.Add(1)
			c.saves.Add(uint64(len(batch)))
			if err != nil {
				err = fmt.Errorf("commit: %w", err)
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
