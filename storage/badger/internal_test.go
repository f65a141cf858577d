package badger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/dynamo-rss/dynamo/schema"
	"github.com/dynamo-rss/dynamo/storage"
)

func openInternal(t *testing.T) *DB {
	t.Helper()
	db, err := Open(t.TempDir(), Options{MemTableSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return db
}

func testDoc(id string, ts time.Time, titles ...string) *schema.Document {
	d := &schema.Document{URL: "https://example.org/" + id, RSSID: id, Timestamp: ts,
		Channel: schema.Channel{Title: "C", Link: "https://example.org/"}}
	for i, title := range titles {
		d.Items = append(d.Items, schema.Item{Index: i + 1, ID: title, Title: title, Link: "https://example.org/" + title})
	}
	return d
}

// TestSaveOtherResourceNotBlocked: while one resource's lock is held (a save in
// progress), saves of another resource proceed.
func TestSaveOtherResourceNotBlocked(t *testing.T) {
	db := openInternal(t)
	unlock := db.locks.lock("busy")
	defer func() { unlock() }()
	done := make(chan error, 1)
	go func() {
		_, err := db.Save(context.Background(), testDoc("free", time.Now(), "a"))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("save of another resource blocked by a held resource lock")
	}
	blocked := make(chan error, 1)
	go func() {
		_, err := db.Save(context.Background(), testDoc("busy", time.Now(), "a"))
		blocked <- err
	}()
	// Wait until the save queues on the lock (it holds a reference), then check it has not finished.
	for {
		db.locks.mu.Lock()
		refs := db.locks.locks["busy"].refs
		db.locks.mu.Unlock()
		if refs == 2 {
			break
		}
		select {
		case err := <-blocked:
			t.Fatalf("save of a locked resource did not wait for the lock (err %v)", err)
		default:
			runtime.Gosched()
		}
	}
	select {
	case <-blocked:
		t.Fatal("save of a locked resource finished while the lock was held")
	default:
	}
	unlock()
	unlock = func() {}
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
	if len(db.locks.locks) != 0 {
		t.Errorf("%d locks left after all saves", len(db.locks.locks))
	}
}

// TestCheckFindsDamage proves Check can fail: each case damages a healthy store.
func TestCheckFindsDamage(t *testing.T) {
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		damage func(txn *bdg.Txn) error
		want   string
	}{
		{"version deleted", func(txn *bdg.Txn) error { return txn.Delete(versionKey("r", 1)) }, "found where 1 was expected"},
		{"item entry deleted", func(txn *bdg.Txn) error { return txn.Delete(itemKey("r", "b")) }, `item "b" of version 2 is not indexed`},
		{"orphan item", func(txn *bdg.Txn) error {
			x := itemEntry{Slot: makeSlot(ts, 1, 9), LastSeq: 1}
			return txn.Set(itemKey("r", "ghost"), x.encode())
		}, `"ghost" is indexed but in no kept version`},
		{"search page deleted", func(txn *bdg.Txn) error {
			return txn.Delete(pageKey("r", slotPage(makeSlot(ts.Add(time.Minute), 2, 1))))
		}, "search page"},
		{"gone item with a wrong index", func(txn *bdg.Txn) error {
			// Item "a" is present in both versions: mark it gone, last seen in 2 at index 9.
			x := itemEntry{Slot: makeSlot(ts, 1, 0), LastSeen: ts.Add(time.Minute), LastSeq: 2, Index: 9}
			return txn.Set(itemKey("r", "a"), x.encode())
		}, `in the latest version but not marked present`},
		{"orphan version", func(txn *bdg.Txn) error { return txn.Set(versionKey("gone", 1), []byte{1}) }, "without metadata"},
		{"tombstone beside metadata", func(txn *bdg.Txn) error {
			return txn.Set(goneKey("r"), gone{Gone: true, LastSeq: 2}.encode())
		}, `"r" is unregistered but has metadata`},
		{"seq floor beside metadata", func(txn *bdg.Txn) error {
			return txn.Set(goneKey("r"), gone{LastSeq: 7}.encode())
		}, "seq floor 7 beside its metadata"},
		{"tombstone beside a registration", func(txn *bdg.Txn) error {
			if err := txn.Set(regKey("x"), encodeRegistration(storage.Registration{ID: "x"})); err != nil {
				return err
			}
			return txn.Set(goneKey("x"), gone{Gone: true}.encode())
		}, `"x" is unregistered but has a registration`},
		{"undecodable registration", func(txn *bdg.Txn) error { return txn.Set(regKey("x"), []byte{1, 2}) }, "decode registration"},
		{"present items out of order", func(txn *bdg.Txn) error {
			m, err := getMeta(txn, "r")
			if err != nil {
				return err
			}
			m.Present[0], m.Present[1] = m.Present[1], m.Present[0]
			rec, _, _ := m.encode()
			return txn.Set(metaKey("r"), rec)
		}, "metadata's present items are not the latest version's"},
		// Each condition of a damage check alone: one field wrong, the others right.
		{"count off by one", rewriteMeta(func(m *meta) { m.Count = 3 }), "count 3 does not match seq range 1..2"},
		{"version of another resource", rewriteVersion(1, func(_, body *schema.Document) { body.RSSID = "s" }), "version 1 header disagrees with its document"},
		{"version header time a nanosecond off", rewriteVersion(1, func(hdr, _ *schema.Document) { hdr.Timestamp = hdr.Timestamp.Add(time.Nanosecond) }), "version 1 header disagrees with its document"},
		{"version header item count off", rewriteVersion(1, func(hdr, _ *schema.Document) { hdr.Items = append(hdr.Items, schema.Item{}) }), "version 1 header disagrees with its document"},
		{"version header title", rewriteVersion(1, func(hdr, _ *schema.Document) { hdr.Channel.Title = "C2" }), "version 1 header disagrees with its document"},
		{"version header description", rewriteVersion(1, func(hdr, _ *schema.Document) { hdr.Channel.Description = "D" }), "version 1 header disagrees with its document"},
		{"metadata title", rewriteMeta(func(m *meta) { m.Title = "C2" }), "metadata channel or updated time is not the latest version's"},
		{"metadata description", rewriteMeta(func(m *meta) { m.Description = "D" }), "metadata channel or updated time is not the latest version's"},
		{"metadata updated a nanosecond off", rewriteMeta(func(m *meta) { m.Updated = m.Updated.Add(time.Nanosecond) }), "metadata channel or updated time is not the latest version's"},
		{"gone item last seq", rewriteItem("c", func(x *itemEntry) { x.LastSeq = 2 }), `item "c": last seen`},
		{"gone item index", rewriteItem("c", func(x *itemEntry) { x.Index = 3 }), `item "c": last seen`},
		{"gone item last seen a second off", rewriteItem("c", func(x *itemEntry) { x.LastSeen = x.LastSeen.Add(time.Second) }), `item "c": last seen`},
		{"gone item last seen a nanosecond off", rewriteItem("c", func(x *itemEntry) { x.LastSeen = x.LastSeen.Add(time.Nanosecond) }), `item "c": last seen`},
		{"content bytes differ, digest right", func(txn *bdg.Txn) error {
			x, ok, err := getItemEntry(txn, itemKey("r", "b"))
			if !ok || err != nil {
				return fmt.Errorf("item entry of b: %v, %v", ok, err)
			}
			edited := schema.Item{ID: "b", Title: "B", Link: "https://example.org/b"}
			return txn.Set(slotKey(prefixContent, "r", x.Slot), encodeContent(&edited))
		}, `item "b": stored content is not its latest version's`},
		{"present item digest wrong, content right", rewriteMeta(func(m *meta) { m.Present[1].Digest[0] ^= 1 }), `item "b": stored content is not its latest version's`},
		{"gone item digest wrong, content right", rewriteItem("c", func(x *itemEntry) { x.Digest[0] ^= 1 }), `item "c": stored content is not its latest version's`},
		{"search entry differs", func(txn *bdg.Txn) error {
			key := pageKey("r", slotPage(makeSlot(ts.Add(time.Minute), 2, 1)))
			v, err := getValue(txn, key)
			if err != nil {
				return err
			}
			got, err := decodePage(v)
			if err != nil || len(got) != 1 {
				return fmt.Errorf("page of version 2 = %v, %v", got, err)
			}
			got[0].title = "b edited"
			return txn.Set(key, encodePage(got))
		}, "is not its item's latest content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openInternal(t)
			ctx := context.Background()
			// "a" is in both versions, "b" only in the latest, "c" only in the first.
			for i, titles := range [][]string{{"a", "c"}, {"a", "b"}} {
				if _, err := db.Save(ctx, testDoc("r", ts.Add(time.Duration(i)*time.Minute), titles...)); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Check(ctx); err != nil {
				t.Fatalf("healthy store: %v", err)
			}
			if err := db.bdb.Update(tt.damage); err != nil {
				t.Fatal(err)
			}
			err := db.Check(ctx)
			if !errors.Is(err, storage.ErrInconsistent) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check = %v, want storage.ErrInconsistent mentioning %q", err, tt.want)
			}
		})
	}
}

