package poller

import (
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
// 3.4 hours; a page polled more often keeps fewer days. The history is saved
// with the poll state after every poll, so its bound is also a bound on that
// write (about 5 KB).
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

// pollHistory is the bounded history of a resource's polls, oldest first.
// It is appended to in place under the engine's lock (History hands out
// copies), so a poll costs no copy of the history: dropped records are
// sliced off the front, and the next growth of the array copies only the
// kept ones, which bounds the array at about twice historyMax.
type pollHistory []PollRecord

// add returns h with rec appended and the records beyond the bounds (too
// many, or older than historyAge before rec) dropped.
func (h pollHistory) add(rec PollRecord) pollHistory {
	h = append(h, rec)
	cut := max(len(h)-historyMax, 0)
	oldest := rec.Time.Add(-historyAge)
	for cut < len(h)-1 && h[cut].Time.Before(oldest) {
		cut++
	}
	return h[cut:]
}

// recordPoll appends the poll that just ended to st's history: started at
// start, ending in outcome, followed by wait; versions is the number of
// versions stored after it (0 when the poll did not save, so did not learn
// it: then the previous record's count carries over).
func recordPoll(st *persisted, start time.Time, outcome string, wait time.Duration, versions int) {
	if versions <= 0 && len(st.History) > 0 {
		versions = st.History[len(st.History)-1].Versions
	}
	st.History = st.History.add(PollRecord{
		Time:     start.UTC().Truncate(time.Second),
		Outcome:  outcome,
		Wait:     wait,
		Tau:      st.Policy.Tau,
		Versions: versions,
	})
}

// History returns the recent polls of resource id, oldest first (at most
// the last 200, none older than four weeks), and false for an unknown id.
// The history is read from the stored poll state: the engine does not keep
// it in memory.
func (e *Engine) History(ctx context.Context, id string) ([]PollRecord, bool) {
	e.mu.Lock()
	known := e.resources[id] != nil
	e.mu.Unlock()
	if !known {
		return nil, false
	}
	return e.storedHistory(ctx, id), true
}

// storedHistory reads id's poll history from its stored state; nil when
// there is none or it cannot be read (a poll then starts a new one).
func (e *Engine) storedHistory(ctx context.Context, id string) pollHistory {
	b, err := e.store.PollState(ctx, id)
	if err != nil {
		if !errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrGone) {
			e.log.WarnContext(ctx, "poll history unreadable", slog.String("resource", id), slog.Any("error", err))
		}
		return nil
	}
	h, err := historyOf(b)
	if err != nil {
		e.log.WarnContext(ctx, "poll history undecodable; starting a new one", slog.String("resource", id), slog.Any("error", err))
	}
	return h
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
		b = append(b, ']')
	}
	return append(b, ']'), nil
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
