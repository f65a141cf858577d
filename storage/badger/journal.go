package badger

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/dynamo-rss/dynamo/storage"
)

// The journal: synced commits without Badger's syncs.
//
// A synced Badger commit msyncs two memory-mapped files one after the other
// (the value log, then the memtable's log): two disk flushes per commit and
// about 250 µs of CPU per version. With the journal, Badger does not sync.
// Each batch of the committer is first written, as the list of its key
// writes, to a journal file with one synced write, then committed to Badger;
// the savers are answered after both, so a nil error still means "on disk".
//
// The invariant: every write Badger may not have on disk is in the journal.
//   - Open replays the journal into Badger before anything else. A record is
//     a batch's blind sets and deletes, in commit order, so replaying records
//     Badger already has changes nothing, and replaying all of them after
//     the last checkpoint restores what a power loss took (Badger itself
//     recovers a prefix of its writes). A batch reaches Badger only after
//     its record is on disk, so Badger never holds a write the journal lacks.
//   - The journal is two segment files used in turn. Before the writer
//     returns to a segment, a checkpoint (an fsync of every file of Badger's
//     directory) that began after the segment's last record must be done.
//   - Every write to the store goes through the committer, so through the
//     journal: saves, registrations, records, prunes, purges.
//   - Badger's own rewrites: memtable flushes write synced tables from data
//     that is durable or journaled; the value-log GC, which moves old values
//     to the current file and deletes the old one, holds that deletion until
//     a checkpoint (see [DB.valueLogGC]). One window remains: while the GC
//     rewrites a file (seconds, at most once per GC interval) the moved
//     values and their new pointers are unsynced, and a power loss that
//     wrote back the pointers but not the values would leave those keys
//     unreadable (kill -9 cannot: the page cache survives it). Badger offers
//     no hook to order those writes.
//   - A batch whose record was written but whose Badger commit failed is
//     answered with an error, stops the journal, and is applied by the next
//     Open's replay: an error means "maybe stored", as with any database.
//
// The segments grow by appends in their first round and are overwritten in
// place afterwards, so that a commit writes allocated blocks and its sync
// flushes data alone. Where the file system allows it they are written with
// O_DIRECT|O_DSYNC: a commit's blocks go to the disk without the page cache,
// and its sync does not wait for the other dirty pages of the disk
// (Badger's own writes), as an fdatasync does under load.
//
// A record is a 24-byte header (payload length, CRC-32C of what follows it,
// epoch, sequence number; little-endian), a payload of operations ('s' key
// value or 'd' key, each length a uvarint) and zeros up to the next multiple
// of journalBlock. Each Open starts a new epoch; sequence numbers count from
// 1 within it. A segment's records are read from its start while each one is
// whole, passes its CRC and follows the previous one (same epoch, next
// sequence number); what comes after is an older round or a write cut by a
// crash, which was never acknowledged. Replay applies the records of the
// latest epoch in sequence order, from the last gap; an empty record marks
// a clean close, after which nothing needs replaying. A new epoch starts in
// the segment that does not hold the previous epoch's latest record, so
// that tearing its first write cannot take that record away.

const (
	journalDir        = "journal"
	journalHeader     = 24
	defaultJournalSeg = 16 << 20
	journalBlock      = 4096 // records start on block boundaries (O_DIRECT)
	opSet             = 's'
	opDelete          = 'd'
)

var (
	crcTable     = crc32.MakeTable(crc32.Castagnoli)
	segmentNames = [2]string{"0.journal", "1.journal"}
)

// journal writes records for one writer (the committer's goroutine); the
// segment it leaves is checkpointed in the background.
type journal struct {
	dir        string // the journal directory
	segSize    int64
	checkpoint func() error // makes every write Badger has done durable

	segs     [2]*os.File
	direct   [2]bool // opened with O_DIRECT|O_DSYNC: no fdatasync
	cur      int
	off      int64
	epoch    uint64
	seq      uint64     // last record written
	freed    chan error // the checkpoint of the segment not in use, once done
	block    []byte     // an aligned buffer for O_DIRECT writes
	switches uint64     // segment changes, for tests
	err      error      // sticky: see write
}

type record struct {
	epoch, seq uint64
	payload    []byte
	seg        int // the segment it was read from
}