// rewriteMeta damages the metadata of "r".
func rewriteMeta(damage func(m *meta)) func(txn *bdg.Txn) error {
	return func(txn *bdg.Txn) error {
		m, err := getMeta(txn, "r")
		if err != nil {
			return err
		}
		damage(&m)
		rec, _, _ := m.encode()
		return txn.Set(metaKey("r"), rec)
	}
}

// rewriteVersion damages version seq of "r": its header is written from hdr
// and its document from body, both what was stored until damage changes them.
func rewriteVersion(seq uint64, damage func(hdr, body *schema.Document)) func(txn *bdg.Txn) error {
	return func(txn *bdg.Txn) error {
		v, err := getValue(txn, versionKey("r", seq))
		if err != nil {
			return err
		}
		body, vi, err := decodeVersion(seq, v)
		if err != nil {
			return err
		}
		hdr := &schema.Document{Timestamp: vi.Timestamp, Items: make([]schema.Item, vi.Items),
			Channel: schema.Channel{Title: vi.Title, Description: vi.Description}}
		damage(hdr, body)
		xmlData, err := schema.Marshal(body)
		if err != nil {
			return err
		}
		return txn.Set(versionKey("r", seq), encodeVersion(hdr, xmlData))
	}
}

// rewriteItem damages the item entry of "r"'s item itemID.
func rewriteItem(itemID string, damage func(x *itemEntry)) func(txn *bdg.Txn) error {
	return func(txn *bdg.Txn) error {
		x, ok, err := getItemEntry(txn, itemKey("r", itemID))
		if !ok || err != nil {
			return fmt.Errorf("item entry of %s: %v, %v", itemID, ok, err)
		}
		damage(&x)
		return txn.Set(itemKey("r", itemID), x.encode())
	}
}

