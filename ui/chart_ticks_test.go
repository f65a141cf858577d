package ui

import (
	"strconv"
	"testing"
	"time"
)

// TestChartAxesReadAtAGlance checks the charts' axes: the time axis ends
// at now with labels at round times, counts are whole numbers at 1-2-5
// steps, and the wait axis has several labelled ticks whatever its range.
func TestChartAxesReadAtAGlance(t *testing.T) {
	now := time.Date(2026, 11, 27, 6, 10, 27, 0, time.UTC)
	cs := newChartSeries(testHistory(60, now.Add(-3*time.Minute)), now)
	if cs.maxX != float64(now.Unix()) {
		t.Errorf("time axis ends at %v, want now %v", time.Unix(int64(cs.maxX), 0).UTC(), now)
	}
	for _, span := range []time.Duration{20 * time.Minute, 3 * time.Hour, 30 * time.Hour, 9 * 24 * time.Hour, 60 * 24 * time.Hour} {
		lo, hi := float64(now.Add(-span).Unix()), float64(now.Unix())
		ticks := timeTicks{format: "Jan 2 15:04"}.Ticks(lo, hi)
		if len(ticks) < 3 || len(ticks) > 7 {
			t.Errorf("span %v: %d time ticks", span, len(ticks))
		}
		for _, tk := range ticks {
			if tk.Value < lo || tk.Value > hi || int64(tk.Value)%60 != 0 {
				t.Errorf("span %v: tick %v is not a round minute within the axis", span, tk.Label)
			}
		}
	}
	for _, hi := range []float64{1, 3, 7, 12, 48, 230, 10000} {
		ticks := countTicks{}.Ticks(0, hi)
		if len(ticks) < 2 || len(ticks) > 6 {
			t.Errorf("0..%v: %d count ticks", hi, len(ticks))
		}
		for _, tk := range ticks {
			if n, err := strconv.Atoi(tk.Label); err != nil || float64(n) != tk.Value {
				t.Errorf("0..%v: count tick %q at %v is not a whole number", hi, tk.Label, tk.Value)
			}
		}
	}
	for _, r := range [][2]float64{{15, 240}, {30, 480}, {300, 7200}, {1, 200000}} {
		labelled := 0
		for _, tk := range (durationTicks{}).Ticks(r[0], r[1]) {
			if tk.Label != "" {
				labelled++
			}
		}
		if labelled < 3 || labelled > 8 {
			t.Errorf("wait axis %v..%v s: %d labelled ticks", r[0], r[1], labelled)
		}
	}
}
