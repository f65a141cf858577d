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
			// Finer: the search converges to its tolerance, not to a
			// coarse grid's (an interior minimum, found to 10⁻⁴).
			for a := 0.0; a <= 1; a += 1e-4 {
				if m := SmoothingMSE(tc.iv, a); m < mse*(1-1e-7)-1e-9 {
					t.Fatalf("Tune gave α=%.5f MSE=%.6f but α=%.5f has MSE=%.6f", alpha, mse, a, m)
				}
			}
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
	// Two intervals: one error, τ2 = 10 vs 20, whatever α; Tune finds it.
	two := mins(10, 20)
	if got := SmoothingMSE(two, 0.3); math.Abs(got-100*3600) > 1e-6 {
		t.Errorf("MSE of two intervals = %v, want %v", got, 100*3600)
	}
	if _, mse := Tune(two); math.Abs(mse-100*3600) > 1e-6 {
		t.Errorf("Tune of two intervals: MSE %v, want %v", mse, 100*3600)
	}
	if got := SmoothingMSE(mins(10), 0.3); got != 0 {
		t.Errorf("MSE of one interval = %v, want 0", got)
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
		{"change 20m later: τ=0.5·10+0.5·20; changes in a row do not shrink the wait", 20 * time.Minute, true, 0, 15 * time.Minute, 15 * time.Minute},
		{"unchanged: wait grows ×Growth", 15 * time.Minute, false, 0, 15 * time.Minute, time.Duration(float64(15*time.Minute) * Growth)},
		{"unchanged with a floor", time.Duration(float64(15*time.Minute) * Growth), false, 2 * time.Hour, 15 * time.Minute, 2 * time.Hour},
		{"change: t = time since the last change", 2 * time.Hour, true, 0, 0, 0},
	}
	last := now
	for _, s := range steps {
		now = now.Add(s.after)
		tauBefore := st.Tau
		w := p.Observe(&st, Observation{Time: now, Changed: s.changed, Floor: s.floor})
		if s.tau == 0 { // τ = 0.5·τ + 0.5·(time since the last change), clamped wait
			s.tau = tauBefore/2 + now.Sub(last)/2
			s.wait = min(s.tau, time.Hour)
		}
		if st.Tau != s.tau || w != s.wait {
			t.Fatalf("%s: τ %v wait %v, want τ %v wait %v", s.name, st.Tau, w, s.tau, s.wait)
		}
		if s.changed {
			last = now
		}
	}
	if len(st.Intervals) != 2 {
		t.Fatalf("intervals %v", st.Intervals)
	}
}

