package poller

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func mins(xs ...float64) []time.Duration {
	out := make([]time.Duration, len(xs))
	for i, x := range xs {
		out[i] = time.Duration(x * float64(time.Minute))
	}
	return out
}

// isMinimum checks that alpha's MSE is no worse than a fine grid's.
func isMinimum(t *testing.T, iv []time.Duration, alpha, mse float64) {
	t.Helper()
	for a := 0.0; a <= 1.0001; a += 0.005 {
		if m := SmoothingMSE(iv, a); m < mse*(1-1e-6)-1e-9 {
			t.Fatalf("Tune gave α=%.4f MSE=%.3f but α=%.3f has MSE=%.3f", alpha, mse, a, m)
		}
	}
}

func TestTune(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	noisy := make([]float64, 60)
	for i := range noisy {
		noisy[i] = 10 + 3*(rng.Float64()*2-1)
	}
	for _, tc := range []struct {
		name           string
		iv             []time.Duration
		alphaLo, alpha float64 // expected α range [alphaLo, alpha]
	}{
		// A constant series: every α gives zero error; ties go to the smallest.
		{"constant", mins(5, 5, 5, 5, 5, 5), 0, 0},
		// A step change: following the last value (α = 0) costs one error only.
		{"step", mins(10, 10, 10, 10, 30, 30, 30, 30, 30), 0, 0.01},
		// A noisy constant mean: heavy smoothing (α near 1) wins.
		{"noisy constant mean", mins(noisy...), 0.8, 1},
		// Alternating around a mean: smoothing halfway or more.
		{"alternating", mins(9, 11, 9, 11, 9, 11, 9, 11, 9, 11), 0.5, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alpha, mse := Tune(tc.iv)
			if alpha < tc.alphaLo || alpha > tc.alpha {
				t.Fatalf("α = %.4f, want in [%v, %v] (MSE %.3f)", alpha, tc.alphaLo, tc.alpha, mse)
			}
			isMinimum(t, tc.iv, alpha, mse)
			if tc.name == "constant" {
				for _, a := range []float64{0, 0.3, 0.7, 1} {
					if m := SmoothingMSE(tc.iv, a); m != 0 {
						t.Fatalf("constant series MSE(%v) = %v, want 0", a, m)
					}
				}
				if f := Forecast(tc.iv, alpha); f != 5*time.Minute {
					t.Fatalf("forecast %v", f)
				}
			}
		})
	}
	if a, m := Tune(mins(3)); a != 0.5 || m != 0 {
		t.Errorf("one interval: %v %v", a, m)
	}
}

func TestSmoothingMSEByHand(t *testing.T) {
	// τ1 = 10; errors at steps 2, 3 with α = 0.5: τ2 = 10 vs 20 → −10; τ3 = 15 vs 30 → −15.
	iv := mins(10, 20, 30)
	want := (100.0 + 225.0) / 2 * 3600 // squared seconds
	if got := SmoothingMSE(iv, 0.5); math.Abs(got-want) > 1e-6 {
		t.Fatalf("MSE = %v, want %v", got, want)
	}
	if got := Forecast(iv, 0.5); got != 22*time.Minute+30*time.Second {
		t.Fatalf("forecast = %v, want 22m30s", got)
	}
}

func TestSmartPolicy(t *testing.T) {
	cfg := PolicyConfig{Kind: KindSmart, Alpha: 0.5, Initial: 10 * time.Minute, Min: time.Minute, Max: time.Hour}
	p, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var st PolicyState
	if w := p.Start(&st); w != 10*time.Minute || st.Tau != 10*time.Minute {
		t.Fatalf("start: wait %v τ %v", w, st.Tau)
	}
	now := t0
	steps := []struct {
		name    string
		after   time.Duration
		changed bool
		floor   time.Duration
		tau     time.Duration
		wait    time.Duration
	}{
		{"first change: reference only", 10 * time.Minute, true, 0, 10 * time.Minute, 10 * time.Minute},
		{"change 20m later: τ=0.5·10+0.5·20, two changes in a row: wait/Shrink", 20 * time.Minute, true, 0, 15 * time.Minute, 10 * time.Minute / Shrink},
		{"unchanged: wait grows ×1.5", 150 * time.Second, false, 0, 15 * time.Minute, 225 * time.Second},
		{"unchanged with a floor", 225 * time.Second, false, 40 * time.Minute, 15 * time.Minute, 40 * time.Minute},
		{"change: τ=0.5·15+0.5·46m15s", 40 * time.Minute, true, 0, 30*time.Minute + 37*time.Second + 500*time.Millisecond, 30*time.Minute + 37*time.Second + 500*time.Millisecond},
	}
	for _, s := range steps {
		now = now.Add(s.after)
		w := p.Observe(&st, Observation{Time: now, Changed: s.changed, Floor: s.floor})
		if st.Tau != s.tau || w != s.wait {
			t.Fatalf("%s: τ %v wait %v, want τ %v wait %v", s.name, st.Tau, w, s.tau, s.wait)
		}
	}
	if len(st.Intervals) != 2 {
		t.Fatalf("intervals %v", st.Intervals)
	}
}

