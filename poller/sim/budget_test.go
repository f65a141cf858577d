package sim

import (
	"context"
	"math"
	"testing"
	"time"
)

// TestBudgetAgainstFlat: at equal budgets (Ī = 6, 12 and 24 h, pages with
// and without dates), the budget policy spends its budget, never lets a
// posting wait longer than its max_interval (no page goes unpolled longer),
// and beats flat clearly on delay and on polls that find nothing: it was the
// experiment that chose max_interval (BudgetMaxInterval), kept as the
// properties it showed (budget's mean delay 0.48–0.67 of flat's, empty
// polls 0.41–0.52 of flat's share, on this trace).
func TestBudgetAgainstFlat(t *testing.T) {
	feeds := 100
	if raceEnabled {
		feeds = 30
	}
	tr, _ := Generate(GenConfig{Feeds: feeds, Seed: 1})
	for _, dates := range []bool{false, true} {
		cfg := Config{Page: PageConfig{Dates: dates}}
		for _, iv := range []time.Duration{6 * time.Hour, 12 * time.Hour, 24 * time.Hour} {
			fl, err := Simulate(context.Background(), tr, cfg, Flat(), iv, 1)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Simulate(context.Background(), tr, cfg, BudgetPolicy(), iv, 1)
			if err != nil {
				t.Fatal(err)
			}
			if dev := math.Abs(float64(b.Polls)/float64(b.Budget) - 1); dev > 0.005 {
				t.Errorf("dates %v, Ī %v: %d polls for a budget of %d", dates, iv, b.Polls, b.Budget)
			}
			if limit := BudgetMaxInterval(iv); b.Max > limit {
				t.Errorf("dates %v, Ī %v: a posting waited %v, over max_interval %v", dates, iv, b.Max, limit)
			}
			if ratio := float64(b.Mean) / float64(fl.Mean); ratio > 0.75 {
				t.Errorf("dates %v, Ī %v: budget's mean delay %v is %.2f of flat's %v, want at most 0.75", dates, iv, b.Mean, ratio, fl.Mean)
			}
			if ratio := float64(b.Empty) / float64(b.Polls) / (float64(fl.Empty) / float64(fl.Polls)); ratio > 0.7 {
				t.Errorf("dates %v, Ī %v: budget's share of empty polls is %.2f of flat's, want at most 0.7", dates, iv, ratio)
			}
		}
	}
}
