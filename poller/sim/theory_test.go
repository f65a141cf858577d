package sim

import (
	"context"
	"math"
	"testing"
	"time"
)

// fixedPolicy polls a page at a constant wait.
type fixedPolicy time.Duration

func (f fixedPolicy) Start() time.Duration        { return time.Duration(f) }
func (f fixedPolicy) Observe(Fetch) time.Duration { return time.Duration(f) }
func (f fixedPolicy) Estimate() time.Duration     { return 0 }

// oracle polls page i at a constant wait of (1/λ_i)^power hours, from the
// generator's true rates.
func oracle(name string, models []FeedModel, span time.Duration, power float64) Contender {
	return Contender{Name: name, Scaled: true, New: func(time.Duration) (func(int) PagePolicy, error) {
		return func(i int) PagePolicy {
			rate := max(models[i].Count, 0.5) / span.Hours()
			return fixedPolicy(math.Pow(1/rate, power) * float64(time.Hour))
		}, nil
	}}
}

// TestTheory checks the simulator against closed forms on homogeneous
// Poisson postings: flat's mean delay is Ī/2; allocation ∝ λ (rate
// proportional) equals flat; allocation ∝ √λ gives (Σ√λ)² / (n Σλ) of flat
// (Sia & Cho, Theorem 1).
func TestTheory(t *testing.T) {
	all, allModels := Generate(GenConfig{Feeds: 400, Seed: 5, Homogeneous: true})
	// Keep feeds with at least 50 postings, so that every wait stays well
	// below the 11 measured weeks and the steady-state formulas apply.
	tr := &Trace{Start: all.Start, End: all.End}
	var models []FeedModel
	for i, m := range allModels {
		if m.Count >= 50 {
			tr.IDs = append(tr.IDs, all.IDs[i])
			tr.Postings = append(tr.Postings, all.Postings[i])
			models = append(models, m)
		}
	}
	span := tr.End.Sub(tr.Start)
	var sumRate, sumSqrt float64
	for _, m := range models {
		sumRate += m.Count
		sumSqrt += math.Sqrt(m.Count)
	}
	wantSqrt := sumSqrt * sumSqrt / (float64(len(models)) * sumRate)
	rep, err := Benchmark(context.Background(), tr, Options{
		Intervals: []time.Duration{12 * time.Hour, 24 * time.Hour},
		Contenders: []Contender{
			Flat(),
			oracle("proportional", models, span, 1),
			oracle("sqrt", models, span, 0.5),
		},
		Watch: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range rep.Budgets {
		flat, prop, sq := b.Rows[0], b.Rows[1], b.Rows[2]
		if r := flat.Mean.Hours() / (b.Interval.Hours() / 2); math.Abs(r-1) > 0.02 {
			t.Errorf("Ī=%v: flat mean %v, want Ī/2 (ratio %.3f)", b.Interval, flat.Mean, r)
		}
		if math.Abs(prop.Ratio-1) > 0.03 {
			t.Errorf("Ī=%v: rate-proportional ratio %.3f, want 1", b.Interval, prop.Ratio)
		}
		if math.Abs(sq.Ratio-wantSqrt) > 0.03 {
			t.Errorf("Ī=%v: √rate ratio %.3f, want %.3f", b.Interval, sq.Ratio, wantSqrt)
		}
		t.Logf("Ī=%v: flat %v, proportional %.3f, √rate %.3f (theory %.3f)", b.Interval, flat.Mean, prop.Ratio, sq.Ratio, wantSqrt)
	}
}
