package poller

import (
	"testing"
	"time"
)

// BenchmarkStateWithHistory is what every poll does with a stored state
// whose history is full: take the encoded history from it, append the poll
// (dropping the oldest) and encode the state again.
func BenchmarkStateWithHistory(b *testing.B) {
	st, stored := fullHistoryState(b)
	st.History = nil
	rec := PollRecord{Time: t0.Add(historyMax * time.Hour), Outcome: OutcomeUnchanged, Wait: time.Hour}
	b.ReportAllocs()
	for b.Loop() {
		raw, err := rawHistory(stored)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.marshalWith(appendRecord(raw, rec)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStateStart decodes a stored state with a full history, as the
// start-up does for every resource (the history is left in the store).
func BenchmarkStateStart(b *testing.B) {
	_, stored := fullHistoryState(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := unmarshalState(stored); err != nil {
			b.Fatal(err)
		}
	}
}

// fullHistoryState is a state with a full history, and its encoding.
func fullHistoryState(b *testing.B) (persisted, []byte) {
	st := persisted{URL: "https://example.org/news.html", Kind: KindSmart}
	for i := range historyMax {
		recordPoll(&st, t0.Add(time.Duration(i)*time.Hour), OutcomeUnchanged, time.Hour, i)
	}
	stored, err := st.marshal()
	if err != nil {
		b.Fatal(err)
	}
	return st, stored
}
