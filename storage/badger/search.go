package badger

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/dynamo-rss/dynamo/schema"
)

// Keyword queries scan s pages: one page per (first seen, first seq), that is
// per version that brought new items, holding the folded title, link and
// description of each of those items by position. A scan over 100,000 items
// thus reads one Badger entry per version, not one per item, and a save that
// brings new items writes one page.

// folded is one item's entry in a search page.
type folded struct {
	pos               uint32
	title, link, desc string
}

func foldItem(it *schema.Item, pos uint32) folded {
	return folded{pos: pos, title: fold(it.Title), link: fold(it.Link), desc: fold(it.Description)}
}

// fold is [schema.Fold] with a fast path: on ASCII, full Unicode case folding
// is exactly ASCII lower-casing (the only ASCII mappings are A–Z).
func fold(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return schema.Fold(s)
		}
	}
	return strings.ToLower(s)
}

func slotPage(slot []byte) []byte { return slot[:pageIDLen] }

func slotPos(slot []byte) uint32 { return binary.BigEndian.Uint32(slot[pageIDLen:]) }

func pageKey(id string, page []byte) []byte { return slotKey(prefixSearch, id, page) }

// bigrams is a 128-bit set of the hashed byte pairs of a folded field. A
// field that contains a term contains all of the term's pairs, so a term
// whose set is not a subset of the field's cannot match: most items of a
// keyword scan are rejected by a few AND operations instead of a substring
// search (see [mayMatch]).
type bigrams [2]uint64

func bigramsOf(s string) bigrams {
	var m bigrams
	for i := 0; i+1 < len(s); i++ {
		h := (uint32(s[i])<<8 | uint32(s[i+1])) * 0x9E3779B1 >> 25 // 7 bits
		m[h>>6] |= 1 << (h & 63)
	}
	return m
}

func (m bigrams) covers(sub bigrams) bool {
	return m[0]&sub[0] == sub[0] && m[1]&sub[1] == sub[1]
}

// encodePage writes entries sorted by position: per entry its position, then
// per field (title, link, description) its bigram set and folded text.
func encodePage(entries []folded) []byte {
	n := 8
	for _, f := range entries {
		n += 60 + len(f.title) + len(f.link) + len(f.desc)
	}
	e := enc{b: make([]byte, 0, n)}
	e.byte1(formatV1)
	e.uvar(uint64(len(entries)))
	for _, f := range entries {
		e.uvar(uint64(f.pos))
		for _, s := range [3]string{f.title, f.link, f.desc} {
			m := bigramsOf(s)
			e.u64(m[0])
			e.u64(m[1])
			e.str(s)
		}
	}
	return e.b
}

// pageEntry is one entry of a page as scanPage reads it; the fields alias the page.
type pageEntry struct {
	pos    uint32
	fields [3][]byte // title, link, description: schema.Field order
	sets   [3]bigrams
}

// scanPage calls fn for each entry of a page until fn returns false. The
// entry is reused and aliases b: valid only during the call.
func scanPage(b []byte, fn func(e *pageEntry) bool) error {
	d := dec{b: b}
	d.format("search page")
	n := d.uvar()
	var pe pageEntry
	for i := uint64(0); i < n && d.err == nil; i++ {
		pe.pos = uint32(d.uvar())
		for f := range pe.fields {
			pe.sets[f] = bigrams{d.u64(), d.u64()}
			pe.fields[f] = d.bytes()
		}
		if d.err == nil && !fn(&pe) {
			return nil
		}
	}
	if d.err != nil {
		return fmt.Errorf("decode search page: %w", d.err)
	}
	return nil
}

func decodePage(b []byte) ([]folded, error) {
	var out []folded
	err := scanPage(b, func(e *pageEntry) bool {
		out = append(out, folded{pos: e.pos, title: string(e.fields[0]), link: string(e.fields[1]), desc: string(e.fields[2])})
		return true
	})
	return out, err
}