func TestTimeKeysOrder(t *testing.T) {
	times := []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Unix(0, 0),
		time.Unix(0, 1),
		time.Unix(1, 0),
		time.Date(2026, 3, 1, 12, 0, 0, 5, time.UTC),
		time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC),
	}
	for i := 1; i < len(times); i++ {
		a, b := makeSlot(times[i-1], 9, 0), makeSlot(times[i], 1, 0)
		if bytes.Compare(a, b) <= 0 {
			t.Errorf("slot of %v does not sort after %v (newest first)", times[i-1], times[i])
		}
		if got := slotFirstSeq(a); got != 9 {
			t.Errorf("first seq round trip = %d", got)
		}
		if got := slotFirstSeen(b); !got.Equal(times[i]) {
			t.Errorf("round trip %v = %v", times[i], got)
		}
	}
	// Same time: the later version first, then page order.
	if bytes.Compare(makeSlot(times[5], 2, 5), makeSlot(times[5], 1, 0)) >= 0 ||
		bytes.Compare(makeSlot(times[5], 1, 0), makeSlot(times[5], 1, 1)) >= 0 {
		t.Error("tie break order wrong")
	}
}

func TestSlogAdapter(t *testing.T) {
	var buf bytes.Buffer
	l := slogLogger{log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	l.Warningf("disk %s is %d%% full\n", "vda", 93)
	l.Debugf("hidden %d", 1)
	l.Infof("bookkeeping %d", 2)
	got := buf.String()
	if !strings.Contains(got, `level=WARN msg=badger detail="disk vda is 93% full"`) || strings.Contains(got, "hidden") || strings.Contains(got, "bookkeeping") {
		t.Errorf("log = %q", got)
	}
	// Badger logs through the adapter when it opens a store (at debug level).
	buf.Reset()
	l = slogLogger{log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	db, err := Open(t.TempDir(), Options{MemTableSize: 8 << 20, Logger: l.log})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "msg=badger") {
		t.Errorf("no badger log through slog: %q", buf.String())
	}
}

func TestFoldMatchesSchema(t *testing.T) {
	var ascii strings.Builder
	for c := range 128 {
		ascii.WriteByte(byte(c))
	}
	for _, s := range []string{"", "Hello WORLD", ascii.String(), "STRASSE straße", "ΣΊΣΥΦΟΣ", "KK", "İstanbul", "ǅ"} {
		if got, want := fold(s), schema.Fold(s); got != want {
			t.Errorf("fold(%q) = %q, schema.Fold = %q", s, got, want)
		}
	}
}

func TestCodecRoundTrip(t *testing.T) {
	it := schema.Item{Index: 7, ID: "id", Title: "T", Link: "https://x/", Description: "D",
		Image:      &schema.Image{Title: "i", Link: "l", URL: "u"},
		Extensions: schema.Extensions{{URI: "urn:x", Prefix: "x", LocalName: "y", Value: "v"}}}
	got, err := decodeContent(encodeContent(&it)) // the index is kept in m and x, not in f
	if err != nil || got.ID != it.ID || got.Index != 0 || *got.Image != *it.Image || len(got.Extensions) != 1 || got.Extensions[0] != it.Extensions[0] {
		t.Fatalf("content round trip = %+v, %v", got, err)
	}
	b := encodeContent(&it)
	for n := range len(b) {
		if _, err := decodeContent(b[:n]); err == nil {
			t.Fatalf("truncated record of %d bytes decoded without error", n)
		}
	}
}

// TestDecodeContentExtensionCountBeyondRecord: a damaged f record claiming
// more extensions than it has bytes left is refused, without allocating for
// the claim (2^62 extensions would not fit in any memory).
func TestDecodeContentExtensionCountBeyondRecord(t *testing.T) {
	head := encodeContent(&schema.Item{ID: "id", Title: "T"})
	head = head[:len(head)-1] // its extension count, 0, cut off
	for _, n := range []uint64{2, 1 << 62, math.MaxUint64} {
		b := append(binary.AppendUvarint(bytes.Clone(head), n), 0) // one byte left: an empty URI
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("decoding a record claiming %d extensions panicked: %v", n, r)
				}
			}()
			if it, err := decodeContent(b); err == nil {
				t.Errorf("record claiming %d extensions decoded as %+v", n, it)
			}
		}()
	}
}

