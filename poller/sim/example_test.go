package sim_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dynamo-rss/dynamo/poller/sim"
)

// Replaying a recorded trace: three weeks of one feed, two of them for
// learning, polled flat every 6 hours. The last posting (20:00 on the last
// day) is still unseen at the end; its delay runs to the poll at midnight.
func ExampleSimulate() {
	log := `feed_id,time
news,2026-01-05T09:00:00Z
news,2026-01-19T07:00:00Z
news,2026-01-19T11:00:00Z
news,2026-01-25T20:00:00Z
`
	start := time.Date(2026, time.January, 5, 0, 0, 0, 0, time.UTC)
	tr, err := sim.ReadCSV(strings.NewReader(log), start, start.Add(3*sim.Week))
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := sim.Simulate(context.Background(), tr, sim.Config{}, sim.Flat(), 6*time.Hour, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d polls (budget %d), %d postings, mean delay %v, max %v\n", r.Polls, r.Budget, r.Postings, r.Mean, r.Max)
	// Output: 28 polls (budget 28), 3 postings, mean delay 3h20m0s, max 5h0m0s
}
