package schema

import (
	"crypto/sha256"
	"encoding/binary"
)

// SameContent reports whether two documents have the same informational
// content: equal channel titles, links and descriptions, and the same items,
// in page order, with equal titles, links and descriptions. Extensions, images,
// item ids and the timestamp do not count (docs/annotations.md, "The XMLData
// document"), with one exception that is dynamo's own: an item's article
// mark (dynamo:article, set by `content: full`), so that articles fetched
// for items a page already showed (those over poller.full_per_poll at an
// earlier poll) are stored as a new version rather than lost. A page
// without `content: full` carries no mark.
func SameContent(a, b *Document) bool {
	if a.Channel.Title != b.Channel.Title || a.Channel.Link != b.Channel.Link ||
		a.Channel.Description != b.Channel.Description || len(a.Items) != len(b.Items) {
		return false
	}
	for i := range a.Items {
		x, y := &a.Items[i], &b.Items[i]
		if x.Title != y.Title || x.Link != y.Link || x.Description != y.Description {
			return false
		}
		mx, okx := x.Extensions.ArticleMark()
		my, oky := y.Extensions.ArticleMark()
		if okx != oky || mx != my {
			return false
		}
	}
	return true
}

// articleTag precedes an item's article mark in [ContentHash].
const articleTag = ^uint64(0)

// Hash is a digest of a document's informational content.
type Hash [sha256.Size]byte

// ContentHash digests exactly what [SameContent] compares, so that two
// documents have equal hashes if and only if SameContent holds for them
// (up to SHA-256 collisions). Fields are length-prefixed so that moving text
// from one field to the next changes the hash.
func ContentHash(d *Document) Hash {
	h := sha256.New()
	var n [8]byte
	field := func(s string) {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(d.Channel.Title)
	field(d.Channel.Link)
	field(d.Channel.Description)
	binary.BigEndian.PutUint64(n[:], uint64(len(d.Items)))
	h.Write(n[:])
	for i := range d.Items {
		field(d.Items[i].Title)
		field(d.Items[i].Link)
		field(d.Items[i].Description)
		if mark, ok := d.Items[i].Extensions.ArticleMark(); ok {
			// A length no field can have tags the optional mark, so that
			// it cannot be read as the next item's title; items without
			// one hash as they always did.
			binary.BigEndian.PutUint64(n[:], articleTag)
			h.Write(n[:])
			field(mark)
		}
	}
	var out Hash
	h.Sum(out[:0])
	return out
}