// TestEncodeContentAllocatesOnce: encodeContent sizes an f record up front,
// its image and extensions included, so that a save allocates each once.
func TestEncodeContentAllocatesOnce(t *testing.T) {
	it := schema.Item{ID: "id", Title: strings.Repeat("t", 100), Link: "https://example.org/a", Description: strings.Repeat("d", 100),
		Image:      &schema.Image{Title: "A chart of the town's budget", Link: "https://example.org/a", URL: "https://example.org/images/" + strings.Repeat("c", 40) + ".png"},
		Extensions: schema.Extensions{{URI: "urn:x", Prefix: "x", LocalName: "y", Value: "v"}, {URI: "urn:z", Prefix: "z", LocalName: "w", Value: "u"}}}
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	var sink []byte
	if n := testing.AllocsPerRun(100, func() { sink = encodeContent(&it) }); n != 1 {
		t.Errorf("encodeContent allocated %v times, want 1", n)
	}
	_ = sink
}

// TestUvarintBytesBounds: a journal operation's length-prefixed field that
// claims more bytes than are left is refused, at one byte over and beyond,
// and taken at exactly what is left.
func TestUvarintBytesBounds(t *testing.T) {
	for _, tc := range []struct {
		in          []byte
		field, rest string
		ok          bool
	}{
		{[]byte{2, 'a', 'b'}, "ab", "", true},
		{[]byte{1, 'a', 'b'}, "a", "b", true},
		{[]byte{0}, "", "", true},
		{[]byte{3, 'a', 'b'}, "", "", false},
		{[]byte{4, 'a', 'b'}, "", "", false},
		{[]byte{}, "", "", false},
		{[]byte{0x80}, "", "", false},
	} {
		field, rest, err := uvarintBytes(tc.in)
		if (err == nil) != tc.ok || tc.ok && (string(field) != tc.field || string(rest) != tc.rest) {
			t.Errorf("uvarintBytes(%v) = %q, %q, %v", tc.in, field, rest, err)
		}
	}
}

