package poller

import (
	"encoding/binary"
	"errors"
	"time"
)

// A poll state is stored in two parts when the store keeps poll records (a
// historyStore, Badger): the progress, the few fields every poll changes
// (when it ran, what it found, the counters, when the next one is due),
// and the rest, which most polls leave as it was (the last version's item
// ids, validators, the policy's estimates, diagnostics). A poll writes the
// rest only when its encoding differs from what was last written, so a
// poll that finds nothing new writes ≈ 50 bytes of progress and its record
// rather than the whole state (≈ 750 bytes): what it costs the store grows
// with the bytes written (its log, memtable flushes, compactions).
//
// The progress is binary, unlike the state: a version byte, then the
// fields in a fixed order as varints and length-prefixed strings.

// progressVersion is the first byte of an encoded progress.
const progressVersion = 1

// withoutProgress returns a copy of p whose progress fields are zero: what
// is stored as the state beside a progress.
func (p *persisted) withoutProgress() persisted {
	q := *p
	q.LastPoll, q.NextPoll = time.Time{}, time.Time{}
	q.LastOutcome, q.LastError = "", ""
	q.Polls, q.Changes, q.Errors, q.Failures = 0, 0, 0, 0
	q.BodyHash = 0
	q.Policy.Wait, q.Policy.Unchanged = 0, 0
	q.HistorySeq, q.HistoryVersions = 0, 0
	return q
}

// appendProgress appends p's progress fields, encoded, to b.
func appendProgress(b []byte, p *persisted) []byte {
	b = append(b, progressVersion)
	b = appendProgressTime(b, p.LastPoll)
	b = appendProgressTime(b, p.NextPoll)
	b = appendProgressString(b, p.LastOutcome)
	b = appendProgressString(b, p.LastError)
	b = binary.AppendVarint(b, p.Polls)
	b = binary.AppendVarint(b, p.Changes)
	b = binary.AppendVarint(b, p.Errors)
	b = binary.AppendVarint(b, int64(p.Failures))
	b = binary.AppendUvarint(b, p.BodyHash)
	b = binary.AppendVarint(b, int64(p.Policy.Wait))
	b = binary.AppendVarint(b, int64(p.Policy.Unchanged))
	b = binary.AppendUvarint(b, p.HistorySeq)
	return binary.AppendVarint(b, int64(p.HistoryVersions))
}

func appendProgressTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

func appendProgressString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// errProgress is the error of an undecodable progress.
var errProgress = errors.New("decode poll-state progress: malformed")

// applyProgress sets p's progress fields from the encoded progress b; on
// an error p is left as it was.
func (p *persisted) applyProgress(b []byte) error {
	if len(b) == 0 || b[0] != progressVersion {
		return errProgress
	}
	d := progressDecoder{b: b[1:]}
	q := *p
	q.LastPoll = d.time()
	q.NextPoll = d.time()
	q.LastOutcome = outcomeString(d.bytes())
	q.LastError = string(d.bytes())
	q.Polls = d.varint()
	q.Changes = d.varint()
	q.Errors = d.varint()
	q.Failures = int(d.varint())
	q.BodyHash = d.uvarint()
	q.Policy.Wait = time.Duration(d.varint())
	q.Policy.Unchanged = int(d.varint())
	q.HistorySeq = d.uvarint()
	q.HistoryVersions = int(d.varint())
	if d.bad || len(d.b) != 0 {
		return errProgress
	}
	*p = q
	return nil
}

// progressDecoder reads an encoded progress; bad is set by the first read
// past its end or of a malformed number, after which reads return zeros.
type progressDecoder struct {
	b   []byte
	bad bool
}

func (d *progressDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *progressDecoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *progressDecoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad, d.b = true, nil
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

func (d *progressDecoder) time() time.Time {
	if len(d.b) == 0 {
		d.bad = true
		return time.Time{}
	}
	set := d.b[0]
	d.b = d.b[1:]
	switch set {
	case 0:
		return time.Time{}
	case 1:
		sec := d.varint()
		nsec := d.uvarint()
		if nsec >= 1e9 {
			d.bad = true
		}
		return time.Unix(sec, int64(nsec)).UTC()
	}
	d.bad = true
	return time.Time{}
}