// readSegment returns the records at the start of a segment: each whole,
// passing its CRC and following the previous one.
func readSegment(data []byte) []record {
	var out []record
	for off := 0; off < len(data); {
		b := data[off:]
		if len(b) < journalHeader {
			break
		}
		size := binary.LittleEndian.Uint32(b[0:4])
		if uint64(size) > uint64(len(b)-journalHeader) {
			break
		}
		n := journalHeader + int(size)
		if crc32.Checksum(b[8:n], crcTable) != binary.LittleEndian.Uint32(b[4:8]) {
			break
		}
		r := record{epoch: binary.LittleEndian.Uint64(b[8:16]), seq: binary.LittleEndian.Uint64(b[16:24]), payload: b[journalHeader:n]}
		if r.epoch == 0 || len(out) > 0 && (r.epoch != out[len(out)-1].epoch || r.seq != out[len(out)-1].seq+1) {
			break
		}
		out = append(out, r)
		off += int(roundBlock(int64(n)))
	}
	return out
}

// toReplay returns the records of the latest epoch that are to be replayed,
// in order: the run of consecutive sequence numbers that ends with the
// latest record (its last one an empty clean-close marker when the store was
// closed cleanly), and the segment that holds that latest record (-1: none).
// A segment's stale tail is already cut by readSegment. Records before a gap
// are durable in Badger: the writer returns to a segment (overwriting, and
// perhaps tearing, what it held) only after a checkpoint covering it.
func toReplay(recs []record) (run []record, epoch uint64, lastSeg int) {
	for _, r := range recs {
		epoch = max(epoch, r.epoch)
	}
	recs = slices.DeleteFunc(recs, func(r record) bool { return r.epoch != epoch })
	if len(recs) == 0 {
		return nil, epoch, -1
	}
	slices.SortFunc(recs, func(a, b record) int { return cmp.Compare(a.seq, b.seq) })
	start := 0
	for i := 1; i < len(recs); i++ {
		if recs[i].seq != recs[i-1].seq+1 {
			start = i
		}
	}
	return recs[start:], epoch, recs[len(recs)-1].seg
}

// replayJournal applies what the journal in dir holds for Badger and
// returns the latest epoch found (0: none).
func replayJournal(dir string, bdb *bdg.DB, log *slog.Logger) (epoch uint64, lastSeg, replayed int, err error) {
	var all []record
	for i, name := range segmentNames {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, 0, 0, fmt.Errorf("read journal: %w", err)
		}
		recs := readSegment(data)
		for j := range recs {
			recs[j].seg = i
		}
		all = append(all, recs...)
	}
	run, epoch, lastSeg := toReplay(all)
	replay := run
	if len(replay) > 0 && len(replay[len(replay)-1].payload) == 0 {
		replay = nil // closed cleanly
	}
	for _, r := range replay {
		if len(r.payload) == 0 {
			continue
		}
		if err := applyRecord(bdb, r.payload); err != nil {
			return 0, 0, 0, fmt.Errorf("replay journal record %d of epoch %d: %w", r.seq, r.epoch, err)
		}
	}
	if len(replay) > 0 {
		log.Info("journal replayed", slog.Int("records", len(replay)))
	}
	return epoch, lastSeg, len(replay), nil
}

// applyRecord runs a record's operations in Badger transactions (one unless
// it is too big for one).
func applyRecord(bdb *bdg.DB, payload []byte) error {
	txn := bdb.NewTransaction(true)
	defer func() { txn.Discard() }()
	err := forEachOp(payload, func(key, value []byte, del bool) error {
		err := writeOp(txn, key, value, del)
		if errors.Is(err, bdg.ErrTxnTooBig) {
			if err := txn.Commit(); err != nil {
				return err
			}
			txn = bdb.NewTransaction(true)
			err = writeOp(txn, key, value, del)
		}
		return err
	})
	if err != nil {
		return err
	}
	return txn.Commit()
}

func writeOp(txn *bdg.Txn, key, value []byte, del bool) error {
	if del {
		return txn.Delete(key)
	}
	return txn.Set(key, value)
}