// pageEdits collects the changes of one transaction to a resource's search pages.
type pageEdits struct {
	id    string
	pages map[string]*pageEdit // by page id
}

type pageEdit struct {
	set   map[uint32]folded
	del   map[uint32]bool
	fresh bool // the page cannot exist yet (its seq is being saved): nothing to read
}

func newPageEdits(id string) *pageEdits { return &pageEdits{id: id, pages: map[string]*pageEdit{}} }

func (pe *pageEdits) page(slot []byte) *pageEdit {
	k := string(slotPage(slot))
	p := pe.pages[k]
	if p == nil {
		p = &pageEdit{set: map[uint32]folded{}, del: map[uint32]bool{}}
		pe.pages[k] = p
	}
	return p
}

// put sets an item's entry; fresh says the slot was assigned by this save.
func (pe *pageEdits) put(slot []byte, it *schema.Item, fresh bool) {
	pos := slotPos(slot)
	p := pe.page(slot)
	p.fresh = fresh
	p.set[pos] = foldItem(it, pos)
	delete(p.del, pos)
}

func (pe *pageEdits) remove(slot []byte) {
	pos := slotPos(slot)
	p := pe.page(slot)
	p.del[pos] = true
	delete(p.set, pos)
}

// apply reads, merges and writes every touched page (deleting emptied ones) through write.
// txn returns the transaction to read from (write may have committed and replaced one).
func (pe *pageEdits) apply(txn func() *bdg.Txn, write func(key, value []byte) error) error {
	for page, edit := range pe.pages {
		key := pageKey(pe.id, []byte(page))
		var entries []folded
		item, err := (*bdg.Item)(nil), bdg.ErrKeyNotFound
		if !edit.fresh {
			item, err = txn().Get(key)
		}
		switch {
		case errors.Is(err, bdg.ErrKeyNotFound):
		case err != nil:
			return fmt.Errorf("read search page: %w", err)
		default:
			err = item.Value(func(v []byte) error {
				entries, err = decodePage(v)
				return err
			})
			if err != nil {
				return err
			}
		}
		entries = slices.DeleteFunc(entries, func(f folded) bool {
			_, replaced := edit.set[f.pos]
			return replaced || edit.del[f.pos]
		})
		for _, f := range edit.set {
			entries = append(entries, f)
		}
		slices.SortFunc(entries, func(a, b folded) int { return cmp.Compare(a.pos, b.pos) })
		var value []byte // nil: delete
		if len(entries) > 0 {
			value = encodePage(entries)
		}
		if err := write(key, value); err != nil {
			return fmt.Errorf("write search page: %w", err)
		}
	}
	return nil
}

// prefilter is the bigram sets of a query's terms, folded once per query.
type prefilter []termSet

type termSet struct {
	op    schema.Op
	field schema.Field
	set   bigrams
}

func newPrefilter(ts schema.Terms) prefilter {
	p := make(prefilter, len(ts))
	for i, t := range ts {
		p[i] = termSet{op: t.Op, field: t.Field, set: bigramsOf(fold(t.Value))}
	}
	return p
}

// mayMatch evaluates the terms left to right as [schema.Terms] does, with
// "field may contain the term" (its bigrams are present) for "contains".
// And and or are monotone, so false here means the exact query is false.
func (p prefilter) mayMatch(e *pageEntry) bool {
	acc := true
	for i, t := range p {
		v := int(t.field) < len(e.sets) && e.sets[t.field].covers(t.set)
		switch {
		case i == 0:
			acc = v
		case t.op == schema.Or:
			acc = acc || v
		default:
			acc = acc && v
		}
	}
	return acc
}

// writer is what writes a key: the committer's transaction.
type writer interface {
	Set(key, value []byte) error
	Delete(key []byte) error
}

// setOrDelete is the write function of a transaction (value nil: delete).
func setOrDelete(w writer) func(key, value []byte) error {
	return func(key, value []byte) error {
		if value == nil {
			return w.Delete(key)
		}
		return w.Set(key, value)
	}
}
