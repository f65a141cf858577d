package badger

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// maxPooledOps bounds the planned-write buffers kept for reuse: a save's
// writes are ≈ 10 KB for a 20-item page; a rare huge page's buffer is let go.
const maxPooledOps = 256 << 10

// pooledBuf takes a *[]byte from p, or a new one.
func pooledBuf(p *sync.Pool) *[]byte {
	if b, ok := p.Get().(*[]byte); ok {
		return b
	}
	return new([]byte)
}

// prepared is what a save writes, computed once outside retries.
type prepared struct {
	version []byte
	digests [][digestLen]byte // of each item's f record
}

func (db *DB) prepare(doc *schema.Document) (*prepared, error) {
	buf := pooledBuf(&db.xmlBufs)
	defer db.xmlBufs.Put(buf) // the XML is only read to compress it
	xmlData, err := schema.AppendMarshal((*buf)[:0], doc)
	if err != nil {
		return nil, err
	}
	*buf = xmlData
	p := &prepared{
		version: encodeVersion(doc, xmlData),
		digests: make([][digestLen]byte, len(doc.Items)),
	}
	var scratch []byte // f records are rebuilt for the few items that changed
	for i := range doc.Items {
		scratch = appendContent(scratch[:0], &doc.Items[i])
		p.digests[i] = digest(scratch)
	}
	return p, nil
}

func (db *DB) save(ctx context.Context, doc *schema.Document) (storage.SaveResult, error) {
	if err := storage.ValidateDocument(doc); err != nil {
		return storage.SaveResult{}, fmt.Errorf("save: %w", err)
	}
	id := doc.RSSID
	hash := schema.ContentHash(doc)
	ts := doc.Timestamp.UTC()

	if err := db.space.check(); err != nil {
		return storage.SaveResult{}, fmt.Errorf("save %q: %w", id, err)
	}
	unlock := db.locks.lock(id)
	defer unlock()

	// Most saves of a polled page bring nothing new: answer them from the
	// latest version's hash (the resource's lock is held, so it cannot
	// change) without a write. The others are prepared and planned here, on
	// the caller's goroutine: the committer's goroutine runs a batch's
	// saves one after another, so it only applies their writes. Every
	// writer of the resource's keys holds its lock, so what is read here
	// stays true until the commit.
	if res, same, err := db.unchanged(ctx, id, hash); err != nil || same {
		if err != nil {
			return storage.SaveResult{}, fmt.Errorf("save %q: %w", id, err)
		}
		return res, nil
	}
	p, err := db.prepare(doc)
	if err != nil {
		return storage.SaveResult{}, fmt.Errorf("save %q: %w", id, err)
	}
	if err := ctx.Err(); err != nil {
		return storage.SaveResult{}, fmt.Errorf("save %q: %w", id, err)
	}
	var res storage.SaveResult
	opsBuf := pooledBuf(&db.opsBufs)
	defer func() {
		if cap(*opsBuf) <= maxPooledOps {
			db.opsBufs.Put(opsBuf)
		}
	}()
	ops := (*opsBuf)[:0]
	err = db.view(ctx, func(rtxn *bdg.Txn) error {
		ops = ops[:0] // View does not retry, but stay correct if it did
		txn := wtxn{Txn: rtxn, rec: &ops, plan: true}
		m, err := getMeta(txn.Txn, id)
		existed := err == nil
		if errors.Is(err, storage.ErrGone) || err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if existed && m.Hash == hash {
			res = storage.SaveResult{Changed: false, Seq: m.Latest, Versions: int(m.Count)}
			return nil
		}
		if m.Latest >= maxSeq {
			return fmt.Errorf("sequence numbers exhausted")
		}
		if p == nil {
			if p, err = db.prepare(doc); err != nil {
				return err
			}
		}
		seq := m.Latest + 1
		nowPresent, err := putItems(txn, id, &m, doc, seq, ts, p)
		if err != nil {
			return err
		}
		if err := txn.Set(versionKey(id, seq), p.version); err != nil {
			return fmt.Errorf("write version %d: %w", seq, err)
		}
		if !existed {
			m = meta{Created: ts, Oldest: seq}
			// The history starts after the id's last seq, if it had one;
			// from now on m keeps it.
			if err := txn.Delete(goneKey(id)); err != nil {
				return fmt.Errorf("delete seq floor: %w", err)
			}
		}
		m.URL = doc.URL
		m.Updated = ts
		m.Latest = seq
		m.Count++
		m.Hash = hash
		m.Title = doc.Channel.Title
		m.Description = doc.Channel.Description
		m.Present = nowPresent
		for _, op := range metaOps(nil, id, &m) {
			if err := setOrDelete(txn)(op.key, op.value); err != nil {
				return fmt.Errorf("write metadata: %w", err)
			}
		}
		res = storage.SaveResult{Changed: true, Seq: seq, Versions: int(m.Count)}
		return nil
	})
	*opsBuf = ops // kept for the next save once this one is committed
	if err == nil && len(ops) > 0 {
		// The cached info goes as soon as Badger has applied the batch, on
		// the committer, not once this goroutine is scheduled again.
		err = db.commits.doVisible(ctx, func(txn wtxn) error { return txn.apply(ops) }, func() { db.infos.invalidate(id) })
	}
	if err != nil {
		return storage.SaveResult{}, fmt.Errorf("save %q: %w", id, err)
	}
	db.hints.set(id, hash)
	return res, nil
}

