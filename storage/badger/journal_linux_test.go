package badger

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// Only EINVAL, an O_DIRECT write the file system refuses, sends a segment
// to the page cache: another write error (here EBADF: a descriptor opened
// for reading) fails that write alone, as any failed write before its sync,
// and the segment stays direct; the next write goes to the same place.
func TestJournalOtherWriteErrorKeepsDirect(t *testing.T) {
	j := directJournal(t, "nothing to keep direct")
	rec := func(payload string) []byte { return append(make([]byte, journalHeader), payload...) }
	good := j.segs[j.cur]
	bad, err := os.OpenFile(good.Name(), os.O_RDONLY|syscall.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	j.segs[j.cur] = bad
	if err := j.write(rec("lost")); !errors.Is(err, syscall.EBADF) {
		t.Fatalf("a write failing with EBADF: %v, want that error", err)
	}
	if !j.direct[j.cur] || j.segs[j.cur] != bad || j.err != nil || j.seq != 0 || j.off != 0 {
		t.Fatalf("after the failed write: direct %v, same file %v, sticky %v, seq %d, off %d; want a direct segment, unchanged",
			j.direct[j.cur], j.segs[j.cur] == bad, j.err, j.seq, j.off)
	}
	_ = bad.Close()
	j.segs[j.cur] = good
	if err := j.write(rec("kept")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good.Name())
	if err != nil {
		t.Fatal(err)
	}
	if got := readSegment(data); len(got) != 1 || got[0].seq != 1 || string(got[0].payload) != "kept" {
		t.Errorf("segment holds %v, want record 1 \"kept\" at its start", got)
	}
}
