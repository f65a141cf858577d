package poller

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/dynamo-rss/dynamo/storage"
)

// Bounds of a resource's poll history: the newest historyMax polls, none
// older than historyAge. 200 polls cover four weeks of a page polled every
// 3.4 hours; a page polled more often keeps fewer days. The history is not
// kept in memory. With a store that keeps records (historyStore: Badger),
// each poll writes its record under a key of its own with the state, and the
// store drops the one historyMax before it: a poll reads nothing back.
// Otherwise (PostgreSQL) the history is stored with the poll state, as its
// last member: a poll reads the stored state back, appends its record on the
// encoded bytes (appendRecord) and saves the state with it, so the bound is
// also a bound on that write (about 5 KB).
const (
	historyMax = 200
	historyAge = 28 * 24 * time.Hour
)

// PollRecord is one poll as the history keeps it (for the charts people look
// at): when it ran, how it ended, what the policy made of it.
type PollRecord struct {
	Time     time.Time     // when the poll started
	Outcome  string        // one of [Outcomes]
	Wait     time.Duration // the wait chosen after the poll (until the next one)
	Tau      time.Duration // the estimate τ after the poll (smart policy); 0: none
	Versions int           // versions stored after the poll (the last known count when the poll did not save)
}

// MarshalJSON writes a record as a compact array [unix seconds, outcome,
// wait seconds, τ seconds, versions]: the history is saved with the state
// after every poll, so its size matters more than its readability.
func (r PollRecord) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal([]any{r.Time.Unix(), r.Outcome, int64(r.Wait / time.Second), int64(r.Tau / time.Second), r.Versions})
	if err != nil {
		return nil, fmt.Errorf("encode poll record: %w", err)
	}
	return b, nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *PollRecord) UnmarshalJSON(b []byte) error {
	var (
		t, wait, tau int64
		outcome      string
		versions     int
	)
	fields := []any{&t, &outcome, &wait, &tau, &versions}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("decode poll record: %w", err)
	}
	if len(raw) != len(fields) {
		return fmt.Errorf("decode poll record: %d fields, want %d", len(raw), len(fields))
	}
	for i, f := range fields {
		if err := json.Unmarshal(raw[i], f); err != nil {
			return fmt.Errorf("decode poll record field %d: %w", i, err)
		}
	}
	*r = PollRecord{
		Time:     time.Unix(t, 0).UTC(),
		Outcome:  outcome,
		Wait:     time.Duration(wait) * time.Second,
		Tau:      time.Duration(tau) * time.Second,
		Versions: versions,
	}
	return nil
}

// pollHistory is the bounded history of a resource's polls, oldest first,
// decoded: what [Engine.History] returns (a poll works on the encoded form).
type pollHistory []PollRecord

// add returns h with rec appended and the records beyond the bounds (too
// many, or older than historyAge before rec) dropped.
func (h pollHistory) add(rec PollRecord) pollHistory {
	h = append(h, rec)
	return h[max(len(h)-historyMax, 0):].recent()
}

// recent returns h without the records older than historyAge before its
// last one.
func (h pollHistory) recent() pollHistory {
	if len(h) == 0 {
		return h
	}
	oldest := h[len(h)-1].Time.Add(-historyAge)
	cut := 0
	for cut < len(h)-1 && h[cut].Time.Before(oldest) {
		cut++
	}
	return h[cut:]
}

// historyStore keeps each poll's record under a key of its own, written with
// the state (Badger's store): a poll then writes its record without reading
// the history back. It also keeps a state's progress beside it (see
// progress.go): a nil state leaves the stored one as it is.
type historyStore interface {
	SavePollStateRecords(ctx context.Context, id string, state, progress []byte, first uint64, recs [][]byte, keep uint64) error
	PollRecords(ctx context.Context, id string) ([][]byte, error)
	// PollStateProgress reads id's state and its progress (nil when none)
	// together; storage.ErrNotFound when it has no state.
	PollStateProgress(ctx context.Context, id string) (state, progress []byte, err error)
}

