package badger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// ctxCheckEvery is how many keys a scan reads between two ctx.Err() checks.
const ctxCheckEvery = 1024

// scanCheck tells a long scan when to look at its context: a cancelled
// query stops within ctxCheckEvery keys, and the keys between cost no
// ctx.Err() (a lock in a cancellable context).
type scanCheck struct{ n int }

// step counts a key and, at every ctxCheckEvery-th, returns ctx's error.
func (c *scanCheck) step(ctx context.Context) error {
	if c.n++; c.n < ctxCheckEvery {
		return nil
	}
	c.n = 0
	return ctx.Err()
}

func (db *DB) resources(ctx context.Context) ([]storage.ResourceInfo, error) {
	var out []storage.ResourceInfo
	err := db.view(ctx, func(txn *bdg.Txn) error {
		opts := bdg.DefaultIteratorOptions
		opts.Prefix = []byte{prefixMeta}
		it := txn.NewIterator(opts)
		defer it.Close()
		var scan scanCheck
		for it.Rewind(); it.Valid(); it.Next() {
			if err := scan.step(ctx); err != nil {
				return err
			}
			id := string(it.Item().Key()[1:])
			err := it.Item().Value(func(v []byte) error {
				m, err := decodeMeta(v)
				if err != nil {
					return fmt.Errorf("resource %q: %w", id, err)
				}
				out = append(out, m.info(id))
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list resources: %w", err)
	}
	return out, nil
}

func (db *DB) resource(ctx context.Context, id string) (storage.ResourceInfo, error) {
	if err := readID(id); err != nil {
		return storage.ResourceInfo{}, err
	}
	info, gen, ok := db.infos.get(id)
	if ok {
		return info, nil
	}
	err := db.view(ctx, func(txn *bdg.Txn) error {
		m, err := getMetaRecord(txn, id) // the record: no present list needed
		if err != nil {
			return err
		}
		info = m.info(id)
		return nil
	})
	if err == nil {
		db.infos.fill(id, info, gen)
	}
	return info, err
}

func (db *DB) version(ctx context.Context, id string, n int) (*schema.Document, storage.VersionInfo, error) {
	if err := readID(id); err != nil {
		return nil, storage.VersionInfo{}, err
	}
	var (
		doc *schema.Document
		vi  storage.VersionInfo
	)
	err := db.view(ctx, func(txn *bdg.Txn) error {
		m, err := getMetaRecord(txn, id) // the record: no present list needed
		if err != nil {
			return err
		}
		if n < 1 || uint64(n) > m.Count {
			return fmt.Errorf("version %d of %q (%d kept): %w", n, id, m.Count, storage.ErrNotFound)
		}
		seq := m.Latest - uint64(n) + 1
		item, err := txn.Get(versionKey(id, seq))
		if errors.Is(err, bdg.ErrKeyNotFound) {
			return fmt.Errorf("%w: version %d of %q is missing", storage.ErrInconsistent, seq, id)
		}
		if err != nil {
			return fmt.Errorf("read version %d of %q: %w", seq, id, err)
		}
		return item.Value(func(v []byte) error {
			doc, vi, err = decodeVersion(seq, v)
			return err
		})
	})
	if err != nil {
		return nil, storage.VersionInfo{}, err
	}
	return doc, vi, nil
}

func (db *DB) versions(ctx context.Context, id string, offset, limit int) ([]storage.VersionInfo, error) {
	if err := readID(id); err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, fmt.Errorf("versions of %q: %w: negative offset %d", id, storage.ErrInvalid, offset)
	}
	var out []storage.VersionInfo
	err := db.view(ctx, func(txn *bdg.Txn) error {
		m, err := getMetaRecord(txn, id) // the record: no present list needed
		if err != nil {
			return err
		}
		if uint64(offset) >= m.Count {
			return nil
		}
		n := m.Count - uint64(offset)
		if limit > 0 && uint64(limit) < n {
			n = uint64(limit)
		}
		out = make([]storage.VersionInfo, 0, n)
		opts := bdg.DefaultIteratorOptions
		opts.Reverse = true
		opts.PrefetchValues = false
		opts.Prefix = familyPrefix(prefixVersion, id)
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Seek(versionKey(id, m.Latest-uint64(offset))); it.Valid() && uint64(len(out)) < n; it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			seq := binary.BigEndian.Uint64(it.Item().Key()[len(opts.Prefix):])
			err := it.Item().Value(func(v []byte) error {
				vi, _, err := decodeVersionHeader(seq, v)
				out = append(out, vi)
				return err
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("versions of %q: %w", id, err)
	}
	return out, nil
}

func (db *DB) items(ctx context.Context, id string, q storage.ItemQuery) ([]storage.Item, error) {
	if err := readID(id); err != nil {
		return nil, err
	}
	var out []storage.Item
	err := db.view(ctx, func(txn *bdg.Txn) error {
		m, err := getMeta(txn, id)
		if err != nil {
			return err
		}
		if len(q.Terms) == 0 {
			return scanContent(ctx, txn, id, &m, q.Max, &out)
		}
		return scanSearch(ctx, txn, id, &m, q, &out)
	})
	if err != nil {
		return nil, fmt.Errorf("items of %q: %w", id, err)
	}
	return out, nil
}

// newestFirst iterates one family of a resource's slot-keyed entries, newest
// slot first: slots are inverted, so this is a forward scan, which Badger does
// faster than a reverse one (its memtable skiplist has no back links).
func newestFirst(txn *bdg.Txn, p byte, id string, prefetch int) (*bdg.Iterator, int) {
	opts := bdg.DefaultIteratorOptions
	opts.Prefix = familyPrefix(p, id)
	opts.PrefetchValues = prefetch > 0
	if prefetch > 0 {
		opts.PrefetchSize = min(prefetch, 100)
	}
	return txn.NewIterator(opts), len(opts.Prefix)
}

// scanContent appends up to max items (0: all), newest first.
func scanContent(ctx context.Context, txn *bdg.Txn, id string, m *meta, max int, out *[]storage.Item) error {
	it, plen := newestFirst(txn, prefixContent, id, max)
	defer it.Close()
	var scan scanCheck
	for it.Rewind(); it.Valid() && (max <= 0 || len(*out) < max); it.Next() {
		if err := scan.step(ctx); err != nil {
			return err
		}
		item, err := readItem(txn, id, m, it.Item().Key()[plen:], it.Item())
		if err != nil {
			return err
		}
		*out = append(*out, item)
	}
	return nil
}

// scanSearch matches the folded fields of every item, page by page, newest
// first, and reads the content of matches only, up to q.Max.
func scanSearch(ctx context.Context, txn *bdg.Txn, id string, m *meta, q storage.ItemQuery, out *[]storage.Item) error {
	it, plen := newestFirst(txn, prefixSearch, id, 0)
	defer it.Close()
	var matches []uint32 // positions matched in the current page
	pre := newPrefilter(q.Terms)
	var scan scanCheck
	for it.Rewind(); it.Valid() && (q.Max <= 0 || len(*out) < q.Max); it.Next() {
		if err := scan.step(ctx); err != nil {
			return err
		}
		matches = matches[:0]
		err := it.Item().Value(func(v []byte) error {
			return scanPage(v, func(e *pageEntry) bool {
				if !pre.mayMatch(e) {
					return true
				}
				// The strings alias v only for this call: MatchFolded keeps none
				// of them, and not copying saves three allocations per item.
				if q.Terms.MatchFolded(unsafeString(e.fields[0]), unsafeString(e.fields[1]), unsafeString(e.fields[2])) {
					matches = append(matches, e.pos)
				}
				return true
			})
		})
		if err != nil {
			return err
		}
		if len(matches) == 0 {
			continue
		}
		page := it.Item().Key()[plen:]
		for _, pos := range matches {
			if q.Max > 0 && len(*out) >= q.Max {
				break
			}
			slot := binary.BigEndian.AppendUint32(bytes.Clone(page), pos)
			fi, err := txn.Get(slotKey(prefixContent, id, slot))
			if errors.Is(err, bdg.ErrKeyNotFound) {
				return fmt.Errorf("%w: search entry %x/%d has no content", storage.ErrInconsistent, page, pos)
			}
			if err != nil {
				return fmt.Errorf("read matched item: %w", err)
			}
			item, err := readItem(txn, id, m, slot, fi)
			if err != nil {
				return err
			}
			*out = append(*out, item)
		}
	}
	return nil
}

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// readItem decodes the content entry ci of the item at slot and completes it.
func readItem(txn *bdg.Txn, id string, m *meta, slot []byte, ci *bdg.Item) (storage.Item, error) {
	var si schema.Item
	err := ci.Value(func(v []byte) error {
		var err error
		si, err = decodeContent(v)
		return err
	})
	if err != nil {
		return storage.Item{}, err
	}
	return completeItem(txn, id, m, slot, si)
}

// completeItem adds first seen (from the slot), last seen and seq (from x,
// or from the metadata while the item is in the latest version).
func completeItem(txn *bdg.Txn, id string, m *meta, slot []byte, si schema.Item) (storage.Item, error) {
	x, found, err := getItemEntry(txn, itemKey(id, si.ID))
	if err != nil {
		return storage.Item{}, err
	}
	if !found {
		return storage.Item{}, fmt.Errorf("%w: item %q has content but no index entry", storage.ErrInconsistent, si.ID)
	}
	if x.Present {
		x.LastSeen, x.LastSeq = m.Updated, m.Latest
		x.Index = m.presentIndex(si.ID)
	}
	si.Index = x.Index
	return storage.Item{Item: si, FirstSeen: slotFirstSeen(slot), LastSeen: x.LastSeen, Seq: x.LastSeq}, nil
}

func (db *DB) pollState(ctx context.Context, id string) ([]byte, error) {
	state, _, err := db.readPollState(ctx, id, false)
	return state, err
}

func (db *DB) pollStateProgress(ctx context.Context, id string) (state, progress []byte, err error) {
	return db.readPollState(ctx, id, true)
}

// readPollState reads id's poll state and, when withProgress, its progress,
// in one transaction.
func (db *DB) readPollState(ctx context.Context, id string, withProgress bool) (state, progress []byte, err error) {
	if err := readID(id); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	err = db.poll.View(func(txn *bdg.Txn) error {
		item, err := txn.Get(pollKey(id))
		if errors.Is(err, bdg.ErrKeyNotFound) {
			return db.noPollState(ctx, id)
		}
		if err != nil {
			return fmt.Errorf("read poll state of %q: %w", id, err)
		}
		if state, err = item.ValueCopy(nil); err != nil || !withProgress {
			return err
		}
		item, err = txn.Get(pollProgressKey(id))
		if errors.Is(err, bdg.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read poll-state progress of %q: %w", id, err)
		}
		progress, err = item.ValueCopy(nil)
		return err
	})
	return state, progress, err
}

// PollStates calls fn with every stored poll state and its progress (nil
// when it has none; see SavePollStateRecords), in id order, in one pass over
// the poll-state store: what a start-up needs, much faster than a read per
// resource. state and progress are only valid during the call.
func (db *DB) PollStates(ctx context.Context, fn func(id string, state, progress []byte) error) error {
	return db.poll.View(func(txn *bdg.Txn) error {
		it := txn.NewIterator(bdg.IteratorOptions{Prefix: []byte{prefixPoll}, PrefetchValues: false})
		defer it.Close()
		// The progress values, in the same id order: read beside the states.
		pro := txn.NewIterator(bdg.IteratorOptions{Prefix: []byte{prefixPollPro}, PrefetchValues: false})
		defer pro.Close()
		pro.Rewind()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			item := it.Item()
			id := item.Key()[1:]
			var progress []byte
			for ; pro.Valid(); pro.Next() {
				c := bytes.Compare(pro.Item().Key()[1:], id)
				if c > 0 {
					break
				}
				if c == 0 {
					var err error
					if progress, err = pro.Item().ValueCopy(nil); err != nil {
						return fmt.Errorf("poll-state progress of %q: %w", id, err)
					}
					pro.Next()
					break
				}
			}
			if err := item.Value(func(v []byte) error { return fn(string(id), v, progress) }); err != nil {
				return fmt.Errorf("poll state of %q: %w", id, err)
			}
		}
		return nil
	})
}

func (db *DB) savePollState(ctx context.Context, id string, state []byte) error {
	if state == nil {
		state = []byte{}
	}
	return db.writePollState(ctx, id, state, nil, 0, nil, 0)
}

func (db *DB) savePollStateRecords(ctx context.Context, id string, state, progress []byte, first uint64, recs [][]byte, keep uint64) error {
	if first == 0 || keep == 0 {
		return fmt.Errorf("save poll state of %q: %w: records from %d, keeping %d", id, storage.ErrInvalid, first, keep)
	}
	return db.writePollState(ctx, id, state, progress, first, recs, keep)
}

// writePollState replaces id's poll state (unless state is nil) and its
// progress (deleted when nil), and appends recs (see SavePollStateRecords)
// in one unsynced write, unless id is unregistered.
func (db *DB) writePollState(ctx context.Context, id string, state, progress []byte, first uint64, recs [][]byte, keep uint64) error {
	if err := storage.ValidateID(id); err != nil {
		return fmt.Errorf("save poll state: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := db.space.check(); err != nil {
		return fmt.Errorf("save poll state of %q: %w", id, err)
	}
	unlock := db.locks.lock(id) // an Unregister deletes the state under it
	defer unlock()
	var err error
	if !db.live.has(id) {
		err = db.view(ctx, func(txn *bdg.Txn) error {
			g, _, err := getGone(txn, id)
			if err == nil && g.Gone {
				err = fmt.Errorf("resource %q: %w", id, storage.ErrGone)
			}
			return err
		})
		if err == nil {
			db.live.add(id)
		}
	}
	if err == nil {
		// No copies: Badger keeps the slices until the commit, which ends
		// before this returns (the caller does not touch them meanwhile).
		err = db.poll.Update(func(txn *bdg.Txn) error {
			if state != nil {
				if err := txn.Set(pollKey(id), state); err != nil {
					return err
				}
			}
			var err error
			if progress != nil {
				err = txn.Set(pollProgressKey(id), progress)
			} else {
				err = txn.Delete(pollProgressKey(id))
			}
			if err != nil {
				return err
			}
			if first == 1 && len(recs) > 0 {
				// A history that starts again (the first records of an id,
				// or after a version that did not number them) replaces
				// whatever records are left: none may follow it unasked.
				for _, k := range pollRecordKeys(txn, id) {
					if err := txn.Delete(k); err != nil {
						return err
					}
				}
			}
			for i, rec := range recs {
				seq := first + uint64(i)
				if err := txn.Set(pollRecordKey(id, seq), rec); err != nil {
					return err
				}
				if seq > keep {
					if err := txn.Delete(pollRecordKey(id, seq-keep)); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("save poll state of %q: %w", id, err)
	}
	return nil
}

func (db *DB) pollRecords(ctx context.Context, id string) ([][]byte, error) {
	if err := readID(id); err != nil {
		return nil, err
	}
	var out [][]byte
	err := db.poll.View(func(txn *bdg.Txn) error {
		return scanPrefix(ctx, txn, familyPrefix(prefixPollRec, id), func(_, v []byte) error {
			out = append(out, bytes.Clone(v))
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read poll history of %q: %w", id, err)
	}
	return out, nil
}

// noPollState is the error for an id without poll state: ErrGone if it was
// unregistered, else ErrNotFound.
func (db *DB) noPollState(ctx context.Context, id string) error {
	return db.view(ctx, func(txn *bdg.Txn) error {
		g, _, err := getGone(txn, id)
		switch {
		case err != nil:
			return err
		case g.Gone:
			return fmt.Errorf("poll state of %q: %w", id, storage.ErrGone)
		}
		return fmt.Errorf("poll state of %q: %w", id, storage.ErrNotFound)
	})
}
