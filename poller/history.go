package poller

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
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
func (e *Engine) History(id string) ([]PollRecord, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.resources[id]
	if r == nil {
		return nil, false
	}
	return slices.Clone(r.st.History), true
}