// TestSmartObservationRules checks which t_n a changed poll gives smart: the
// mean gap of the new item dates, else span/NewItems, else the detection
// interval; and the wait that follows.
func TestSmartObservationRules(t *testing.T) {
	m := time.Minute
	cfg := PolicyConfig{Kind: KindSmart, Alpha: 0.5, Initial: 10 * m, Min: m, Max: 6 * time.Hour}
	p, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	tests := []struct {
		name      string
		prev      Observation // a first changed poll: sets the reference
		obs       Observation
		tau       time.Duration
		intervals []time.Duration
		wait      time.Duration
	}{
		{
			name: "dates: 3 new items 4, 6 and 2 minutes apart: one t = 12m/3",
			prev: Observation{Time: at(m), Changed: true, Dates: []time.Time{at(0)}},
			obs:  Observation{Time: at(30 * m), Changed: true, NewItems: 3, Dates: []time.Time{at(4 * m), at(10 * m), at(12 * m)}},
			tau:  7 * m, intervals: []time.Duration{4 * m}, wait: 7 * m,
		},
		{
			name: "dates: old, repeated and future dates are ignored",
			prev: Observation{Time: at(m), Changed: true, Dates: []time.Time{at(0)}},
			obs:  Observation{Time: at(30 * m), Changed: true, Dates: []time.Time{at(-5 * m), at(0), at(20 * m), at(40 * m)}},
			tau:  15 * m, intervals: []time.Duration{20 * m}, wait: 15 * m,
		},
		{
			name: "dates: a first page gives the mean gap of its own dates",
			obs:  Observation{Time: at(30 * m), Changed: true, Dates: []time.Time{at(0), at(20 * m), at(24 * m)}},
			tau:  11 * m, intervals: []time.Duration{12 * m}, wait: 11 * m,
		},
		{
			name: "ids: 4 new items over 60 minutes: one t = 15m",
			prev: Observation{Time: at(0), Changed: true},
			obs:  Observation{Time: at(60 * m), Changed: true, NewItems: 4},
			tau:  12*m + 30*time.Second, intervals: []time.Duration{15 * m}, wait: 12*m + 30*time.Second,
		},
		{
			name: "channel-only change: the detection interval",
			prev: Observation{Time: at(0), Changed: true},
			obs:  Observation{Time: at(30 * m), Changed: true},
			tau:  20 * m, intervals: []time.Duration{30 * m}, wait: 20 * m,
		},
		{
			name: "channel date without item dates: its interval over the new items",
			prev: Observation{Time: at(m), Changed: true, Published: at(0)},
			obs:  Observation{Time: at(60 * m), Changed: true, Published: at(40 * m), NewItems: 2},
			tau:  15 * m, intervals: []time.Duration{20 * m}, wait: 15 * m,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st PolicyState
			p.Start(&st)
			if !tt.prev.Time.IsZero() {
				p.Observe(&st, tt.prev)
				if st.Tau != 10*m || len(st.Intervals) != 0 {
					t.Fatalf("setup: τ %v intervals %v", st.Tau, st.Intervals)
				}
			}
			w := p.Observe(&st, tt.obs)
			if st.Tau != tt.tau || w != tt.wait || !slices.Equal(st.Intervals, tt.intervals) {
				t.Fatalf("τ %v wait %v intervals %v, want τ %v wait %v intervals %v", st.Tau, w, st.Intervals, tt.tau, tt.wait, tt.intervals)
			}
		})
	}
}

