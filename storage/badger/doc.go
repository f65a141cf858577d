// Package badger is the default storage driver: Dynamo's DataManager on
// Badger (github.com/dgraph-io/badger/v4, imported as bdg), for one node.
// It keeps versioned XMLData documents with an item index that answers the
// aggregated "newest items" and keyword queries without parsing documents.
//
// # Usage
//
// [Open] a directory, [DB.Save] each document the poller retrieves (a document
// whose informational content equals the latest version's is not stored),
// read with [DB.Resources], [DB.Version], [DB.Versions] and [DB.Items], bound
// history with [DB.Prune], verify a store with [DB.Check], keep resources
// registered at run time with [DB.Register], [DB.Registrations] and
// [DB.Unregister], and [DB.Close] it. A *DB is safe for concurrent use and implements [storage.Store]; its
// behaviour is the contract in storage/storagetest, which this package's
// tests run. [DB.Space] (free disk space, see [Options.MinFree]) is
// Badger's own: callers reach it by a type assertion.
//
// # Key layout
//
// Every key starts with a one-byte prefix naming its family, then the resource
// id, then a 0x00 separator (ids are validated: 1–[storage.MaxIDLen] bytes of UTF-8,
// no 0x00 and no control characters, so "id|0x00" never is a prefix of
// another resource's keys), then a fixed-width suffix. Integers are big-endian
// and fixed-width, so byte order is numeric order; a timestamp T is 12 bytes:
// uint64(T.Unix()) with the sign bit flipped, then uint32(T.Nanosecond()),
// so byte order is time order for every time.Time. "|" below only separates
// fields for the reader; it is not a byte.
//
//	m | id                          metadata: url, created, updated, latest seq,
//	                                oldest kept seq, version count, content hash
//	                                (schema.ContentHash) of the latest version,
//	                                latest channel title and description, and
//	                                the latest version's items (id, slot,
//	                                index, digest), or, when they would take
//	                                the record over 1,900 bytes, their count
//	                                and the l chunks holding them (hash and
//	                                first index of each, in order)
//	l | id | 00 | hash(8)           a run of the latest version's items, when
//	                                m cannot hold them all: at most 1,800
//	                                bytes (unless one item's id alone is
//	                                longer), so that m and l values stay
//	                                under Badger's 2 KiB value threshold, in
//	                                the LSM tree; keyed by the xxhash of its
//	                                bytes, cut where item ids hash to 0 mod
//	                                16, indexes as differences: a save writes
//	                                only the chunks whose items changed
//	v | id | 00 | seq(8)            one version: a header (timestamp, channel
//	                                title, description, item count) then the
//	                                S2-compressed schema.Marshal bytes
//	x | id | 00 | itemID            item index entry: the item's slot (below),
//	                                whether it is in the latest version, else
//	                                last seen, the seq it was last seen in, its
//	                                index there and a digest of its content
//	f | id | 00 | slot(24)          the item's latest content: the full
//	                                schema.Item (extensions included) but its
//	                                index, which moves whenever items are added
//	                                above it and so is kept in m and x
//	s | id | 00 | page(20)          search page: for each item whose slot starts
//	                                with this page id, its position, then for
//	                                title, link and description a 128-bit set
//	                                of hashed byte pairs and the folded
//	                                (schema.Fold) text; scanned by keyword queries
//	r | id                          a registration (resource registered at
//	                                run time): registered and updated times,
//	                                the definition (JSON)
//	R                               the registry's revision (uint64 BE): the
//	                                revision of the last Register or
//	                                Unregister, written in its transaction
//	g | id                          a tombstone (see Tombstones) or, after
//	                                Register cleared it and until the id's
//	                                first save, its seq floor: gone flag and
//	                                the last seq the id ever used
//	p | id                          the poller's opaque state, in a second
//	                                Badger under <dir>/pollstate whose writes
//	                                are not synced (see Durability)
//	o | id                          the progress of that state (opaque too):
//	                                the few fields every poll changes, which
//	                                a poll that changes nothing else writes
//	                                alone (SavePollStateRecords); same store
//	q | id | 00 | seq(8)            one poll-history record of the poller
//	                                (SavePollStateRecords), in the same store,
//	                                written with the state; the one keep
//	                                records older goes in the same write
//	e | session id                  a browser session ended by a logout
//	                                (storage.Sessions): the time until which
//	                                it stays revoked; each revocation deletes
//	                                those whose time has passed
//
// An item's slot is ^firstSeen(12) | ^firstSeq(8) | position(4): when it
// was first seen and the version it was first seen in, both with every bit
// inverted, then its position in that version's item list. The first 20
// bytes are its search page id: the items a version brought share one s
// page, so a keyword scan reads one Badger entry per such version instead of
// one per item (iteration, not matching, dominated per-item entries). A slot
// never changes once assigned, so x maps an item id to a fixed f key and s
// page. Because of the inversion a forward prefix scan over f (or s) yields
// items newest first by first seen; ties (same timestamp) go to the later
// version first, then to page order. This is the "reverse scan" of a
// time-ordered key, done forward because Badger iterates forward faster (its
// memtable skiplist has no back links: each reverse step is a search). Items
// with Max=n read n f entries; a keyword query scans the s pages (no
// documents decoded, nothing folded per item), skips the items whose pair
// sets show that the terms, combined left to right, cannot match (a field
// containing a term contains all of its byte pairs; and/or are monotone),
// runs schema.Terms.MatchFolded on the rest, and reads f and x of the
// matches only.
//
// The metadata lists the items of the latest version (id, slot, index,
// content digest), so a save that sees an item again writes nothing for it
// unless its content changed; its x entry says "present" and takes last
// seen, seq and index from the metadata. When an item drops out of the
// latest version, its x entry gets its last seen, last seq, index and digest.
//
// Item ids need no separator: they end the key, and XML text never holds 0x00.
// Badger's own MVCC versions are not history: NumVersionsToKeep stays 1 and
// every version is its own key.
//
// # Invariants
//
// Versions of a resource are the contiguous range oldest..latest of seq
// (1 = the first ever stored); the count in m equals the number of v keys.
// Every item id present in a kept version has exactly one x entry, one f
// entry and one entry in its s page, and nothing else has any; its last seq
// is the newest kept version containing it, its content is that version's
// item; m lists exactly the latest version's items. [DB.Check] verifies all
// of this.
//
// # Writes, concurrency and durability
//
// A save reads m and the x entries of items not in the previous version,
// then writes m, v, x of items that appear or disappear, f of new or changed
// items and their s pages, all in one Badger transaction. Saves and prunes
// of one resource are serialized by a per-resource lock (so Badger's
// conflict detection is switched off, and what a save reads stays true
// until its commit). A save whose content hash equals the latest version's
// writes nothing and is answered from the cached info or from m. A save
// prepares its version (marshalled, compressed, digested) and plans its
// writes on the caller's goroutine; saves of different resources then
// share transactions (group commit, commit.go): one goroutine applies the
// writes of every save waiting in one transaction and answers them all.
// Every other write (registrations, records, prunes, purges) goes through
// the same goroutine.
//
// Badger never syncs. With the default options each transaction is first
// written to the journal (journal.go): its list of writes, in one
// O_DIRECT|O_DSYNC write to one of two reused segment files; a save that
// returned is durable through kill -9, an OS crash or a power loss. Open
// replays the journal; a segment is reused only after a checkpoint (fsync
// of Badger's files), and the value-log GC deletes a file only after one.
// Badger's own synced commit would msync its two memory-mapped logs one
// after the other, which costs two flushes and ≈ 250 µs of CPU per
// version. [Options.NoSyncWrites] skips the journal (Badger writes through
// mmap, so kill -9 alone loses nothing either way: TestCrashDurability).
// Poll states live in their own unsynced store: one is written per poll, a
// synced commit costs a disk flush (most of the time of a 304 poll), and
// losing the last ones to an OS crash only makes the poller poll a little
// early.
//
// # Retention
//
// [DB.Prune] drops the oldest versions, never the latest, and keeps the kept
// range contiguous: it stops at the first version that the retention keeps,
// so with timestamps that go backwards an old version may survive behind a
// younger one. Items whose every version was pruned (last seq below the new
// oldest) leave the index; the others keep their first seen, even when the
// version they were first seen in is gone: first seen records when Dynamo
// discovered the item, which pruning does not change.
//
// # Tombstones
//
// [DB.Unregister] takes the resource's lock, deletes its poll state, then in
// one transaction writes the tombstone (g, gone) with the last seq the id
// used and deletes its metadata (m), the chunks m names (l) and its
// registration (r); then it deletes v, x, f, s and l in write batches. Every read and write goes through m, and
// finding none looks at g, so from the tombstone's commit on the id answers
// [storage.ErrGone]; saves and poll-state writes hold the same lock and check
// g, so one racing the Unregister either lands before it (and is removed
// with the rest) or fails. The tombstone keeps nothing of the history but
// the last seq: the feeds need only know that the resource was removed (410
// Gone), and the seq lets a resource registered again continue after it, so
// a version's seq (its GUID and permalink) never names two documents.
// [DB.Register] of a tombstoned id first deletes any v, x, f, s or l key an
// interrupted Unregister left, then turns g into the seq floor, which the
// id's first save reads and deletes. Tombstones are kept until then: their
// cost is one small key per removed id.
//
// # Security
//
// Ids and documents are validated before anything is written; invalid input
// fails with [storage.ErrInvalid]. Stored documents are XML made by schema.Marshal.
package badger