// forEachOp calls fn for each operation of a record's payload.
func forEachOp(payload []byte, fn func(key, value []byte, del bool) error) error {
	for len(payload) > 0 {
		op := payload[0]
		key, rest, err := uvarintBytes(payload[1:])
		if err != nil {
			return err
		}
		var value []byte
		switch op {
		case opSet:
			if value, rest, err = uvarintBytes(rest); err != nil {
				return err
			}
		case opDelete:
		default:
			return fmt.Errorf("unknown operation %q", op)
		}
		payload = rest
		if err := fn(key, value, op == opDelete); err != nil {
			return err
		}
	}
	return nil
}

func uvarintBytes(b []byte) (field, rest []byte, err error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, errors.New("malformed operation")
	}
	return b[k : k+int(n)], b[k+int(n):], nil
}

// appendOp adds one operation to a record's payload.
func appendOp(rec []byte, key, value []byte, del bool) []byte {
	if del {
		rec = append(rec, opDelete)
		rec = binary.AppendUvarint(rec, uint64(len(key)))
		return append(rec, key...)
	}
	rec = append(rec, opSet)
	rec = binary.AppendUvarint(rec, uint64(len(key)))
	rec = append(rec, key...)
	rec = binary.AppendUvarint(rec, uint64(len(value)))
	return append(rec, value...)
}

// openJournal opens the segments in dir for epoch, after a checkpoint made
// whatever they hold durable in Badger.
func openJournal(dir string, epoch uint64, avoid int, segSize int64, checkpoint func() error) (*journal, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := syncDir(filepath.Dir(dir)); err != nil { // the journal directory's entry
		return nil, fmt.Errorf("journal: %w", err)
	}
	j := &journal{dir: dir, segSize: segSize, checkpoint: checkpoint, epoch: epoch, freed: make(chan error, 1)}
	if avoid == 0 {
		j.cur = 1 // the previous epoch's latest record stays whole
	}
	for i, name := range segmentNames {
		path := filepath.Join(dir, name)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("journal: %w", err), j.closeFiles())
		}
		if d, err := openDirect(path); err == nil {
			_ = f.Close()
			f, j.direct[i] = d, true
		}
		j.segs[i] = f
	}
	if err := syncDir(dir); err != nil {
		return nil, errors.Join(fmt.Errorf("journal: %w", err), j.closeFiles())
	}
	j.freed <- nil // the other segment is free too: what it holds is durable
	return j, nil
}

// write appends rec (room for the header, then the payload) and returns once
// it is on disk. A write that fails before its sync is simply not there: the
// next one goes to the same place. After a failed sync (the kernel may have
// dropped the pages) or a failed Badger commit (the journal holds a batch
// Badger lacks, and later batches would be built without it), every write
// fails until the store is reopened.
func (j *journal) write(rec []byte) error {
	if j.err != nil {
		return j.err
	}
	size := roundBlock(int64(len(rec)))
	if j.off > 0 && j.off+size > j.segSize {
		if err := j.switchSegment(); err != nil {
			return err
		}
	}
	j.seq++
	binary.LittleEndian.PutUint32(rec[0:4], uint32(len(rec)-journalHeader))
	binary.LittleEndian.PutUint64(rec[8:16], j.epoch)
	binary.LittleEndian.PutUint64(rec[16:24], j.seq)
	binary.LittleEndian.PutUint32(rec[4:8], crc32.Checksum(rec[8:], crcTable))
	f := j.segs[j.cur]
	_, err := f.WriteAt(j.padded(rec, size), j.off)
	if err != nil && j.direct[j.cur] && errors.Is(err, syscall.EINVAL) {
		// O_DIRECT opened but the file system refuses its writes: write
		// through the page cache and fdatasync instead.
		if f, err = j.reopenBuffered(); err == nil {
			_, err = f.WriteAt(j.padded(rec, size), j.off)
		}
	}
	if err != nil {
		j.seq--
		if errors.Is(err, syscall.ENOSPC) {
			return fmt.Errorf("journal: %w: %w", storage.ErrDiskFull, err)
		}
		if !j.direct[j.cur] {
			j.err = fmt.Errorf("journal: %w", err) // some pages may be cached, some not
			return j.err
		}
		return fmt.Errorf("journal: %w", err)
	}
	if !j.direct[j.cur] {
		if err := fdatasync(f); err != nil {
			j.err = fmt.Errorf("journal: sync: %w", err)
			return j.err
		}
	}
	j.off += size
	return nil
}

