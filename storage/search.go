package storage

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dgraph-io/badger/v4"

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

// encodePage writes entries sorted by position.
func encodePage(entries []folded) []byte {
	n := 8
	for _, f := range entries {
		n += 12 + len(f.title) + len(f.link) + len(f.desc)
	}
	e := enc{b: make([]byte, 0, n)}
	e.byte1(formatV1)
	e.uvar(uint64(len(entries)))
	for _, f := range entries {
		e.uvar(uint64(f.pos))
		e.str(f.title)
		e.str(f.link)
		e.str(f.desc)
	}
	return e.b
}

// scanPage calls fn for each entry of a page, with fields aliasing b, until fn returns false.
func scanPage(b []byte, fn func(pos uint32, title, link, desc []byte) bool) error {
	d := dec{b: b}
	d.format("search page")
	n := d.uvar()
	for i := uint64(0); i < n && d.err == nil; i++ {
		pos := d.uvar()
		title, link, desc := d.bytes(), d.bytes(), d.bytes()
		if d.err == nil && !fn(uint32(pos), title, link, desc) {
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
	err := scanPage(b, func(pos uint32, title, link, desc []byte) bool {
		out = append(out, folded{pos: pos, title: string(title), link: string(link), desc: string(desc)})
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
func (pe *pageEdits) apply(txn func() *badger.Txn, write func(key, value []byte) error) error {
	for page, edit := range pe.pages {
		key := pageKey(pe.id, []byte(page))
		var entries []folded
		item, err := (*badger.Item)(nil), badger.ErrKeyNotFound
		if !edit.fresh {
			item, err = txn().Get(key)
		}
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
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

// setOrDelete is the write function of a plain transaction.
func setOrDelete(txn *badger.Txn) func(key, value []byte) error {
	return func(key, value []byte) error {
		if value == nil {
			return txn.Delete(key)
		}
		return txn.Set(key, value)
	}
}
