package poller

import (
	"testing"
	"time"
)

// BenchmarkStateWithHistory marshals and unmarshals a poll state with a
// full history, as every poll and every start-up does.
func BenchmarkStateWithHistory(b *testing.B) {
	st := persisted{URL: "https://example.org/news.html", Kind: KindSmart}
	for i := range historyMax {
		recordPoll(&st, t0.Add(time.Duration(i)*time.Hour), OutcomeUnchanged, time.Hour, i)
	}
	b.ReportAllocs()
	for b.Loop() {
		data, err := st.marshal()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := unmarshalState(data); err != nil {
			b.Fatal(err)
		}
	}
}
