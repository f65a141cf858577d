package badger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/dynamo-rss/dynamo/storage"
)

// encodeRecord builds a record as journal.write lays it out, padded.
func encodeRecord(epoch, seq uint64, payload []byte) []byte {
	rec := make([]byte, journalHeader, journalHeader+len(payload))
	rec = append(rec, payload...)
	binary.LittleEndian.PutUint32(rec[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint64(rec[8:16], epoch)
	binary.LittleEndian.PutUint64(rec[16:24], seq)
	binary.LittleEndian.PutUint32(rec[4:8], crc32.Checksum(rec[8:], crcTable))
	return append(rec, make([]byte, roundBlock(int64(len(rec)))-int64(len(rec)))...)
}

func setOp(k, v string) []byte { return appendOp(nil, []byte(k), []byte(v), false) }

func seqs(recs []record) []uint64 {
	var out []uint64
	for _, r := range recs {
		out = append(out, r.seq)
	}
	return out
}

// A segment is read from its start while records are whole, pass their CRC
// and follow each other: a stale tail (an older round, or an older epoch)
// and a write cut by a crash end it.
func TestReadSegmentStopsAtStaleOrCutRecords(t *testing.T) {
	var seg []byte
	for seq := uint64(1); seq <= 3; seq++ {
		seg = append(seg, encodeRecord(2, seq, setOp(fmt.Sprint("k", seq), "v"))...)
	}
	stale := encodeRecord(2, 41, setOp("old", "round"))
	older := encodeRecord(1, 4, setOp("old", "epoch"))
	for _, tt := range []struct {
		name string
		seg  []byte
		want int
	}{
		{"zero-filled end", append(bytes.Clone(seg), make([]byte, 3*journalBlock)...), 3},
		{"older round of the same epoch", append(bytes.Clone(seg), stale...), 3},
		{"older epoch", append(bytes.Clone(seg), older...), 3},
		{"end of file", seg, 3},
		{"empty", nil, 0},
	} {
		if got := readSegment(tt.seg); len(got) != tt.want {
			t.Errorf("%s: %d records %v, want %d", tt.name, len(got), seqs(got), tt.want)
		}
	}
	cut := bytes.Clone(seg)
	cut[2*journalBlock+journalHeader+1] ^= 0xff // the third record's payload
	if got := readSegment(cut); len(got) != 2 {
		t.Errorf("damaged third record: read %v, want the first two", seqs(got))
	}
	if got := readSegment(seg[:2*journalBlock+journalHeader+2]); len(got) != 2 {
		t.Errorf("third record cut short: read %v, want the first two", seqs(got))
	}
}

func TestToReplay(t *testing.T) {
	rec := func(epoch, seq uint64, payload string, seg int) record {
		return record{epoch: epoch, seq: seq, payload: []byte(payload), seg: seg}
	}
	// Segment 1 holds 5-7 of epoch 3 after a clean epoch 2; segment 0 holds 8-9.
	recs := []record{rec(3, 8, "x", 0), rec(3, 9, "x", 0), rec(2, 30, "x", 1), rec(2, 31, "", 1), rec(3, 5, "x", 1), rec(3, 6, "x", 1), rec(3, 7, "x", 1)}
	run, epoch, last := toReplay(slices.Clone(recs))
	if epoch != 3 || last != 0 || fmt.Sprint(seqs(run)) != "[5 6 7 8 9]" {
		t.Fatalf("got %v epoch %d in segment %d, want 5..9 of epoch 3, the last in segment 0", seqs(run), epoch, last)
	}
	// Records before a gap are durable (their segment was checkpointed before
	// the writer came back to it and tore the records in between).
	run, _, last = toReplay(append(slices.Clone(recs), rec(3, 12, "x", 1), rec(3, 13, "", 1)))
	if fmt.Sprint(seqs(run)) != "[12 13]" || last != 1 || len(run[1].payload) != 0 {
		t.Fatalf("after a gap: %v in segment %d, want 12 and the clean-close marker 13 in segment 1", seqs(run), last)
	}
	if run, epoch, last := toReplay(nil); epoch != 0 || last != -1 || len(run) != 0 {
		t.Fatalf("no journal: %v %d %d", run, epoch, last)
	}
}

// A new epoch starts in the segment without the previous epoch's latest
// record: its first write, torn by a power loss, cannot take that record
// (the clean-close marker) away and make an older run replay over newer
// data.
func TestJournalTornFirstWriteOfAnEpoch(t *testing.T) {
	dir := t.TempDir()
	opts := Options{valueLogFileSize: 4 << 20, journalSegment: 64 << 10}
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 1; i <= 40; i++ {
		err := db.UpdateRecord(ctx, "k", "key", func([]byte) ([]byte, error) { return []byte(fmt.Sprint("v", i)), nil })
		if err != nil {
			t.Fatal(err)
		}
	}
	if s := db.journal.switches; s < 2 || s > 40 { // at most one per write
		t.Fatalf("%d segment switches over 40 writes: both segments should hold records of the epoch", s)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	// The first write of the new epoch, torn: junk over the start of the
	// segment it writes first.
	name := filepath.Join(dir, journalDir, segmentNames[db.journal.cur])
	crash := t.TempDir()
	copyDir(t, dir, crash)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(crash, journalDir, filepath.Base(name)), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xa5}, 3*journalBlock), journalBlock); err != nil {
		t.Fatal(err)
	}
	f.Close()
	db, err = Open(crash, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.Record(ctx, "k", "key"); err != nil || string(v) != "v40" {
		t.Fatalf("after a torn first write: %q, %v; want v40", v, err)
	}
}

// copyDir copies the regular files of src (and of its journal directory) to
// dst; not the poll states (a Badger of their own, with 2 GB sparse files).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			if e.Name() == journalDir {
				copyDir(t, filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()))
			}
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// dump lists every key and value of the store.
func dump(t *testing.T, db *DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := db.bdb.View(func(txn *bdg.Txn) error {
		it := txn.NewIterator(bdg.DefaultIteratorOptions)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			out[string(it.Item().Key())] = string(v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// exercise writes through every path that writes to the store.
func exercise(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	ts := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, id := range []string{"a", "b", "c"} {
		if _, err := db.Register(ctx, storage.Registration{ID: id, Definition: []byte("url: https://example.org/" + id)}); err != nil {
			t.Fatal(err)
		}
		for v := range 6 {
			titles := []string{fmt.Sprint(id, v), fmt.Sprint(id, v+1), fmt.Sprint(id, v+2)}
			if _, err := db.Save(ctx, testDoc(id, ts.Add(time.Duration(v)*time.Hour), titles...)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n, err := db.Prune(ctx, "a", storage.Retention{MaxVersions: 2}, ts.Add(24*time.Hour)); err != nil || n != 4 {
		t.Fatalf("prune: %d %v", n, err)
	}
	if _, err := db.Unregister(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Register(ctx, storage.Registration{ID: "b", Definition: []byte("again")}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Save(ctx, testDoc("b", ts.Add(48*time.Hour), "fresh")); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"x", "y"} {
		err := db.UpdateRecord(ctx, "sub", key, func([]byte) ([]byte, error) { return []byte("on"), nil })
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := db.UpdateRecord(ctx, "sub", "x", func([]byte) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
}

// A power loss may take every write Badger made since the last checkpoint
// (here: since Open). The journal must hold them all: a copy of the store
// taken right after Open, given the journal of the run that followed,
// reopens to exactly the same keys and values.
func TestJournalReplaysEveryWrite(t *testing.T) {
	dir, snap := t.TempDir(), t.TempDir()
	opts := Options{MemTableSize: 4 << 20, valueLogFileSize: 4 << 20}
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	copyDir(t, dir, snap) // what a power loss just after Open would leave
	exercise(t, db)
	copyDir(t, filepath.Join(dir, journalDir), filepath.Join(snap, journalDir))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	var cleanLog, crashLog bytes.Buffer
	logTo := func(b *bytes.Buffer) Options {
		o := opts
		o.Logger = slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelInfo}))
		return o
	}
	want := reopenDump(t, dir, logTo(&cleanLog))
	got := reopenDump(t, snap, logTo(&crashLog))
	// The operator is told of a replay, and of none after a clean close.
	if strings.Contains(cleanLog.String(), "journal replayed") {
		t.Errorf("a replay logged after a clean close:\n%s", cleanLog.String())
	}
	if !regexp.MustCompile(`msg="journal replayed" records=[1-9]`).MatchString(crashLog.String()) {
		t.Errorf("no replay logged after a power loss:\n%s", crashLog.String())
	}
	if len(want) < 30 {
		t.Fatalf("only %d keys: the exercise wrote little", len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("key %q: replayed %d bytes, want %d", k, len(got[k]), len(v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("key %q is in the replayed store only", k)
		}
	}
}

func reopenDump(t *testing.T, dir string, opts Options) map[string]string {
	t.Helper()
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}()
	if err := db.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	return dump(t, db)
}

// With small segments the journal goes round many times, checkpointing
// each segment before it is reused; a crash copy of the running store
// (Badger's files as the page cache has them, and the journal) opens with
// every acknowledged version.
func TestJournalSegmentsGoRound(t *testing.T) {
	dir := t.TempDir()
	opts := Options{MemTableSize: 4 << 20, valueLogFileSize: 4 << 20, journalSegment: 64 << 10}
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ts := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	const versions = 300
	for v := range versions {
		if _, err := db.Save(ctx, testDoc("r", ts.Add(time.Duration(v)*time.Minute), fmt.Sprint("item", v), fmt.Sprint("item", v+1))); err != nil {
			t.Fatal(err)
		}
	}
	if s := db.journal.switches; s < 4 || s > versions { // at most one per save
		t.Fatalf("the journal switched segments %d times over %d saves: the test does not exercise reuse", s, versions)
	}
	crash := t.TempDir()
	copyDir(t, dir, crash)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := Open(crash, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	info, err := got.Resource(ctx, "r")
	if err != nil || info.Versions != versions {
		t.Fatalf("after the crash copy: %+v %v, want %d versions", info, err, versions)
	}
	if err := got.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// A clean close leaves nothing to replay; a reopened store starts a new epoch.
func TestJournalCleanCloseReplaysNothing(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	bdb, err := openBadger(dir, Options{}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	epoch, _, replayed, err := replayJournal(filepath.Join(dir, journalDir), bdb, log)
	if err != nil || epoch != 1 || replayed != 0 {
		t.Fatalf("after a clean close: epoch %d, %d records replayed, %v; want epoch 1, none", epoch, replayed, err)
	}
}

func vlogFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.vlog"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// storeWithGarbage is a journaled store in dir whose value log is mostly
// garbage: 200 values of 8 KiB written six times over, compacted.
func storeWithGarbage(t *testing.T, dir string) *DB {
	t.Helper()
	opts := Options{MemTableSize: 1 << 20, valueLogFileSize: 1 << 20, GCInterval: time.Hour}
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	value := bytes.Repeat([]byte("v"), 8<<10) // over the value threshold: in the value log
	// Six rounds, six level-0 tables: level 0 is compacted from five.
	for round := range 6 {
		for k := range 200 {
			key := []byte(fmt.Sprintf("z/%03d", k))
			err := db.update(ctx, func(txn wtxn) error { return txn.Set(key, append(value[:len(value):len(value)], byte(round))) })
			if err != nil {
				t.Fatal(err)
			}
		}
		// Closing flushes the memtable: one level-0 table per round.
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if db, err = Open(dir, opts); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.bdb.Flatten(1); err != nil { // compaction counts the garbage
		db.Close()
		t.Fatal(err)
	}
	return db
}

// A checkpoint that fails after a rewrite is the GC's error: the old file
// must not be deleted as if the moved values were durable.
func TestValueLogGCCheckpointFails(t *testing.T) {
	db := storeWithGarbage(t, t.TempDir())
	defer db.Close()
	errSync := errors.New("fsync: input/output error")
	db.checkpoint = func() error { return errSync }
	err := db.valueLogGC()
	if errors.Is(err, bdg.ErrNoRewrite) {
		t.Skipf("badger found nothing to rewrite (%v): the test's sizes are off", err)
	}
	if !errors.Is(err, errSync) || !strings.Contains(err.Error(), "checkpoint after value-log gc") {
		t.Fatalf("valueLogGC = %v, want the checkpoint's error", err)
	}
}

// The value-log GC moves live values to the current file and deletes the
// old one: with the journal, the deletion waits for a checkpoint, since the
// moved values are not synced and the journal no longer holds them.
func TestValueLogGCDeletesAfterCheckpoint(t *testing.T) {
	dir := t.TempDir()
	db := storeWithGarbage(t, dir)
	defer db.Close()
	ctx := context.Background()
	value := bytes.Repeat([]byte("v"), 8<<10)
	before := vlogFiles(t, dir)
	var atCheckpoint []string
	db.checkpoint = func() error {
		atCheckpoint = vlogFiles(t, dir)
		return syncFiles(dir)
	}
	switch err := db.valueLogGC(); {
	case errors.Is(err, bdg.ErrNoRewrite):
		t.Skipf("badger found nothing to rewrite (%v): the test's sizes are off", err)
	case err != nil:
		t.Fatalf("valueLogGC: %v", err)
	}
	after := vlogFiles(t, dir)
	if atCheckpoint == nil {
		t.Fatal("no checkpoint after a rewrite")
	}
	for _, f := range before {
		if !slices.Contains(atCheckpoint, f) {
			t.Errorf("%s was deleted before the checkpoint", filepath.Base(f))
		}
	}
	if len(after) >= len(atCheckpoint) {
		t.Errorf("value-log files: %d before, %d at the checkpoint, %d after: nothing deleted", len(before), len(atCheckpoint), len(after))
	}
	for k := range 200 {
		key := []byte(fmt.Sprintf("z/%03d", k))
		err := db.view(ctx, func(txn *bdg.Txn) error {
			v, err := getValue(txn, key)
			if err == nil && (len(v) != len(value)+1 || v[len(value)] != 5) {
				err = fmt.Errorf("value of %s changed", key)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A purge bigger than one transaction of a small memtable is split until
// it fits (writeAll), not refused.
func TestPurgeSplitsToFitSmallMemtable(t *testing.T) {
	db, err := Open(t.TempDir(), Options{MemTableSize: 1 << 20, valueLogFileSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.Register(ctx, storage.Registration{ID: "big", Definition: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for v := range 25 {
		titles := make([]string, 100)
		for i := range titles {
			titles[i] = fmt.Sprintf("item-%d-%d", v, i)
		}
		if _, err := db.Save(ctx, testDoc("big", ts.Add(time.Duration(v)*time.Hour), titles...)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Unregister(ctx, "big"); err != nil {
		t.Fatal(err)
	}
	if err := db.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// FuzzJournalSegment: whatever a segment file holds (a torn write, another
// program's bytes, a damaged disk), reading it and its operations never
// panics, and what it returns is whole: each record's operations parse or
// fail with an error, never out of bounds.
func FuzzJournalSegment(f *testing.F) {
	var seg []byte
	for seq := uint64(1); seq <= 3; seq++ {
		payload := appendOp(setOp(fmt.Sprint("key", seq), "value"), []byte("gone"), nil, true)
		seg = append(seg, encodeRecord(7, seq, payload)...)
	}
	f.Add(seg)
	f.Add(seg[:journalBlock+10])
	f.Add(append(bytes.Clone(seg[:journalBlock]), encodeRecord(7, 9, nil)...))
	f.Add([]byte{})
	f.Add(make([]byte, journalHeader))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs := readSegment(data)
		for i, r := range recs {
			if r.epoch == 0 || i > 0 && (r.epoch != recs[0].epoch || r.seq != recs[i-1].seq+1) {
				t.Fatalf("record %d: epoch %d seq %d after %+v", i, r.epoch, r.seq, recs[:i])
			}
			n := 0
			err := forEachOp(r.payload, func(key, value []byte, del bool) error {
				n += len(key) + len(value)
				return nil
			})
			if err == nil && n > len(r.payload) {
				t.Fatalf("operations of %d bytes in a payload of %d", n, len(r.payload))
			}
		}
		if run, _, last := toReplay(recs); len(run) > len(recs) || (len(run) > 0 && last != run[len(run)-1].seg) {
			t.Fatalf("replay %d of %d records, last in segment %d", len(run), len(recs), last)
		}
	})
}

// directJournal opens a journal in a new directory whose segment is
// written with O_DIRECT, and skips the test (saying why) where the file
// system has none.
func directJournal(t *testing.T, why string) *journal {
	t.Helper()
	j, err := openJournal(t.TempDir(), 1, 1, 1<<20, func() error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.closeFiles() })
	if !j.direct[j.cur] {
		t.Skip("this file system has no O_DIRECT: " + why)
	}
	return j
}

// TestJournalBufferedFallback: where the file system refuses an O_DIRECT
// write (EINVAL), the journal writes that record through the page cache and
// fdatasync instead, and keeps doing so for the segment: every record is
// there, none is lost or refused. The refusal is real: an O_DIRECT write
// at an offset off the device's block size.
func TestJournalBufferedFallback(t *testing.T) {
	j := directJournal(t, "every other test runs the buffered path")
	rec := func(payload string) []byte { return append(make([]byte, journalHeader), payload...) }
	if err := j.write(rec("direct")); err != nil {
		t.Fatal(err)
	}
	j.off += 100 // off every block boundary: O_DIRECT refuses the next write
	at := j.off
	if err := j.write(rec("refused, then buffered")); err != nil {
		t.Fatalf("a write O_DIRECT refused: %v, want it written through the page cache", err)
	}
	if j.direct[j.cur] {
		t.Fatal("the segment is still written with O_DIRECT after EINVAL")
	}
	next := j.off
	if err := j.write(rec("buffered")); err != nil {
		t.Fatalf("the next write, buffered and synced: %v", err)
	}
	data, err := os.ReadFile(j.segs[j.cur].Name())
	if err != nil {
		t.Fatal(err)
	}
	for off, want := range map[int64]string{0: "direct", at: "refused, then buffered", next: "buffered"} {
		got := readSegment(data[off:])
		if len(got) == 0 || string(got[0].payload) != want {
			t.Errorf("at %d: %v, want the record %q", off, got, want)
		}
	}
}

// TestJournalGoesWithNoSyncWrites: a store that journaled, opened again
// with NoSyncWrites, replays what the journal holds, then removes the
// journal (nothing will write to it), and keeps every write.
func TestJournalGoesWithNoSyncWrites(t *testing.T) {
	dir, snap := t.TempDir(), t.TempDir()
	opts := Options{MemTableSize: 4 << 20, valueLogFileSize: 4 << 20}
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	copyDir(t, dir, snap) // a power loss just after Open
	exercise(t, db)
	copyDir(t, filepath.Join(dir, journalDir), filepath.Join(snap, journalDir))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	want := reopenDump(t, dir, opts)
	noSync := opts
	noSync.NoSyncWrites = true
	fresh := t.TempDir() // a store that never journaled
	if got := reopenDump(t, fresh, noSync); len(got) != 0 {
		t.Errorf("a new store without syncs: %d keys", len(got))
	}
	for _, d := range []string{dir, snap} { // after a clean close, and with records to replay
		got := reopenDump(t, d, noSync)
		if len(got) != len(want) {
			t.Errorf("%s: %d keys after reopening without syncs, want %d", d, len(got), len(want))
		}
		for _, name := range []string{journalDir, journalDir + ".old"} {
			if _, err := os.Stat(filepath.Join(d, name)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: %s still there (%v)", d, name, err)
			}
		}
	}
}

// writeAll halves its transactions while Badger finds them too big, down
// to one write each, and a single write too big for any transaction fails
// with ErrTxnTooBig instead of being retried for ever. With a memtable of
// 20,000 bytes a transaction holds 3,000 (values under the value-log
// threshold count in full): two 2,000-byte values need one each, and one
// with a 1,100-byte key fits in none.
func TestWriteAllSplitsDownToOneWrite(t *testing.T) {
	db, err := Open(t.TempDir(), Options{MemTableSize: 20000, valueLogFileSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// A bound on the wait, should writeAll loop: its error is then the deadline's.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	value := bytes.Repeat([]byte("v"), 2000)
	pair := []kv{{key: []byte("pair/1"), value: value}, {key: []byte("pair/2"), value: value}}
	if err := db.writeAll(ctx, pair); err != nil {
		t.Fatalf("two writes that fit one transaction each: %v", err)
	}
	for _, o := range pair {
		if v, ok := readKey(t, db, string(o.key)); !ok || !bytes.Equal(v, value) {
			t.Errorf("%s not stored", o.key)
		}
	}
	huge := []kv{{key: bytes.Repeat([]byte("k"), 1100), value: value}}
	if err := db.writeAll(ctx, huge); !errors.Is(err, bdg.ErrTxnTooBig) {
		t.Fatalf("a write too big for any transaction: %v, want ErrTxnTooBig", err)
	}
}

// Each segment is read on its own: with 0.journal missing (lost, removed by
// hand), the records of 1.journal are still replayed, and the epoch they
// carry is still found, so that the next one is above it and never mixed
// with them.
func TestJournalReplaysSecondSegmentAlone(t *testing.T) {
	dir := t.TempDir()
	jdir := filepath.Join(dir, journalDir)
	if err := os.MkdirAll(jdir, 0o755); err != nil {
		t.Fatal(err)
	}
	seg := append(encodeRecord(7, 1, setOp("k", "one")), encodeRecord(7, 2, setOp("k", "two"))...)
	if err := os.WriteFile(filepath.Join(jdir, segmentNames[1]), seg, 0o644); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	bdb, err := openBadger(dir, Options{}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	epoch, lastSeg, replayed, err := replayJournal(jdir, bdb, log)
	if err != nil || epoch != 7 || lastSeg != 1 || replayed != 2 {
		t.Fatalf("replay: epoch %d, last segment %d, %d records, %v; want epoch 7, segment 1, 2 records", epoch, lastSeg, replayed, err)
	}
	var got []byte
	err = bdb.View(func(txn *bdg.Txn) error {
		v, err := getValue(txn, []byte("k"))
		got = v
		return err
	})
	if err != nil || string(got) != "two" {
		t.Errorf("k = %q, %v after the replay; want two", got, err)
	}
}

// Open checkpoints the store (syncs Badger's files) before it relies on
// the journal: a store written without syncs, opened with them, has every
// earlier write made durable before the first journaled one, which the
// journal alone could not restore; and a journal replayed into a store
// opened without syncs is made durable before the journal goes.
func TestOpenCheckpointsBeforeJournaling(t *testing.T) {
	ctx := context.Background()
	ts := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var syncs int
	counting := func(o Options) Options {
		o.syncStore = func(dir string) error { syncs++; return syncFiles(dir) }
		return o
	}
	opts := Options{MemTableSize: 4 << 20, valueLogFileSize: 4 << 20}
	noSync := opts
	noSync.NoSyncWrites = true

	// Written without syncs, then opened with them.
	dir := t.TempDir()
	db, err := Open(dir, noSync)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Save(ctx, testDoc("r", ts, "a")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(dir, counting(opts)); err != nil {
		t.Fatal(err)
	}
	if syncs != 1 {
		t.Errorf("%d checkpoints on opening an unsynced store with syncs, want 1", syncs)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// A journal to replay (a power loss right after Open), opened without syncs.
	dir, snap := t.TempDir(), t.TempDir()
	if db, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	copyDir(t, dir, snap)
	if _, err := db.Save(ctx, testDoc("r", ts, "a")); err != nil {
		t.Fatal(err)
	}
	copyDir(t, filepath.Join(dir, journalDir), filepath.Join(snap, journalDir))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	syncs = 0
	if db, err = Open(snap, counting(noSync)); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if syncs != 1 {
		t.Errorf("%d checkpoints on replaying a journal into a store without syncs, want 1", syncs)
	}
	if info, err := db.Resource(ctx, "r"); err != nil || info.Versions != 1 {
		t.Errorf("after the replay: %+v, %v; want the saved version", info, err)
	}
}