// reopenBuffered reopens the current segment without O_DIRECT.
func (j *journal) reopenBuffered() (*os.File, error) {
	f, err := os.OpenFile(j.segs[j.cur].Name(), os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	_ = j.segs[j.cur].Close()
	j.segs[j.cur], j.direct[j.cur] = f, false
	return f, nil
}

// fail makes the journal refuse every later write.
func (j *journal) fail(err error) {
	if j.err == nil {
		j.err = fmt.Errorf("journal stopped after a failed commit: %w", err)
	}
}

// switchSegment starts writing the other segment, once the checkpoint
// begun when it was left is done, and checkpoints the one left.
func (j *journal) switchSegment() error {
	if err := <-j.freed; err != nil {
		// Keep refusing: the segment may still hold what Badger lacks.
		j.freed <- err
		return fmt.Errorf("journal: checkpoint: %w", err)
	}
	j.cur, j.off = 1-j.cur, 0
	j.switches++
	go func() { j.freed <- j.checkpoint() }()
	return nil
}

// padded returns rec followed by zeros up to size: in an aligned buffer
// when the segment is written with O_DIRECT.
func (j *journal) padded(rec []byte, size int64) []byte {
	if !j.direct[j.cur] {
		return append(rec, make([]byte, size-int64(len(rec)))...)
	}
	if int64(len(j.block)) < size {
		j.block = alignedBlock(int(size))
	}
	b := j.block[:size]
	clear(b[copy(b, rec):])
	return b
}

func roundBlock(n int64) int64 { return (n + journalBlock - 1) / journalBlock * journalBlock }

// closeClean records that Badger is closed and synced (nothing to replay),
// then closes the segments.
func (j *journal) closeClean() error {
	err := j.write(make([]byte, journalHeader))
	return errors.Join(err, j.close())
}

// close waits for the checkpoint in flight and closes the segments.
func (j *journal) close() error {
	<-j.freed
	return j.closeFiles()
}

func (j *journal) closeFiles() error {
	var errs []error
	for i, f := range j.segs {
		if f != nil {
			errs = append(errs, f.Close())
			j.segs[i] = nil
		}
	}
	return errors.Join(errs...)
}

// syncFiles fsyncs every regular file directly in dir, then dir itself: a
// checkpoint of the Badger store (its memory-mapped logs included: fsync
// writes back the pages dirtied through a shared mapping). Files Badger
// deletes meanwhile are skipped.
func syncFiles(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		err = f.Sync()
		cerr := f.Close()
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("sync %s: %w", e.Name(), err)
		}
		if cerr != nil {
			return cerr
		}
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// startJournal replays what a previous run left in dir's journal into bdb,
// makes Badger durable, and opens the journal for a new epoch, unless
// opts.NoSyncWrites (nil then).
func startJournal(dir string, bdb *bdg.DB, opts Options, log *slog.Logger) (*journal, error) {
	jdir := filepath.Join(dir, journalDir)
	epoch, lastSeg, replayed, err := replayJournal(jdir, bdb, log)
	if err != nil {
		return nil, err
	}
	syncStore := opts.syncStore
	if syncStore == nil {
		syncStore = syncFiles
	}
	if replayed > 0 || !opts.NoSyncWrites {
		if err := syncStore(dir); err != nil {
			return nil, fmt.Errorf("journal: checkpoint: %w", err)
		}
	}
	if opts.NoSyncWrites {
		if epoch > 0 {
			// Nothing to replay any more: the records are durable. The
			// directory goes at once (a rename, synced), then its files.
			old := jdir + ".old"
			if err := os.RemoveAll(old); err != nil {
				return nil, fmt.Errorf("journal: %w", err)
			}
			if err := os.Rename(jdir, old); err != nil {
				return nil, fmt.Errorf("journal: %w", err)
			}
			if err := syncDir(dir); err != nil {
				return nil, fmt.Errorf("journal: %w", err)
			}
			if err := os.RemoveAll(old); err != nil {
				return nil, fmt.Errorf("journal: %w", err)
			}
		}
		return nil, nil
	}
	size := opts.journalSegment
	if size <= 0 {
		size = defaultJournalSeg
	}
	return openJournal(jdir, epoch+1, lastSeg, size, func() error { return syncStore(dir) })
}

// closeIfAny closes j, if there is one, without marking a clean close.
func (j *journal) closeIfAny() error {
	if j == nil {
		return nil
	}
	return j.close()
}
