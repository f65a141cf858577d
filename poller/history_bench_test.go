package poller

import (
	"testing"
	"time"
)

// BenchmarkStateWithHistory is what every poll does with a stored state
// whose history is full: read the history back from it, append the poll,
// encode the state again.
func BenchmarkStateWithHistory(b *testing.B) {
	st, stored := fullHistoryState(b)
	st.History = nil
	b.ReportAllocs()
	for b.Loop() {
		h, err := historyOf(stored)
		if err != nil || len(h) != historyMax {
			b.Fatal(len(h), err)
		}
		st.History = h
		recordPoll(&st, t0.Add(historyMax*time.Hour), OutcomeUnchanged, time.Hour, 0)
		if _, err := st.marshal(); err != nil {
			b.Fatal(err)
		}
		st.History = nil
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
