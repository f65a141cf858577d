package badger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	bdg "github.com/dgraph-io/badger/v4"

	"github.com/dynamo-rss/dynamo/storage"
)

// pageOf returns n item titles numbered from first, newest first.
func pageOf(first, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("item-%04d-with-a-longish-id/%d", first+n-i, first+n-i)
	}
	return out
}

// metaState reads id's metadata record's size and format, the present
// chunks stored, and the metadata as getMeta returns it.
func metaState(t *testing.T, db *DB, id string) (size int, format byte, chunks int, m meta) {
	t.Helper()
	err := db.bdb.View(func(txn *bdg.Txn) error {
		it, err := txn.Get(metaKey(id))
		if err != nil {
			return err
		}
		v, err := it.ValueCopy(nil)
		if err != nil {
			return err
		}
		size, format = len(v), v[0]
		opts := bdg.DefaultIteratorOptions
		opts.Prefix = familyPrefix(prefixPresent, id)
		iter := txn.NewIterator(opts)
		for iter.Rewind(); iter.Valid(); iter.Next() {
			if iter.Item().ValueSize() >= metaInline {
				t.Errorf("chunk %q holds %d bytes, over %d", iter.Item().Key(), iter.Item().ValueSize(), metaInline)
			}
			chunks++
		}
		iter.Close()
		m, err = getMeta(txn, id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return size, format, chunks, m
}

func presentIDs(m meta) []string {
	ids := make([]string, len(m.Present))
	for i, p := range m.Present {
		ids[i] = p.ID
	}
	return ids
}

// TestLargeMetadataStaysInTheTree: the metadata of a page of many items
// stays under Badger's value threshold, its item list in chunks that follow
// the page as it grows, shrinks, is pruned and unregistered, and a store
// stays consistent throughout.
func TestLargeMetadataStaysInTheTree(t *testing.T) {
	db := openInternal(t)
	ctx := context.Background()
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	save := func(i int, titles []string) {
		t.Helper()
		if _, err := db.Save(ctx, testDoc("big", ts.Add(time.Duration(i)*time.Minute), titles...)); err != nil {
			t.Fatal(err)
		}
		if err := db.Check(ctx); err != nil {
			t.Fatalf("after save %d: %v", i, err)
		}
	}
	steps := []struct {
		titles     []string
		wantFormat byte
		minChunks  int
	}{
		{pageOf(0, 200), formatV2, 5},
		{pageOf(3, 200), formatV2, 5}, // three new on top, three fall off
		{pageOf(3, 10), formatV1, 0},  // shrinks: the chunks go
		{pageOf(3, 120), formatV2, 3},
	}
	for i, st := range steps {
		save(i, st.titles)
		size, format, chunks, m := metaState(t, db, "big")
		if size >= metaInline || format != st.wantFormat {
			t.Errorf("step %d: metadata record of %d bytes, format %d; want < %d, format %d", i, size, format, metaInline, st.wantFormat)
		}
		if chunks < st.minChunks || format == formatV1 && chunks != 0 || chunks != len(m.chunks) {
			t.Errorf("step %d: %d chunks stored, metadata names %d, want at least %d", i, chunks, m.chunks, st.minChunks)
		}
		if got := presentIDs(m); !slices.Equal(got, st.titles) {
			t.Errorf("step %d: present items %d, want the page's %d", i, len(got), len(st.titles))
		}
	}
	items, err := db.Items(ctx, "big", storage.ItemQuery{Max: 500})
	if err != nil || len(items) != 203 {
		t.Fatalf("Items = %d items, %v; want the 203 ever seen", len(items), err)
	}
	if _, err := db.Prune(ctx, "big", storage.Retention{MaxVersions: 1}, ts.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := db.Check(ctx); err != nil {
		t.Fatalf("after prune: %v", err)
	}
	if _, _, chunks, m := metaState(t, db, "big"); chunks != len(m.chunks) || len(m.Present) != 120 || m.Count != 1 {
		t.Errorf("after prune: %d chunks (metadata names %d), %d present, %d versions", chunks, m.chunks, len(m.Present), m.Count)
	}
	if _, err := db.Register(ctx, storage.Registration{ID: "big"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Unregister(ctx, "big"); err != nil {
		t.Fatal(err)
	}
	err = db.bdb.View(func(txn *bdg.Txn) error {
		opts := bdg.DefaultIteratorOptions
		opts.Prefix = []byte{prefixPresent}
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			t.Errorf("chunk %q left after Unregister", it.Item().Key())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// asEarlierRelease rewrites id's metadata as releases before chunks wrote
// it: the whole present list in the record, no chunks.
func asEarlierRelease(t *testing.T, db *DB, id string) {
	t.Helper()
	_, _, _, m := metaState(t, db, id)
	err := db.bdb.Update(func(txn *bdg.Txn) error {
		rec, refs, _ := m.encodeWithin(math.MaxInt)
		if refs != nil || rec[0] != formatV1 {
			return fmt.Errorf("encodeWithin(MaxInt): format %d, %d chunks", rec[0], len(refs))
		}
		for _, r := range m.chunks {
			if err := txn.Delete(chunkKey(id, r.sum)); err != nil {
				return err
			}
		}
		return txn.Set(metaKey(id), rec)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLargeMetadataOfEarlierReleases: a record that holds a long present
// list itself (as releases before chunks wrote it) is read, and the next
// save moves the list to chunks.
func TestLargeMetadataOfEarlierReleases(t *testing.T) {
	db := openInternal(t)
	ctx := context.Background()
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := db.Save(ctx, testDoc("old", ts, pageOf(0, 100)...)); err != nil {
		t.Fatal(err)
	}
	asEarlierRelease(t, db, "old")
	if size, format, chunks, m := metaState(t, db, "old"); format != formatV1 || chunks != 0 || size < 2048 || len(m.Present) != 100 {
		t.Fatalf("legacy record: %d bytes, format %d, %d chunks, %d present", size, format, chunks, len(m.Present))
	}
	if err := db.Check(ctx); err != nil {
		t.Fatalf("legacy record: %v", err)
	}
	if _, err := db.Save(ctx, testDoc("old", ts.Add(time.Minute), pageOf(1, 100)...)); err != nil {
		t.Fatal(err)
	}
	if size, format, chunks, m := metaState(t, db, "old"); format != formatV2 || chunks == 0 || size >= metaInline || len(m.Present) != 100 {
		t.Errorf("after a save: %d bytes, format %d, %d chunks, %d present", size, format, chunks, len(m.Present))
	}
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestPruneOfEarlierReleasesRecord: a prune is the first write to a long
// record of an earlier release (a page that has not changed since the
// upgrade); the record it writes names chunks that are there.
func TestPruneOfEarlierReleasesRecord(t *testing.T) {
	db := openInternal(t)
	ctx := context.Background()
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		if _, err := db.Save(ctx, testDoc("old", ts.Add(time.Duration(i)*time.Minute), pageOf(i, 100)...)); err != nil {
			t.Fatal(err)
		}
	}
	asEarlierRelease(t, db, "old")
	if n, err := db.Prune(ctx, "old", storage.Retention{MaxVersions: 1}, ts.Add(time.Hour)); err != nil || n != 2 {
		t.Fatalf("Prune = %d, %v; want 2 versions removed", n, err)
	}
	if err := db.Check(ctx); err != nil {
		t.Fatalf("after the prune: %v", err)
	}
	if _, format, chunks, m := metaState(t, db, "old"); format != formatV2 || chunks != len(m.chunks) || len(m.Present) != 100 {
		t.Errorf("after the prune: format %d, %d chunks stored for %d named, %d present", format, chunks, len(m.chunks), len(m.Present))
	}
	if _, err := db.Save(ctx, testDoc("old", ts.Add(time.Hour), pageOf(5, 100)...)); err != nil {
		t.Fatalf("a save after the prune: %v", err)
	}
}

// TestCheckFindsChunkDamage: a missing or stray present-list chunk is an
// inconsistency.
func TestCheckFindsChunkDamage(t *testing.T) {
	firstChunk := func(txn *bdg.Txn) []byte {
		m, err := getMetaRecord(txn, "r")
		if err != nil || len(m.chunks) == 0 {
			t.Fatalf("no chunks: %v", err)
		}
		return chunkKey("r", m.chunks[0].sum)
	}
	for name, damage := range map[string]func(txn *bdg.Txn) error{
		"missing": func(txn *bdg.Txn) error { return txn.Delete(firstChunk(txn)) },
		"damaged": func(txn *bdg.Txn) error { return txn.Set(firstChunk(txn), []byte{1, 0}) },
		"stray":   func(txn *bdg.Txn) error { return txn.Set(chunkKey("r", 12345), []byte{0}) },
	} {
		t.Run(name, func(t *testing.T) {
			db := openInternal(t)
			ctx := context.Background()
			if _, err := db.Save(ctx, testDoc("r", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), pageOf(0, 100)...)); err != nil {
				t.Fatal(err)
			}
			if err := db.bdb.Update(damage); err != nil {
				t.Fatal(err)
			}
			if err := db.Check(ctx); !errors.Is(err, storage.ErrInconsistent) {
				t.Fatalf("Check = %v, want storage.ErrInconsistent", err)
			}
		})
	}
}

// TestSlidingPageWritesEndChunks: when new items arrive on top and old ones
// fall off the bottom (every index moving), most chunks keep their bytes,
// so their keys, and a save writes only the others. The indexes read back
// are the page's, whether they follow the position or not.
func TestSlidingPageWritesEndChunks(t *testing.T) {
	// renumber gives the index of the item at position i whose number
	// (its age on the page) is k.
	for name, renumber := range map[string]func(i, k int) int{
		"positional":     func(i, k int) int { return i + 1 },
		"story numbers":  func(i, k int) int { return 3 * k },
		"irregular gaps": func(i, k int) int { return 7*k + k%5 },
	} {
		t.Run(name, func(t *testing.T) {
			db := openInternal(t)
			ctx := context.Background()
			ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			var before []chunkRef
			for v := range 8 {
				doc := testDoc("s", ts.Add(time.Duration(v)*time.Minute), pageOf(3*v, 300)...)
				for i := range doc.Items {
					doc.Items[i].Index = renumber(i, 3*v+300-i)
				}
				if _, err := db.Save(ctx, doc); err != nil {
					t.Fatal(err)
				}
				_, _, stored, m := metaState(t, db, "s")
				if stored != len(m.chunks) {
					t.Fatalf("version %d: %d chunks stored, metadata names %d", v, stored, len(m.chunks))
				}
				for i, p := range m.Present {
					if p.ID != doc.Items[i].ID || p.Index != doc.Items[i].Index {
						t.Fatalf("version %d: present %d is %q at %d, want %q at %d", v, i, p.ID, p.Index, doc.Items[i].ID, doc.Items[i].Index)
					}
				}
				if v > 0 {
					kept := 0
					for _, r := range m.chunks {
						for _, b := range before {
							if r.sum == b.sum {
								kept++
							}
						}
					}
					if len(m.chunks)-kept > 3 || kept < len(m.chunks)/2 {
						t.Errorf("version %d: %d of %d chunks new, want the ends only", v, len(m.chunks)-kept, len(m.chunks))
					}
				}
				before = m.chunks
			}
			if err := db.Check(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// FuzzMetaRecord: metadata records and present-list chunks of any bytes
// decode or fail without panicking, and a present list cut from the input
// comes back from its record and chunks as it was, whatever its length.
func FuzzMetaRecord(f *testing.F) {
	m := meta{URL: "https://example.org/", Title: "T", Latest: 3, Count: 2, Present: []present{
		{ID: "a", Slot: make([]byte, slotLen), Index: 1}, {ID: "b", Slot: make([]byte, slotLen), Index: 5},
	}}
	rec, _, _ := m.encode()
	f.Add(rec, uint16(2))
	f.Add([]byte{formatV2, 0, 0}, uint16(300))
	f.Fuzz(func(t *testing.T, data []byte, n uint16) {
		if m, err := decodeMeta(data); err == nil && m.chunks != nil {
			for _, r := range m.chunks {
				_, _ = appendChunk(nil, data, r)
			}
		}
		_, _ = appendChunk(nil, data, chunkRef{sum: xxhash.Sum64(data), first: int(n)})

		// A list of n items whose ids, indexes and digests come from data.
		in := meta{URL: "https://example.org/", Present: make([]present, n%400)}
		for i := range in.Present {
			b := data
			if len(b) > 0 {
				b = b[i%len(b):]
			}
			id := fmt.Sprintf("%d-%x", i, b[:min(len(b), 40)])
			slot := make([]byte, slotLen)
			copy(slot, b)
			in.Present[i] = present{ID: id, Slot: slot, Index: 1 + i*int(n%7) + len(b)%3}
			copy(in.Present[i].Digest[:], b)
		}
		rec, refs, chunks := in.encode()
		if len(rec) > metaInline && refs != nil {
			t.Fatalf("record of %d bytes beside %d chunks", len(rec), len(refs))
		}
		out, err := decodeMeta(rec)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range out.chunks {
			if r != refs[i] {
				t.Fatalf("chunk %d named %+v, written as %+v", i, r, refs[i])
			}
			if len(chunks[i]) > presentChunk && !slices.ContainsFunc(in.Present, func(p present) bool { return len(p.ID) > presentChunk/2 }) {
				t.Fatalf("chunk %d of %d bytes", i, len(chunks[i]))
			}
			if out.Present, err = appendChunk(out.Present, chunks[i], r); err != nil {
				t.Fatalf("chunk %d: %v", i, err)
			}
		}
		if len(out.Present) != len(in.Present) {
			t.Fatalf("%d items back, %d in", len(out.Present), len(in.Present))
		}
		for i := range in.Present {
			a, b := in.Present[i], out.Present[i]
			if a.ID != b.ID || a.Index != b.Index || a.Digest != b.Digest || !bytes.Equal(a.Slot, b.Slot) {
				t.Fatalf("item %d: %+v back as %+v", i, a, b)
			}
		}
	})
}