// recordPoll numbers rec after p's last record and returns the records to
// append, from the first one's number. The first time, the history still
// stored in the state, legacy (encoded; nil: none), goes first: its records
// move out of the state with this write.
func (p *persisted) recordPoll(legacy []byte, rec PollRecord) (first uint64, recs [][]byte) {
	if p.HistorySeq == 0 && len(legacy) > 0 {
		var h pollHistory
		if h.UnmarshalJSON(legacy) == nil {
			for _, old := range h {
				recs = append(recs, appendRecordJSON(nil, old))
			}
			if len(h) > 0 {
				p.HistoryVersions = h[len(h)-1].Versions
			}
		}
	}
	if rec.Versions <= 0 {
		rec.Versions = p.HistoryVersions
	}
	recs = append(recs, appendRecordJSON(nil, rec))
	first = p.HistorySeq + 1
	p.HistorySeq += uint64(len(recs))
	p.HistoryVersions = rec.Versions
	return first, recs
}

// histories reads and writes the poll histories of resources in the store:
// the part of the engine that knows where a history is kept. With a store
// that keeps records (a [historyStore]: Badger), each poll appends its
// record under a key of its own; otherwise the history is the last member
// of the stored poll state, which a poll reads back and extends
// ([appendRecord]). It keeps nothing in memory; its methods are safe for
// concurrent use.
type histories struct {
	states  StateStore
	records historyStore // nil: the history is kept in the stored state
	log     *slog.Logger
}

// newHistories returns the histories of the resources whose states states
// keeps; log gets what cannot be read.
func newHistories(states StateStore, log *slog.Logger) *histories {
	h := &histories{states: states, log: log}
	h.records, _ = states.(historyStore)
	return h
}

// ownRecords reports whether the store keeps each poll's record under a
// key of its own ([historyStore]).
func (h *histories) ownRecords() bool { return h.records != nil }

// save writes id's state, its progress and the records to append, numbered
// from first, keeping the newest historyMax; ownRecords only.
func (h *histories) save(ctx context.Context, id string, state, progress []byte, first uint64, recs [][]byte) error {
	return h.records.SavePollStateRecords(ctx, id, state, progress, first, recs, historyMax)
}

// read returns the recent polls of resource id, oldest first (at most the
// last 200, none older than four weeks): its records when the store keeps
// them, else the history in its stored state; nil when there is none or it
// cannot be read.
func (h *histories) read(ctx context.Context, id string) pollHistory {
	if h.records != nil {
		if recs, ok := h.recorded(ctx, id); ok {
			return recs
		}
	}
	return h.stored(ctx, id)
}

// recorded reads id's poll records (a historyStore's); false when there are
// none (a history not yet moved out of the state) or they cannot be read.
func (h *histories) recorded(ctx context.Context, id string) (pollHistory, bool) {
	recs, err := h.records.PollRecords(ctx, id)
	if err != nil {
		h.log.WarnContext(ctx, "poll history unreadable", slog.String("resource", id), slog.Any("error", err))
		return nil, false
	}
	if len(recs) == 0 {
		return nil, false
	}
	out := make(pollHistory, 0, len(recs))
	for _, b := range recs {
		var r PollRecord
		if err := r.UnmarshalJSON(b); err != nil {
			h.log.WarnContext(ctx, "poll record undecodable", slog.String("resource", id), slog.Any("error", err))
			continue
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, false
	}
	return out.recent(), true
}

// stored reads id's poll history from its stored state; nil when there is
// none or it cannot be read.
func (h *histories) stored(ctx context.Context, id string) pollHistory {
	raw, err := h.raw(ctx, id)
	if raw == nil || err != nil {
		return nil
	}
	var out pollHistory
	if err := out.UnmarshalJSON(raw); err != nil {
		h.log.WarnContext(ctx, "poll history undecodable", slog.String("resource", id), slog.Any("error", err))
		return nil
	}
	return out
}

// raw reads id's encoded poll history from its stored state, for a poll to
// extend (see appendRecord): nil when there is none (or it is undecodable:
// a poll then starts a new one); an error when the state could not be read.
func (h *histories) raw(ctx context.Context, id string) ([]byte, error) {
	b, err := h.states.PollState(ctx, id)
	switch {
	case errors.Is(err, storage.ErrNotFound), errors.Is(err, storage.ErrGone):
		return nil, nil
	case err != nil:
		h.log.WarnContext(ctx, "poll history unreadable", slog.String("resource", id), slog.Any("error", err))
		return nil, fmt.Errorf("read poll history: %w", err)
	}
	raw, err := rawHistory(b)
	if err != nil {
		h.log.WarnContext(ctx, "poll history undecodable; starting a new one", slog.String("resource", id), slog.Any("error", err))
	}
	return raw, nil
}

// MarshalJSON writes the whole history in one buffer, each record as
// MarshalJSON writes it: the history is saved with the poll state after
// every poll, so this is on every poll's path.
func (h pollHistory) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+len(h)*40)
	b = append(b, '[')
	for i, r := range h {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendRecordJSON(b, r)
	}
	return append(b, ']'), nil
}

