package sim

import (
	"context"
	"testing"
	"time"
)

// BenchmarkSimulate measures one simulation of 200 feeds over 13 weeks per
// contender at Ī = 8 h; postings/s counts the trace's postings.
func BenchmarkSimulate(b *testing.B) {
	tr, _ := Generate(GenConfig{Feeds: 200, Seed: 1})
	for _, c := range Standard() {
		b.Run(c.Name, func(b *testing.B) {
			b.ReportAllocs()
			var polls int
			for b.Loop() {
				r, err := simulate(context.Background(), tr, Config{}.withDefaults(), c, 8*time.Hour, 2, runOpts{watch: -1})
				if err != nil {
					b.Fatal(err)
				}
				polls = r.Polls
			}
			b.ReportMetric(float64(tr.Count())*float64(b.N)/b.Elapsed().Seconds(), "postings/s")
			b.ReportMetric(float64(polls), "polls")
		})
	}
}
