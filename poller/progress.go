package poller

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/cespare/xxhash/v2"
)

// A poll state is stored in two parts when the store keeps poll records (a
// historyStore, Badger): the progress, the few fields every poll may change
// (when it ran, what it found, the counters, the validators, when the next
// one is due), and the rest, which most polls leave as it was (the last
// version's item ids, the policy's estimates, diagnostics). A poll writes
// the rest only when it differs from what was last stored, so a poll that
// finds nothing new writes ≈ 50–110 bytes of progress and its record rather
// than the whole state (≈ 750 bytes): what it costs the store grows with
// the bytes written (its log, memtable flushes, compactions).
//
// The budget policy's posting-rate state changes at every poll (its bins
// decay, its exposure grows), but only the polls that add postings change
// what it has learned: from an older stored snapshot, the next observation
// after a restart decays the bins and adds the exposure since the
// snapshot's time, the same up to the rounding of hour segments. So the
// rest is compared without it, and stored with it when the poll added
// postings (see [persisted.restToStore]).
//
// The progress is binary, unlike the state: a version byte, then the
// fields in a fixed order as varints and length-prefixed strings. The rest
// carries "progress": true; a state without it is whole, and a progress
// stored beside it is ignored (left by this version before a downgrade).

// progressVersion is the first byte of an encoded progress.
const progressVersion = 1

// withoutProgress returns a copy of p whose progress fields are zero and
// Progress is set: what is stored as the state beside a progress.
func (p *persisted) withoutProgress() persisted {
	q := *p
	q.LastPoll, q.NextPoll = time.Time{}, time.Time{}
	q.LastOutcome, q.LastError = "", ""
	q.Polls, q.Changes, q.Errors, q.Failures = 0, 0, 0, 0
	q.BodyHash = 0
	q.Validators = validators{}
	q.Policy.Wait, q.Policy.Unchanged = 0, 0
	q.HistorySeq, q.HistoryVersions = 0, 0
	q.Progress, q.restHash = true, 0
	return q
}

// restToStore encodes p's rest and returns it, or nil when it need not be
// stored: it is what was stored last (p.restHash), the posting-rate state
// aside unless postings grew it. hash is what p.restHash becomes once the
// returned rest (if any) is stored.
func (p *persisted) restToStore(postings bool) (rest []byte, hash uint64, err error) {
	q := p.withoutProgress()
	rate := q.Policy.Rate
	q.Policy.Rate = nil
	if rest, err = q.marshal(); err != nil {
		return nil, 0, err
	}
	hash = restHash(rest)
	switch {
	case hash == p.restHash && (rate == nil || !postings):
		return nil, hash, nil
	case rate != nil:
		q.Policy.Rate = rate
		rest, err = q.marshal()
	}
	return rest, hash, err
}

// restHash hashes an encoded rest without its posting-rate state; never 0.
func restHash(rest []byte) uint64 { return xxhash.Sum64(rest) | 1 }

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
	b = appendProgressString(b, p.Validators.ETag)
	b = appendProgressString(b, p.Validators.LastModified)
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
	q.Validators.ETag = string(d.bytes())
	q.Validators.LastModified = string(d.bytes())
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

// loadSplit completes p, decoded from a stored state, with the progress
// stored beside it (nil: none) when p's rest says it has one, and notes the
// rest's hash when stored is exactly what p's rest encodes to.
func (p *persisted) loadSplit(stored, progress []byte) error {
	if !p.Progress {
		return nil // a whole state
	}
	p.Progress = false
	if p.Policy.Rate == nil {
		p.restHash = restHash(stored)
	}
	if progress == nil {
		return nil
	}
	return p.applyProgress(progress)
}

// progressDecoder reads an encoded progress; bad is set by the first read
// past its end or of a malformed number, after which reads return zeros.
type progressDecoder struct {
	b   []byte
	bad bool
}

func (d *progressDecoder) uvarint() uint64 { return readNumber(d, binary.Uvarint) }
func (d *progressDecoder) varint() int64   { return readNumber(d, binary.Varint) }

// readNumber reads a varint with read (binary.Uvarint or binary.Varint).
func readNumber[T int64 | uint64](d *progressDecoder, read func([]byte) (T, int)) T {
	v, n := read(d.b)
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