// appendRecordJSON appends one record as the history stores it.
func appendRecordJSON(b []byte, r PollRecord) []byte {
	b = append(b, '[')
	b = strconv.AppendInt(b, r.Time.Unix(), 10)
	b = append(b, ',')
	b = strconv.AppendQuote(b, r.Outcome) // outcomes are ASCII words: Go's quoting is JSON's
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.Wait/time.Second), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.Tau/time.Second), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.Versions), 10)
	return append(b, ']')
}

// appendRecord is what a poll does to its stored history: raw is the
// history as stored ([[t,"outcome",wait,τ,versions],…]; nil for none), and
// the result is raw with rec appended and the records beyond the bounds
// dropped, exactly as [pollHistory.add] then MarshalJSON would give
// (rec.Versions ≤ 0 takes the last record's count, as recordPoll does). It
// works on the bytes, so a poll costs no decoding of 200 records; anything
// it does not recognise goes through the decoder.
func appendRecord(raw []byte, rec PollRecord) []byte {
	starts, ends, ok := recordBounds(raw)
	if !ok {
		var h pollHistory
		if h.UnmarshalJSON(raw) != nil {
			h = nil // undecodable: a new history
		}
		if rec.Versions <= 0 && len(h) > 0 {
			rec.Versions = h[len(h)-1].Versions
		}
		b, _ := h.add(rec).MarshalJSON() // never fails
		return b
	}
	n := len(starts)
	if rec.Versions <= 0 && n > 0 {
		last := raw[starts[n-1] : ends[n-1]-1]
		v := leadingInt(last[bytes.LastIndexByte(last, ',')+1:])
		rec.Versions = int(v)
	}
	cut := max(n+1-historyMax, 0)
	oldest := rec.Time.Add(-historyAge).Unix()
	for cut < n {
		if t := leadingInt(raw[starts[cut]+1:]); t >= oldest {
			break
		}
		cut++
	}
	out := make([]byte, 0, 64+len(raw))
	out = append(out, '[')
	if cut < n {
		out = append(out, raw[starts[cut]:ends[n-1]]...)
		out = append(out, ',')
	}
	out = appendRecordJSON(out, rec)
	return append(out, ']')
}

// recordBounds finds where each record of a stored history starts (its
// '[') and ends (after its ']'); ok is false unless raw is as MarshalJSON
// writes it: records of five members, the first a number, one plain word.
func recordBounds(raw []byte) (starts, ends []int, ok bool) {
	if len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']' {
		return nil, nil, false
	}
	if len(raw) == 2 {
		return nil, nil, true
	}
	starts, ends = make([]int, 0, historyMax+1), make([]int, 0, historyMax+1)
	for i := 1; i < len(raw)-1; {
		if raw[i] != '[' {
			return nil, nil, false
		}
		j := bytes.IndexByte(raw[i:], ']')
		if j < 0 {
			return nil, nil, false
		}
		if !plainRecord(raw[i+1 : i+j]) {
			return nil, nil, false
		}
		starts, ends = append(starts, i), append(ends, i+j+1)
		i += j + 1
		switch {
		case i == len(raw)-1:
		case raw[i] == ',':
			i++
		default:
			return nil, nil, false
		}
	}
	return starts, ends, true
}

