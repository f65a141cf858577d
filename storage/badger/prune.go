package badger

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	bdg "github.com/dgraph-io/badger/v4"
	"github.com/dynamo-rss/dynamo/storage"
)

// pruneChunk is how many versions one prune transaction drops at most.
const pruneChunk = 256

func (db *DB) prune(ctx context.Context, id string, r storage.Retention, now time.Time) (int, error) {
	if err := readID(id); err != nil {
		return 0, err
	}
	if r.MaxVersions < 0 || r.MaxAge < 0 {
		return 0, fmt.Errorf("prune %q: %w: negative retention %+v", id, storage.ErrInvalid, r)
	}
	if r.MaxVersions == 0 && r.MaxAge == 0 {
		return 0, nil
	}
	unlock := db.locks.lock(id)
	defer unlock()
	defer db.infos.invalidate(id) // after the commits, before the unlock

	var (
		m    meta
		drop uint64 // versions to drop, from the oldest
	)
	cutoff := now.Add(-r.MaxAge)
	err := db.view(ctx, func(txn *bdg.Txn) error {
		var err error
		if m, err = getMeta(txn, id); err != nil {
			return err
		}
		if r.MaxVersions > 0 && m.Count > uint64(r.MaxVersions) {
			drop = m.Count - uint64(r.MaxVersions)
		}
		if r.MaxAge == 0 || drop >= m.Count-1 {
			drop = min(drop, m.Count-1)
			return nil
		}
		// Walk from the first version the count keeps while versions are too old.
		opts := bdg.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = familyPrefix(prefixVersion, id)
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Seek(versionKey(id, m.Oldest+drop)); it.Valid() && drop < m.Count-1; it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			var vi storage.VersionInfo
			err := it.Item().Value(func(v []byte) error {
				var err error
				vi, _, err = decodeVersionHeader(0, v)
				return err
			})
			if err != nil {
				return err
			}
			if !vi.Timestamp.Before(cutoff) {
				break
			}
			drop++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("prune %q: %w", id, err)
	}
	if drop == 0 {
		return 0, nil
	}
	gone, err := db.itemsBelow(ctx, id, m.Oldest+drop)
	if err != nil {
		return 0, fmt.Errorf("prune %q: %w", id, err)
	}
	dropped := 0
	for done := uint64(0); done < drop; {
		n := min(drop-done, pruneChunk)
		newOldest := m.Oldest + n
		var del []unindexed // items whose last version goes in this chunk
		for len(gone) > 0 && gone[0].lastSeq < newOldest {
			del = append(del, gone[0])
			gone = gone[1:]
		}
		if err := db.pruneStep(ctx, id, &m, n, del); err != nil {
			return dropped, fmt.Errorf("prune %q: %w", id, err)
		}
		done += n
		dropped += int(n)
	}
	return dropped, nil
}

// unindexed is an item to drop from the index: its key and slot.
type unindexed struct {
	itemKey []byte
	slot    []byte
	lastSeq uint64
}

// itemsBelow lists the items last seen before seq, by last seq.
func (db *DB) itemsBelow(ctx context.Context, id string, seq uint64) ([]unindexed, error) {
	var out []unindexed
	err := db.view(ctx, func(txn *bdg.Txn) error {
		opts := bdg.DefaultIteratorOptions
		opts.Prefix = familyPrefix(prefixItem, id)
		it := txn.NewIterator(opts)
		defer it.Close()
		var scan scanCheck
		for it.Rewind(); it.Valid(); it.Next() {
			if err := scan.step(ctx); err != nil {
				return err
			}
			err := it.Item().Value(func(v []byte) error {
				x, err := decodeItemEntry(v)
				if err != nil {
					return err
				}
				if !x.Present && x.LastSeq < seq {
					out = append(out, unindexed{itemKey: it.Item().KeyCopy(nil), slot: x.Slot, lastSeq: x.LastSeq})
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].lastSeq < out[j].lastSeq })
	return out, err
}

// pruneStep drops the n oldest versions and the items whose last version is
// among them. It commits in one transaction when the deletions fit; when they
// do not, item deletions are committed first and the versions and metadata
// last, so an interruption leaves versions whose items are partly unindexed,
// which the next Prune completes (and Check reports meanwhile).
func (db *DB) pruneStep(ctx context.Context, id string, m *meta, n uint64, del []unindexed) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// The writes are listed first (the caller holds id's lock, so what is
	// read stays true), then committed in order: the metadata last.
	var ops []kv
	pages := newPageEdits(id)
	for _, u := range del {
		ops = append(ops, kv{key: u.itemKey}, kv{key: slotKey(prefixContent, id, u.slot)})
		pages.remove(u.slot)
	}
	err := db.view(ctx, func(txn *bdg.Txn) error {
		return pages.apply(func() *bdg.Txn { return txn }, func(k, v []byte) error {
			ops = append(ops, kv{key: k, value: v})
			return nil
		})
	})
	if err != nil {
		return err
	}
	for seq := m.Oldest; seq < m.Oldest+n; seq++ {
		ops = append(ops, kv{key: versionKey(id, seq)})
	}
	next := *m
	next.Oldest += n
	next.Count -= n
	// The present list is unchanged; its chunks too, unless the record was
	// written by a release that kept a long list in the record itself.
	ops = metaOps(ops, id, &next)
	if err := db.writeAll(ctx, ops); err != nil {
		return fmt.Errorf("commit prune: %w", err)
	}
	*m = next
	return nil
}

// seqOfVersionKey returns the seq at the end of a v key.
func seqOfVersionKey(k []byte) uint64 { return binary.BigEndian.Uint64(k[len(k)-seqLen:]) }