func TestSmartClampsAndAuto(t *testing.T) {
	p, _ := NewPolicy(PolicyConfig{Kind: KindSmart, AlphaAuto: true, Initial: 10 * time.Minute, Min: 2 * time.Minute, Max: 30 * time.Minute})
	var st PolicyState
	p.Start(&st)
	now := t0
	// Regular updates 3 minutes apart, by publication time.
	for i := range 10 {
		now = now.Add(3 * time.Minute)
		w := p.Observe(&st, Observation{Time: now.Add(10 * time.Second), Changed: true, Published: now})
		if w < 2*time.Minute || w > 30*time.Minute {
			t.Fatalf("step %d: wait %v outside [min,max]", i, w)
		}
	}
	if st.Tau != 3*time.Minute {
		t.Fatalf("τ = %v, want 3m on a regular series", st.Tau)
	}
	if len(st.Intervals) != 9 {
		t.Fatalf("intervals %d", len(st.Intervals))
	}
	// History is bounded.
	for range 2 * HistoryWindow {
		now = now.Add(time.Minute)
		p.Observe(&st, Observation{Time: now, Changed: true})
	}
	if len(st.Intervals) != HistoryWindow {
		t.Fatalf("history %d, want %d", len(st.Intervals), HistoryWindow)
	}
	if w := p.Observe(&st, Observation{Time: now.Add(time.Minute), Changed: true}); w != 2*time.Minute {
		t.Fatalf("wait %v, want clamped to min 2m", w)
	}
}

func TestFlatPolicyKeepsTau(t *testing.T) {
	p, _ := NewPolicy(PolicyConfig{Kind: KindFlat, Interval: 15 * time.Minute})
	st := PolicyState{Tau: 7 * time.Minute}
	if w := p.Start(&st); w != 15*time.Minute {
		t.Fatal(w)
	}
	if w := p.Observe(&st, Observation{Time: t0, Changed: true}); w != 15*time.Minute || st.Tau != 7*time.Minute {
		t.Fatalf("wait %v τ %v", w, st.Tau)
	}
	if w := p.Observe(&st, Observation{Time: t0.Add(15 * time.Minute), Floor: time.Hour}); w != time.Hour {
		t.Fatalf("floor ignored: %v", w)
	}
	if w := p.Observe(&st, Observation{Time: t0.Add(time.Hour), Floor: 100 * time.Hour}); w != MaxHintFloor {
		t.Fatalf("floor not capped: %v", w)
	}
}

func TestPolicyConfigValidate(t *testing.T) {
	for _, c := range []PolicyConfig{
		{Kind: "eager"},
		{Kind: KindFlat},
		{Kind: KindSmart, Alpha: 0.5, Initial: time.Minute, Min: 2 * time.Minute, Max: time.Hour},
		{Kind: KindSmart, Alpha: 1.5, Initial: time.Minute, Min: time.Minute, Max: time.Hour},
		{Kind: KindSmart, Alpha: 0.5, Initial: 2 * time.Hour, Min: time.Minute, Max: time.Hour},
	} {
		if _, err := NewPolicy(c); err == nil {
			t.Errorf("NewPolicy(%+v) accepted", c)
		}
	}
}

func TestQueue(t *testing.T) {
	var q Queue
	rng := rand.New(rand.NewPCG(3, 4))
	ref := map[string]time.Time{}
	ids := make([]string, 200)
	for i := range ids {
		ids[i] = string(rune('a'+i%26)) + string(rune('0'+i/26))
	}
	for range 5000 {
		id := ids[rng.IntN(len(ids))]
		switch rng.IntN(4) {
		case 0, 1:
			at := t0.Add(time.Duration(rng.IntN(100)) * time.Second)
			q.Push(id, at)
			ref[id] = at
		case 2:
			if q.Remove(id) != (func() bool { _, ok := ref[id]; return ok })() {
				t.Fatal("Remove disagrees")
			}
			delete(ref, id)
		case 3:
			gid, at, ok := q.Pop()
			if !ok {
				if len(ref) != 0 {
					t.Fatal("empty pop")
				}
				continue
			}
			// It must be the minimum (time, then id).
			for rid, rat := range ref {
				if rat.Before(at) || (rat.Equal(at) && rid < gid) {
					t.Fatalf("popped %s@%v but %s@%v is earlier", gid, at, rid, rat)
				}
			}
			delete(ref, gid)
		}
		if q.Len() != len(ref) {
			t.Fatalf("Len %d, want %d", q.Len(), len(ref))
		}
	}
	var got []time.Time
	for q.Len() > 0 {
		_, at, _ := q.Pop()
		got = append(got, at)
	}
	if !slices.IsSortedFunc(got, func(a, b time.Time) int { return a.Compare(b) }) {
		t.Fatal("drain not sorted")
	}
	if q.Update("nope", t0) {
		t.Fatal("Update of an absent id")
	}
}