// TestFlatRecordsLikeSmart: flat learns the same intervals (for a later
// switch to smart) without touching τ.
func TestFlatRecordsLikeSmart(t *testing.T) {
	f, _ := NewPolicy(PolicyConfig{Kind: KindFlat, Interval: time.Hour})
	var st PolicyState
	f.Start(&st)
	f.Observe(&st, Observation{Time: t0, Changed: true, Dates: []time.Time{t0.Add(-time.Hour)}})
	f.Observe(&st, Observation{Time: t0.Add(time.Hour), Changed: true, Dates: []time.Time{t0.Add(-50 * time.Minute), t0.Add(-20 * time.Minute)}})
	if want := mins(20); !slices.Equal(st.Intervals, want) || st.Tau != 0 {
		t.Fatalf("intervals %v τ %v, want %v and τ untouched", st.Intervals, st.Tau, want)
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
		// The heap's invariant after every operation: no node before its
		// parent, and every slot knows where its node is.
		for i, n := range q.heap {
			if i > 0 && q.less(n, q.heap[(i-1)/queueArity]) {
				t.Fatalf("node %d (%s) before its parent", i, q.slots[n.slot].id)
			}
			if int(q.slots[n.slot].pos) != i {
				t.Fatalf("node %d's slot says it is at %d", i, q.slots[n.slot].pos)
			}
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

// TestSmartEdges: the smart policy at the edges of its state: α: auto tunes
// from the third interval on (not the fourth); a remembered α of exactly 0
// or 1 before that (1 is kept, 0 is "none yet"); a state with no wait yet
// starts from τ, not from min.
func TestSmartEdges(t *testing.T) {
	cfg := PolicyConfig{Kind: KindSmart, AlphaAuto: true, Initial: 10 * time.Minute, Min: 2 * time.Minute, Max: 30 * time.Minute}
	p, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("tuned at three intervals", func(t *testing.T) {
		var st PolicyState
		p.Start(&st)
		now := t0
		for i, gap := range []time.Duration{0, 3 * time.Minute, 20 * time.Minute, 4 * time.Minute} {
			now = now.Add(gap)
			p.Observe(&st, Observation{Time: now, Changed: true, Published: now})
			if n := len(st.Intervals); n != i {
				t.Fatalf("after %d updates: %d intervals, want %d", i+1, n, i)
			}
			if i < 3 && st.Alpha != 0.5 {
				t.Fatalf("%d intervals: α %v, want 0.5 until three", i, st.Alpha)
			}
		}
		a, _ := Tune(st.Intervals)
		if a == 0.5 {
			t.Fatalf("Tune gives 0.5 on %v: the test needs intervals that tune elsewhere", st.Intervals)
		}
		if st.Alpha != a {
			t.Errorf("three intervals %v: α %v, want the tuned %v", st.Intervals, st.Alpha, a)
		}
	})
	for _, tc := range []struct {
		remembered, want float64
	}{{1, 1}, {0.25, 0.25}, {0, 0.5}, {1.5, 0.5}, {-0.25, 0.5}} {
		st := PolicyState{Kind: KindSmart, Alpha: tc.remembered, Tau: 10 * time.Minute, Wait: 10 * time.Minute}
		p.Start(&st)
		if st.Alpha != tc.want {
			t.Errorf("remembered α %v, no intervals: α %v, want %v", tc.remembered, st.Alpha, tc.want)
		}
	}
	t.Run("no wait yet", func(t *testing.T) {
		st := PolicyState{Kind: KindSmart, Tau: 20 * time.Minute}
		if w := p.Start(&st); w != 20*time.Minute {
			t.Errorf("Start with τ 20m and no wait: %v, want 20m", w)
		}
		st = PolicyState{Kind: KindSmart, Tau: 10 * time.Minute}
		if w := p.Observe(&st, Observation{Time: t0}); w != 15*time.Minute {
			t.Errorf("unchanged with τ 10m and no wait: %v, want 15m (τ × Growth)", w)
		}
	})
}

// TestUnchangedCounts: both policies count the polls without change since
// the last change (persisted as "unchanged"), and a change resets it.
func TestUnchangedCounts(t *testing.T) {
	for _, c := range []PolicyConfig{
		{Kind: KindFlat, Interval: time.Hour},
		{Kind: KindSmart, Alpha: 0.5, Initial: 10 * time.Minute, Min: time.Minute, Max: time.Hour},
	} {
		p, err := NewPolicy(c)
		if err != nil {
			t.Fatal(err)
		}
		var st PolicyState
		p.Start(&st)
		now := t0
		for i, changed := range []bool{false, false, false, true, false} {
			now = now.Add(time.Hour)
			p.Observe(&st, Observation{Time: now, Changed: changed})
			if want := []int{1, 2, 3, 0, 1}[i]; st.Unchanged != want {
				t.Fatalf("%s, poll %d: unchanged %d, want %d", c.Kind, i+1, st.Unchanged, want)
			}
		}
	}
}

// TestSmartObserveBeforeStart: a smart state observed before any Start (τ
// 0, no wait) starts from the initial interval, not from min.
func TestSmartObserveBeforeStart(t *testing.T) {
	p, err := NewPolicy(PolicyConfig{Kind: KindSmart, Alpha: 0.5, Initial: 10 * time.Minute, Min: 2 * time.Minute, Max: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var st PolicyState
	got := p.Observe(&st, Observation{Time: t0})
	if want := time.Duration(float64(10*time.Minute) * Growth); got != want || st.Tau != 10*time.Minute {
		t.Errorf("unchanged poll of a fresh state: wait %v, τ %v; want %v from τ = initial 10m", got, st.Tau, want)
	}
}