// unchanged reports whether hash is the content hash of id's latest
// version, with what Save then answers; from the cached info when there is
// one, else from the stored metadata.
func (db *DB) unchanged(ctx context.Context, id string, hash schema.Hash) (storage.SaveResult, bool, error) {
	if info, _, ok := db.infos.get(id); ok {
		return storage.SaveResult{Seq: info.LatestSeq, Versions: info.Versions}, info.Hash == hash, nil
	}
	if db.hints.differs(id, hash) {
		return storage.SaveResult{}, false, nil // no read: it would wait for the commit in flight
	}
	var (
		m    meta
		same bool
	)
	err := db.view(ctx, func(txn *bdg.Txn) error {
		var err error
		m, err = getMetaRecord(txn, id) // the hash is in the record
		switch {
		case err == nil:
			same = m.Hash == hash
			return nil
		case errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrGone):
			return nil // a first version
		}
		return err
	})
	if err != nil || !same {
		return storage.SaveResult{}, false, err
	}
	db.hints.set(id, hash)
	return storage.SaveResult{Seq: m.Latest, Versions: int(m.Count)}, true, nil
}

// hashHints remembers 8 bytes of each resource's latest content hash, to
// tell a changed document without reading the store (a read waits for the
// commit in flight). Equal bytes prove nothing: the store is read then.
type hashHints struct {
	mu sync.Mutex
	m  map[string]uint64
}

func hintOf(h schema.Hash) uint64 { return binary.LittleEndian.Uint64(h[:8]) }

// differs reports whether id's latest version is known to have another hash.
func (hh *hashHints) differs(id string, h schema.Hash) bool {
	hh.mu.Lock()
	defer hh.mu.Unlock()
	v, ok := hh.m[id]
	return ok && v != hintOf(h)
}

func (hh *hashHints) set(id string, h schema.Hash) {
	hh.mu.Lock()
	defer hh.mu.Unlock()
	if hh.m == nil {
		hh.m = make(map[string]uint64)
	}
	if len(hh.m) >= maxHints {
		clear(hh.m) // a bound on memory: the hints come back with the next saves
	}
	hh.m[strings.Clone(id)] = hintOf(h) // a copy: id may be part of a larger string
}

// maxHints bounds the hints kept: beyond, a changed document costs a read.
const maxHints = 1 << 16

func (hh *hashHints) forget(id string) {
	hh.mu.Lock()
	defer hh.mu.Unlock()
	delete(hh.m, id)
}

// putItems updates the item index for version seq of doc and returns the
// items now present. An item of the previous version is found in m.Present
// and costs a write only if its content changed; a new id gets a slot (first
// seen now) and an x entry; a returning id keeps its slot; an item that is
// gone gets its last seen, seq and digest written to its x entry.
func putItems(txn wtxn, id string, m *meta, doc *schema.Document, seq uint64, ts time.Time, p *prepared) ([]present, error) {
	prev := make(map[string]int, len(m.Present))
	for i := range m.Present {
		prev[m.Present[i].ID] = i
	}
	seen := make([]bool, len(m.Present))
	pages := newPageEdits(id)
	now := make([]present, len(doc.Items))
	for i := range doc.Items {
		it := &doc.Items[i]
		np := present{ID: it.ID, Index: it.Index, Digest: p.digests[i]}
		var oldDigest *[digestLen]byte
		if k, ok := prev[it.ID]; ok {
			seen[k] = true
			np.Slot, oldDigest = m.Present[k].Slot, &m.Present[k].Digest
		} else {
			xk := itemKey(id, it.ID)
			x, found, err := getItemEntry(txn.Txn, xk)
			if err != nil {
				return nil, err
			}
			if found {
				np.Slot, oldDigest = x.Slot, &x.Digest
			} else {
				np.Slot = makeSlot(ts, seq, i)
			}
			x = itemEntry{Slot: np.Slot, Present: true}
			if err := txn.Set(xk, x.encode()); err != nil {
				return nil, fmt.Errorf("write item %q: %w", it.ID, err)
			}
		}
		if oldDigest == nil || *oldDigest != np.Digest {
			if err := txn.Set(slotKey(prefixContent, id, np.Slot), encodeContent(it)); err != nil {
				return nil, fmt.Errorf("write item %q: %w", it.ID, err)
			}
			pages.put(np.Slot, it, oldDigest == nil)
		}
		now[i] = np
	}
	for k, old := range m.Present {
		if seen[k] {
			continue
		}
		x := itemEntry{Slot: old.Slot, LastSeen: m.Updated, LastSeq: m.Latest, Index: old.Index, Digest: old.Digest}
		if err := txn.Set(itemKey(id, old.ID), x.encode()); err != nil {
			return nil, fmt.Errorf("write item %q: %w", old.ID, err)
		}
	}
	if err := pages.apply(func() *bdg.Txn { return txn.Txn }, setOrDelete(txn)); err != nil {
		return nil, err
	}
	return now, nil
}

func getItemEntry(txn *bdg.Txn, key []byte) (itemEntry, bool, error) {
	item, err := txn.Get(key)
	if errors.Is(err, bdg.ErrKeyNotFound) {
		return itemEntry{}, false, nil
	}
	if err != nil {
		return itemEntry{}, false, fmt.Errorf("read item entry: %w", err)
	}
	var x itemEntry
	err = item.Value(func(v []byte) error {
		x, err = decodeItemEntry(v)
		return err
	})
	if err != nil {
		return itemEntry{}, false, err
	}
	return x, true, nil
}
