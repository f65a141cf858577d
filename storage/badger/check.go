package badger

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

// maxFindings bounds the findings Check reports.
const maxFindings = 50

// expected is what the kept versions say about one item id.
type expected struct {
	firstSeq uint64 // first kept version containing it
	lastSeq  uint64
	index    int // in the last version containing it
	lastSeen timeOf
	content  []byte // f record of its latest content
	item     *schema.Item
}

type timeOf = struct{ sec, nsec int64 }

func (db *DB) check(ctx context.Context) error {
	var findings []error
	bad := func(format string, args ...any) {
		if len(findings) < maxFindings {
			findings = append(findings, fmt.Errorf("%w: "+format, append([]any{storage.ErrInconsistent}, args...)...))
		}
	}
	err := db.view(ctx, func(txn *bdg.Txn) error {
		metas := map[string]meta{}
		if err := scanPrefix(ctx, txn, []byte{prefixMeta}, func(k, v []byte) error {
			id := string(k[1:])
			m, err := decodeMeta(v)
			if err != nil {
				bad("resource %q: %v", id, err)
				return nil
			}
			if err := loadPresent(txn, id, &m); err != nil {
				// Reported once; its other keys still have their metadata.
				bad("resource %q: %v", id, err)
			}
			metas[id] = m
			return nil
		}); err != nil {
			return err
		}
		// No family key may belong to a resource without metadata, and no
		// present-list chunk may lie beyond its metadata's chunk count.
		for _, p := range familiesOfMeta {
			if err := scanPrefix(ctx, txn, []byte{p}, func(k, _ []byte) error {
				id, rest, ok := idOf(k)
				m, known := metas[id]
				switch {
				case !ok:
					bad("malformed key %q", k)
				case !known:
					bad("key %q of resource %q without metadata", k, id)
				case p == prefixPresent && !m.namesChunk(rest):
					bad("resource %q: present-list chunk %q its metadata does not name", id, k)
				}
				return nil
			}); err != nil {
				return err
			}
		}
		if err := checkRegistry(ctx, txn, metas, bad); err != nil {
			return err
		}
		for id, m := range metas {
			if err := db.checkResource(ctx, txn, id, m, bad); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	return errors.Join(findings...)
}

// checkRegistry checks registrations and g records: each decodes, a
// tombstone has neither metadata nor a registration, and a seq floor (a g
// record that is no tombstone) exists only until the id's first save.
func checkRegistry(ctx context.Context, txn *bdg.Txn, metas map[string]meta, bad func(string, ...any)) error {
	registered := map[string]bool{}
	if err := scanPrefix(ctx, txn, []byte{prefixReg}, func(k, v []byte) error {
		id := string(k[1:])
		if _, err := decodeRegistration(id, v); err != nil {
			bad("%v", err)
		}
		registered[id] = true
		return nil
	}); err != nil {
		return err
	}
	return scanPrefix(ctx, txn, []byte{prefixGone}, func(k, v []byte) error {
		id := string(k[1:])
		g, err := decodeGone(v)
		m, hasMeta := metas[id]
		switch {
		case err != nil:
			bad("resource %q: %v", id, err)
		case g.Gone && hasMeta:
			bad("resource %q is unregistered but has metadata", id)
		case g.Gone && registered[id]:
			bad("resource %q is unregistered but has a registration", id)
		case !g.Gone && hasMeta:
			bad("resource %q has a seq floor %d beside its metadata (latest %d)", id, g.LastSeq, m.Latest)
		}
		return nil
	})
}

func (db *DB) checkResource(ctx context.Context, txn *bdg.Txn, id string, m meta, bad func(string, ...any)) error {
	if m.Count == 0 || m.Latest-m.Oldest+1 != m.Count {
		bad("resource %q: count %d does not match seq range %d..%d", id, m.Count, m.Oldest, m.Latest)
	}
	want := map[string]*expected{}
	next := m.Oldest
	var latest *schema.Document
	err := scanPrefix(ctx, txn, familyPrefix(prefixVersion, id), func(k, v []byte) error {
		seq := seqOfVersionKey(k)
		if seq != next {
			bad("resource %q: version %d found where %d was expected", id, seq, next)
		}
		next = seq + 1
		doc, vi, err := decodeVersion(seq, v)
		if err != nil {
			bad("resource %q: %v", id, err)
			return nil
		}
		if doc.RSSID != id || !doc.Timestamp.Equal(vi.Timestamp) || len(doc.Items) != vi.Items ||
			doc.Channel.Title != vi.Title || doc.Channel.Description != vi.Description {
			bad("resource %q: version %d header disagrees with its document", id, seq)
		}
		ts := doc.Timestamp.UTC()
		for i := range doc.Items {
			it := &doc.Items[i]
			e := want[it.ID]
			if e == nil {
				e = &expected{firstSeq: seq}
				want[it.ID] = e
			}
			e.lastSeq = seq
			e.index = it.Index
			e.lastSeen = timeOf{ts.Unix(), int64(ts.Nanosecond())}
			e.content = encodeContent(it)
			e.item = it
		}
		latest = doc
		return nil
	})
	if err != nil {
		return err
	}
	if next != m.Latest+1 {
		bad("resource %q: versions end at %d, metadata says %d", id, next-1, m.Latest)
	}
	if latest != nil {
		if schema.ContentHash(latest) != m.Hash {
			bad("resource %q: metadata hash is not the latest version's", id)
		}
		if latest.Channel.Title != m.Title || latest.Channel.Description != m.Description || !latest.Timestamp.Equal(m.Updated) {
			bad("resource %q: metadata channel or updated time is not the latest version's", id)
		}
	}
	presentAt := map[string]int{}
	for k, p := range m.Present {
		presentAt[p.ID] = k
	}
	if latest != nil {
		same := len(latest.Items) == len(m.Present)
		for i := 0; same && i < len(latest.Items); i++ {
			same = latest.Items[i].ID == m.Present[i].ID
		}
		if !same {
			bad("resource %q: metadata's present items are not the latest version's", id)
		}
	}
	slots := map[string]bool{}
	pages := map[string]map[uint32]folded{} // expected search pages
	err = scanPrefix(ctx, txn, familyPrefix(prefixItem, id), func(k, v []byte) error {
		_, rest, _ := idOf(k)
		itemID := string(rest)
		x, err := decodeItemEntry(v)
		if err != nil {
			bad("resource %q item %q: %v", id, itemID, err)
			return nil
		}
		slots[string(x.Slot)] = true
		e := want[itemID]
		if e == nil {
			bad("resource %q: item %q is indexed but in no kept version", id, itemID)
			return nil
		}
		delete(want, itemID)
		dg := x.Digest
		if x.Present {
			k, ok := presentAt[itemID]
			switch {
			case !ok:
				bad("resource %q item %q: marked present but not in the latest version", id, itemID)
			case !bytes.Equal(m.Present[k].Slot, x.Slot):
				bad("resource %q item %q: slot differs between metadata and index", id, itemID)
			default:
				dg = m.Present[k].Digest
				if m.Present[k].Index != e.index {
					bad("resource %q item %q: metadata index %d, latest version says %d", id, itemID, m.Present[k].Index, e.index)
				}
			}
		} else {
			if _, ok := presentAt[itemID]; ok {
				bad("resource %q item %q: in the latest version but not marked present", id, itemID)
			}
			if x.LastSeq != e.lastSeq || x.Index != e.index || x.LastSeen.Unix() != e.lastSeen.sec || int64(x.LastSeen.Nanosecond()) != e.lastSeen.nsec {
				bad("resource %q item %q: last seen %d/%v, versions say %d", id, itemID, x.LastSeq, x.LastSeen, e.lastSeq)
			}
		}
		if first := slotFirstSeq(x.Slot); first >= m.Oldest && first != e.firstSeq {
			bad("resource %q item %q: first seen in %d, versions say %d", id, itemID, first, e.firstSeq)
		}
		content, err := getValue(txn, slotKey(prefixContent, id, x.Slot))
		if err != nil || !bytes.Equal(content, e.content) || dg != digest(e.content) {
			bad("resource %q item %q: stored content is not its latest version's (%v)", id, itemID, err)
		}
		page := string(slotPage(x.Slot))
		if pages[page] == nil {
			pages[page] = map[uint32]folded{}
		}
		pages[page][slotPos(x.Slot)] = foldItem(e.item, slotPos(x.Slot))
		return nil
	})
	if err != nil {
		return err
	}
	for itemID := range want {
		bad("resource %q: item %q of version %d is not indexed", id, itemID, want[itemID].lastSeq)
	}
	err = scanPrefix(ctx, txn, familyPrefix(prefixContent, id), func(k, _ []byte) error {
		if _, slot, _ := idOf(k); !slots[string(slot)] {
			bad("resource %q: content entry %x belongs to no indexed item", id, slot)
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = scanPrefix(ctx, txn, familyPrefix(prefixSearch, id), func(k, v []byte) error {
		_, page, _ := idOf(k)
		want := pages[string(page)]
		delete(pages, string(page))
		got, err := decodePage(v)
		if err != nil {
			bad("resource %q: search page %x: %v", id, page, err)
			return nil
		}
		if !bytes.Equal(encodePage(got), v) {
			bad("resource %q: search page %x has wrong bigram sets", id, page)
		}
		if len(got) != len(want) {
			bad("resource %q: search page %x has %d entries, the index %d", id, page, len(got), len(want))
		}
		for i, f := range got {
			if i > 0 && got[i-1].pos >= f.pos {
				bad("resource %q: search page %x is not sorted", id, page)
			}
			if w, ok := want[f.pos]; !ok || w != f {
				bad("resource %q: search entry %x/%d is not its item's latest content", id, page, f.pos)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for page := range pages {
		bad("resource %q: search page %x is missing", id, page)
	}
	return nil
}

func getValue(txn *bdg.Txn, key []byte) ([]byte, error) {
	item, err := txn.Get(key)
	if err != nil {
		return nil, err
	}
	return item.ValueCopy(nil)
}

// scanPrefix calls fn for every key with the prefix, in order; k and v are
// valid only during the call.
func scanPrefix(ctx context.Context, txn *bdg.Txn, prefix []byte, fn func(k, v []byte) error) error {
	opts := bdg.DefaultIteratorOptions
	opts.Prefix = prefix
	it := txn.NewIterator(opts)
	defer it.Close()
	var scan scanCheck
	for it.Rewind(); it.Valid(); it.Next() {
		if err := scan.step(ctx); err != nil {
			return err
		}
		k := it.Item().Key()
		if err := it.Item().Value(func(v []byte) error { return fn(k, v) }); err != nil {
			return err
		}
	}
	return nil
}