// TestSaveFailingMidPlanWritesNothing: a save whose planning fails after it
// has listed some writes (here at a damaged item entry, after a new item's
// writes) fails and commits none of them: no item of the refused version
// appears, and the store keeps its two versions.
func TestSaveFailingMidPlanWritesNothing(t *testing.T) {
	db := openInternal(t)
	ctx := context.Background()
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// "a" is in the first version only: its entry is read again when it returns.
	for i, titles := range [][]string{{"a", "b"}, {"b"}} {
		if _, err := db.Save(ctx, testDoc("r", ts.Add(time.Duration(i)*time.Minute), titles...)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.bdb.Update(func(txn *bdg.Txn) error { return txn.Set(itemKey("r", "a"), []byte{0xff}) }); err != nil {
		t.Fatal(err)
	}
	res, err := db.Save(ctx, testDoc("r", ts.Add(2*time.Minute), "c", "a"))
	if err == nil {
		t.Fatalf("save reading a damaged item entry: %+v, nil error; want an error", res)
	}
	if info, err := db.Resource(ctx, "r"); err != nil || info.Versions != 2 || info.LatestSeq != 2 {
		t.Errorf("after the failed save: %+v, %v; want versions 1 and 2 only", info, err)
	}
	err = db.view(ctx, func(txn *bdg.Txn) error {
		if _, found, err := getItemEntry(txn, itemKey("r", "c")); found || err != nil {
			return fmt.Errorf("item entry of c: found %v, %v; want none", found, err)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// TestEncodePageAllocatesOnce: encodePage sizes a search page for all its
// entries up front, so that writing a page of many items allocates once.
func TestEncodePageAllocatesOnce(t *testing.T) {
	var entries []folded
	for i := range 20 {
		entries = append(entries, folded{pos: uint32(i), title: strings.Repeat("t", 80), link: "https://example.org/" + strings.Repeat("l", 40),
			desc: strings.Repeat("d", 300)})
	}
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	var sink []byte
	if n := testing.AllocsPerRun(100, func() { sink = encodePage(entries) }); n != 1 {
		t.Errorf("encodePage allocated %v times, want 1", n)
	}
	_ = sink
}