// plainRecord reports whether r is a record as appendRecordJSON writes it,
// without its brackets: int,"word",int,int,int with nothing else.
func plainRecord(r []byte) bool {
	num := func() bool {
		if len(r) > 0 && r[0] == '-' {
			r = r[1:]
		}
		k := 0
		for k < len(r) && r[k] >= '0' && r[k] <= '9' {
			k++
		}
		r = r[k:]
		return k > 0 && k <= 18
	}
	comma := func() bool {
		if len(r) > 0 && r[0] == ',' {
			r = r[1:]
			return true
		}
		return false
	}
	if !num() || !comma() || len(r) == 0 || r[0] != '"' {
		return false
	}
	r = r[1:]
	k := bytes.IndexByte(r, '"')
	if k <= 0 {
		return false
	}
	for _, c := range r[:k] {
		if c <= ' ' || c > '~' || c == '\\' {
			return false
		}
	}
	r = r[k+1:]
	for range 3 {
		if !comma() || !num() {
			return false
		}
	}
	return len(r) == 0
}

// leadingInt reads the integer at the start of b: an optional minus sign
// and up to 18 digits.
func leadingInt(b []byte) int64 {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var v int64
	n := 0
	for ; n < len(b) && n < 18 && b[n] >= '0' && b[n] <= '9'; n++ {
		v = v*10 + int64(b[n]-'0')
	}
	if neg {
		v = -v
	}
	return v
}

// UnmarshalJSON reads what MarshalJSON writes with a small scanner (a
// history is read for every resource at start-up); anything else goes
// through encoding/json.
func (h *pollHistory) UnmarshalJSON(data []byte) error {
	if out, ok := scanHistory(data); ok {
		*h = out
		return nil
	}
	var recs []PollRecord
	if err := json.Unmarshal(data, &recs); err != nil {
		return err
	}
	*h = recs
	return nil
}

// scanHistory parses [[int,"word",int,int,int],…] exactly; ok is false for
// anything else.
func scanHistory(d []byte) (pollHistory, bool) {
	i := 0
	skip := func() {
		for i < len(d) && (d[i] == ' ' || d[i] == '\n' || d[i] == '\t' || d[i] == '\r') {
			i++
		}
	}
	expect := func(c byte) bool {
		skip()
		if i < len(d) && d[i] == c {
			i++
			return true
		}
		return false
	}
	num := func() (int64, bool) {
		skip()
		j := i
		if i < len(d) && d[i] == '-' {
			i++
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		v, err := strconv.ParseInt(string(d[j:i]), 10, 64)
		return v, err == nil
	}
	word := func() (string, bool) {
		if !expect('"') {
			return "", false
		}
		j := i
		for i < len(d) && d[i] != '"' {
			if d[i] == '\\' || d[i] < ' ' {
				return "", false
			}
			i++
		}
		if i == len(d) {
			return "", false
		}
		w := outcomeString(d[j:i])
		i++
		return w, true
	}
	if !expect('[') {
		return nil, false
	}
	var out pollHistory
	if expect(']') {
		skip()
		return out, i == len(d)
	}
	for {
		if !expect('[') {
			return nil, false
		}
		t, ok1 := num()
		c1 := expect(',')
		o, ok2 := word()
		c2 := expect(',')
		w, ok3 := num()
		c3 := expect(',')
		tau, ok4 := num()
		c4 := expect(',')
		v, ok5 := num()
		if !(ok1 && c1 && ok2 && c2 && ok3 && c3 && ok4 && c4 && ok5 && expect(']')) {
			return nil, false
		}
		out = append(out, PollRecord{Time: time.Unix(t, 0).UTC(), Outcome: o, Wait: time.Duration(w) * time.Second,
			Tau: time.Duration(tau) * time.Second, Versions: int(v)})
		if expect(']') {
			skip()
			return out, i == len(d)
		}
		if !expect(',') {
			return nil, false
		}
	}
}

// outcomeString returns b as a string, without allocating for the outcomes
// every history is made of.
func outcomeString(b []byte) string {
	switch string(b) {
	case OutcomeChanged:
		return OutcomeChanged
	case OutcomeUnchanged:
		return OutcomeUnchanged
	case OutcomeNotModified:
		return OutcomeNotModified
	case OutcomeNotAnnotated:
		return OutcomeNotAnnotated
	case OutcomeRobotsDenied:
		return OutcomeRobotsDenied
	case OutcomeDiskFull:
		return OutcomeDiskFull
	case OutcomeError:
		return OutcomeError
	}
	return string(b)
}
