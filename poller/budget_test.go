package poller

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dynamo-rss/dynamo/config"
)

// monday is a Monday 00:00 UTC: hour of the week 0.
var monday = time.Date(2026, time.November, 16, 0, 0, 0, 0, time.UTC)

func TestHourOfWeek(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		want float64
	}{
		{monday, 0},
		{monday.Add(90 * time.Minute), 1.5},
		{monday.Add(6*24*time.Hour + 23*time.Hour), 167},
		{monday.Add(7 * 24 * time.Hour), 0},
		{monday.Add(-time.Hour), 167},
		{monday.Add(time.Hour + 900*time.Millisecond), 1 + 0.9/3600}, // a poll's instant has nanoseconds
	} {
		if got := hourOfWeek(tc.t); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("hourOfWeek(%v) = %v, want %v", tc.t, got, tc.want)
		}
	}
}

func TestBudgetAllocationSqrt(t *testing.T) {
	b := NewBudget(BudgetSettings{Total: 70, MaxInterval: 1000 * time.Hour}, nil)
	// λ = 1, 4, 16 a day: shares ∝ √λ = 1 : 2 : 4, summing to the budget.
	for id, lambda := range map[string]float64{"a": 1, "b": 4, "c": 16} {
		b.update(id, math.Sqrt(lambda), true)
	}
	share := func(id string) float64 { s, _ := b.Share(id); return s }
	for _, tc := range []struct {
		id   string
		want float64
	}{{"a", 10}, {"b", 20}, {"c", 40}} {
		if got := share(tc.id); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: %v polls a day, want %v", tc.id, got, tc.want)
		}
	}
	// Moving one estimate moves everyone's share, without a recomputation.
	b.update("c", math.Sqrt(49), true) // √λ = 7: 1 + 2 + 7 = 10
	if got := share("a"); math.Abs(got-7) > 1e-9 {
		t.Errorf("after c moved: a = %v, want 7", got)
	}
	// A newcomer without evidence gets the mean share (10/3), then leaves.
	b.update("d", 0, false)
	if got, want := share("d"), 70*(10.0/3)/(10+10.0/3); math.Abs(got-want) > 1e-9 {
		t.Errorf("newcomer: %v, want %v", got, want)
	}
	b.Leave("d")
	if got := share("a"); math.Abs(got-7) > 1e-9 {
		t.Errorf("after d left: a = %v, want 7", got)
	}
	if b.Len() != 3 {
		t.Errorf("%d members, want 3", b.Len())
	}
}

func TestBudgetMaxIntervalRate(t *testing.T) {
	// max_interval 48 h: nobody below 0.5 polls a day; the rest share what is left.
	b := NewBudget(BudgetSettings{Total: 10.5, MaxInterval: 48 * time.Hour}, nil)
	b.update("quiet", 0.01, true)
	b.update("x", 1, true)
	b.update("y", 3, true)
	b.rebuild()
	for _, tc := range []struct {
		id   string
		want float64
	}{{"quiet", 0.5}, {"x", 2.5}, {"y", 7.5}} {
		if got, _ := b.Share(tc.id); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: %v polls a day, want %v", tc.id, got, tc.want)
		}
	}
	// PerResource: the budget follows the members.
	b.Configure(BudgetSettings{PerResource: 4, MaxInterval: 48 * time.Hour})
	total := 0.0
	for _, id := range []string{"quiet", "x", "y"} {
		s, _ := b.Share(id)
		total += s
	}
	if math.Abs(total-12) > 1e-9 {
		t.Errorf("PerResource 4 × 3 members: %v polls a day, want 12", total)
	}
}

// learned returns a rate state that saw perDay dated postings a day, all at
// 13:00 UTC, for two weeks before now.
func learned(perDay int, now time.Time) *RateState {
	r := &RateState{}
	var dates []time.Time
	for d := 14; d >= 1; d-- {
		day := now.Add(-time.Duration(d) * 24 * time.Hour).Truncate(24 * time.Hour)
		for k := range perDay {
			dates = append(dates, day.Add(13*time.Hour+time.Duration(k)*time.Minute))
		}
	}
	r.Observe(now, dates, 0)
	return r
}

func TestBudgetPolicyWeightAndBounds(t *testing.T) {
	now := monday.Add(7 * 24 * time.Hour)
	b := NewBudget(BudgetSettings{Total: 30, MaxInterval: 48 * time.Hour}, nil)
	pa, err := b.Policy("a", PolicyConfig{Kind: KindBudget, Weight: 4})
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := b.Policy("b", PolicyConfig{Kind: KindBudget, Weight: 1})
	sa := PolicyState{Rate: learned(2, now)}
	sb := PolicyState{Rate: learned(8, now)}
	pa.Start(&sa)
	pb.Start(&sb)
	// weight 4 × λ 2 = weight 1 × λ 8: equal shares.
	ra, _ := b.Share("a")
	rb, _ := b.Share("b")
	if math.Abs(ra-rb) > 0.02*rb || math.Abs(ra+rb-30) > 1e-6 {
		t.Errorf("shares %v and %v, want equal, summing to 30", ra, rb)
	}
	if _, err := b.Policy("c", PolicyConfig{Kind: KindBudget}); err == nil {
		t.Error("weight 0 accepted")
	}
	if _, err := NewPolicy(PolicyConfig{Kind: KindBudget, Weight: 1}); err == nil {
		t.Error("NewPolicy built a budget policy without its allocator")
	}

	// The floor: a budget far above what 10 minutes allow.
	b.Configure(BudgetSettings{Total: 1e6, MaxInterval: 48 * time.Hour})
	obs := Observation{Time: now.Add(time.Hour), Changed: true, NewItems: 1}
	if w := pa.Observe(&sa, obs); w != BudgetFloor {
		t.Errorf("wait %v under a huge budget, want the floor %v", w, BudgetFloor)
	}
	// max_interval: a budget far below it.
	b.Configure(BudgetSettings{Total: 0.001, MaxInterval: 30 * time.Hour})
	obs.Time = obs.Time.Add(time.Hour)
	if w := pa.Observe(&sa, obs); w != 30*time.Hour {
		t.Errorf("wait %v under a tiny budget, want max_interval 30h", w)
	}
}

func TestBudgetPlacesPollsByProfile(t *testing.T) {
	now := monday.Add(14 * 24 * time.Hour)
	b := NewBudget(BudgetSettings{Total: 12, MaxInterval: 48 * time.Hour}, nil)
	p, _ := b.Policy("a", PolicyConfig{Kind: KindBudget, Weight: 1})
	st := PolicyState{Rate: learned(20, now)}
	p.Start(&st)
	var prof [WeekHours]float64
	st.Rate.Profile(&prof)
	if prof[13] < 5*prof[3] {
		t.Fatalf("profile at 13:00 %v, at 03:00 %v: the peak was not learned", prof[13], prof[3])
	}
	// Waits are short around the 13:00 peak and long at night, and a day
	// of them spends the member's 12 polls.
	var g [WeekHours]float64
	sqrtProfile(st.Rate, &g)
	peak := p.(budgetPolicy).place(&g, now.Add(12*time.Hour), 12)
	night := p.(budgetPolicy).place(&g, now.Add(2*time.Hour), 12)
	if peak >= night {
		t.Errorf("wait from 12:00 %v, from 02:00 %v: want shorter at the peak", peak, night)
	}
	polls, at := 0, now
	for at.Before(now.Add(7 * 24 * time.Hour)) {
		at = at.Add(p.(budgetPolicy).place(&g, at, 12))
		polls++
	}
	if polls < 83 || polls > 85 {
		t.Errorf("%d polls in a week, want 84 (12 a day)", polls)
	}
}

func TestRateLearnsOnline(t *testing.T) {
	// Four postings a day at 09:00–10:00, seen by hourly polls, dated and not.
	for _, dated := range []bool{true, false} {
		r := &RateState{}
		for h := range 21 * 24 {
			now := monday.Add(time.Duration(h+1) * time.Hour)
			var dates []time.Time
			extra := 0
			if now.Hour() == 10 {
				if dated {
					for k := range 4 {
						dates = append(dates, now.Add(-time.Hour+time.Duration(k)*15*time.Minute))
					}
				} else {
					extra = 4
				}
			}
			r.Observe(now, dates, extra)
		}
		lambda, ok := r.Lambda()
		if !ok || math.Abs(lambda-4) > 0.3 {
			t.Errorf("dated %v: λ = %v a day (evidence %v), want ≈ 4", dated, lambda, ok)
		}
		var p [WeekHours]float64
		r.Profile(&p)
		if p[9] < 5*p[20] {
			t.Errorf("dated %v: profile at 09:00 %v, at 20:00 %v", dated, p[9], p[20])
		}
	}
	// Old evidence decays: a page that stops posting loses its rate.
	r := learned(10, monday.Add(14*24*time.Hour))
	before, _ := r.Lambda()
	r.Observe(monday.Add(42*24*time.Hour), nil, 0)
	after, _ := r.Lambda()
	if after > before/4 {
		t.Errorf("λ %v four quiet weeks after %v: old evidence not decayed", after, before)
	}
}

func TestRateStateJSON(t *testing.T) {
	p := persisted{Policy: PolicyState{Rate: learned(3, monday.Add(14*24*time.Hour))}}
	data, err := p.marshal()
	if err != nil {
		t.Fatal(err)
	}
	q, err := unmarshalState(data)
	if err != nil {
		t.Fatal(err)
	}
	l1, _ := p.Policy.Rate.Lambda()
	l2, _ := q.Policy.Rate.Lambda()
	if math.Abs(l1-l2) > 1e-3*l1 || !q.Policy.Rate.At.Equal(p.Policy.Rate.At) {
		t.Errorf("λ %v after a round trip, want %v", l2, l1)
	}
	if len(data) > 4000 {
		t.Errorf("poll state of %d bytes with a rate", len(data))
	}
}

func TestEngineBudgetSurvivesReloadAndSwitch(t *testing.T) {
	o := newOrigin(t)
	o.set(datedPage("Site", "one", t0.Add(-time.Hour)))
	yaml := func(kind string) string {
		return baseYAML(`  budget: {polls_per_day: 48, max_interval: 24h}
resources:
  - id: a
    url: ` + o.url("/a") + `
    policy: {kind: ` + kind + `}
    weight: 2
`)
	}
	store := newMemStore()
	clk := newFakeClock(t0)
	e := newTestEngine(t, testConfig(t, yaml("budget")), store, clk)
	for i := range 5 {
		o.set(datedPage("Site", "item "+string(rune('a'+i)), clk.Now()))
		st := pollAtNext(t, e, clk, "a")
		if st.Policy != KindBudget || st.Interval < BudgetFloor || st.Interval > 24*time.Hour {
			t.Fatalf("poll %d: %+v", i, st)
		}
	}
	share, ok := e.BudgetShare("a")
	if !ok || share.PollsPerDay != 48 || share.Weight != 2 {
		t.Fatalf("BudgetShare %+v %v, want the whole budget of 48 a day", share, ok)
	}
	rate := func(e *Engine) RateState {
		e.mu.Lock()
		defer e.mu.Unlock()
		if r := e.resources["a"].st.Policy.Rate; r != nil {
			return *r
		}
		return RateState{}
	}
	learnedRate := rate(e)
	if learnedRate.At.IsZero() || sum(&learnedRate.Posts) == 0 {
		t.Fatalf("nothing learned: %+v", learnedRate)
	}
	// budget → smart → budget: the rate is kept.
	ctx := t.Context()
	if err := e.Apply(ctx, testConfig(t, yaml("smart"))); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.BudgetShare("a"); ok || e.budget.Len() != 0 {
		t.Error("a smart resource still in the budget")
	}
	if _, ok := e.BudgetShare("no-such-resource"); ok {
		t.Error("a budget share for an id that is not configured")
	}
	if err := e.Apply(ctx, testConfig(t, yaml("budget"))); err != nil {
		t.Fatal(err)
	}
	if got := rate(e); got != learnedRate {
		t.Error("the rate changed across a policy switch")
	}
	// A new budget applies at once: the next poll moves.
	before, _ := e.Status("a")
	if err := e.Apply(ctx, testConfig(t, strings.Replace(yaml("budget"), "polls_per_day: 48", "polls_per_day: 2", 1))); err != nil {
		t.Fatal(err)
	}
	after, _ := e.Status("a")
	if share, _ := e.BudgetShare("a"); share.PollsPerDay != 2 || !after.NextPoll.After(before.NextPoll) {
		t.Errorf("after polls_per_day 48 → 2: share %+v, next poll %v (was %v)", share, after.NextPoll, before.NextPoll)
	}
	// A new engine over the same store (a restart) resumes the rate.
	e2 := newTestEngine(t, testConfig(t, yaml("budget")), store, clk)
	if got := rate(e2); got.At.IsZero() || math.Abs(sum(&got.Posts)-sum(&learnedRate.Posts)) > 1e-3 {
		t.Errorf("after a restart: %v postings learned, want %v", sum(&got.Posts), sum(&learnedRate.Posts))
	}
}

// TestBudgetMaxIntervalBounds: max_interval unset takes the default, one at
// or above the floor is kept, one below the floor is raised to it.
func TestBudgetMaxIntervalBounds(t *testing.T) {
	for _, tc := range []struct{ set, want time.Duration }{
		{0, config.DefaultMaxInterval},
		{-time.Hour, config.DefaultMaxInterval},
		{BudgetFloor - time.Nanosecond, BudgetFloor},
		{BudgetFloor, BudgetFloor},
		{BudgetFloor + time.Nanosecond, BudgetFloor + time.Nanosecond},
		{24 * time.Hour, 24 * time.Hour},
	} {
		b := NewBudget(BudgetSettings{PerResource: 24, MaxInterval: tc.set}, nil)
		if got := b.Settings().MaxInterval; got != tc.want {
			t.Errorf("max_interval %v: %v, want %v", tc.set, got, tc.want)
		}
	}
}

// TestBudgetFirstWait: a resource with nothing observed yet starts at the
// wait its share gives, 24 h ÷ polls a day: the whole budget for a lone
// member (24 a day: an hour), the mean share for a newcomer beside it.
func TestBudgetFirstWait(t *testing.T) {
	b := NewBudget(BudgetSettings{Total: 24, MaxInterval: 48 * time.Hour}, nil)
	pa, err := b.Policy("a", PolicyConfig{Kind: KindBudget, Weight: 1})
	if err != nil {
		t.Fatal(err)
	}
	var sa PolicyState
	if w := pa.Start(&sa); w != time.Hour {
		t.Errorf("a lone member's first wait %v, want 1h (24 polls a day)", w)
	}
	// A lone member whose rate was learned still gets the whole budget,
	// whatever its share √(w·λ) (here √(4·2)).
	lone := NewBudget(BudgetSettings{Total: 24, MaxInterval: 48 * time.Hour}, nil)
	pl, _ := lone.Policy("l", PolicyConfig{Kind: KindBudget, Weight: 4})
	sl := PolicyState{Rate: learned(2, monday.Add(7*24*time.Hour))}
	pl.Start(&sl)
	if r, _ := lone.Share("l"); math.Abs(r-24) > 1e-9 {
		t.Errorf("a lone learned member's share %v, want the whole 24", r)
	}
	pb, _ := b.Policy("b", PolicyConfig{Kind: KindBudget, Weight: 1})
	var sb PolicyState
	if w := pb.Start(&sb); w != 2*time.Hour {
		t.Errorf("the second member's first wait %v, want 2h (half of 24 polls a day)", w)
	}
}

// TestBudgetEdges: the allocator at the edges of its classes. A member held
// at the max_interval rate whose free neighbour leaves shares the whole
// budget with the other held ones (never the whole budget each); a lone
// member whose budget is below the max_interval rate polls at that rate; a
// member that would poll exactly at the max_interval rate gets it, whichever
// class it is counted in.
func TestBudgetEdges(t *testing.T) {
	share := func(b *Budget, id string) float64 { s, _ := b.Share(id); return s }
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }

	// 10 polls a day, max_interval 24 h: at least 1 a day each.
	b := NewBudget(BudgetSettings{Total: 10, MaxInterval: 24 * time.Hour}, nil)
	b.update("busy", 100, true)
	b.update("q1", 0.01, true) // 10·0.01/100.01 < 1: held at 1 a day
	b.update("q2", 0.01, true)
	if got := share(b, "busy"); !near(got, 8) {
		t.Errorf("busy beside two held members: %v polls a day, want 8 (10 − 2 held at 1)", got)
	}
	b.Leave("busy")
	q1, q2 := share(b, "q1"), share(b, "q2")
	if !near(q1, 5) || !near(q2, 5) {
		t.Errorf("after the only free member left: q1 %v, q2 %v polls a day, want 5 and 5 (the budget of 10 shared)", q1, q2)
	}

	// PerResource 1 a day, max_interval 24 h: when the free member leaves,
	// the two left have exactly the max_interval rate's worth.
	p := NewBudget(BudgetSettings{PerResource: 1, MaxInterval: 24 * time.Hour}, nil)
	p.update("busy", 10, true)
	p.update("q1", 0.01, true)
	p.update("q2", 0.01, true)
	p.Leave("busy")
	if q1, q2 := share(p, "q1"), share(p, "q2"); !near(q1, 1) || !near(q2, 1) {
		t.Errorf("PerResource 1, two held members left: %v and %v polls a day, want 1 and 1", q1, q2)
	}

	// A lone member whose whole budget (half a poll a day) is below the
	// max_interval rate (one a day), whatever its share.
	for _, s := range []float64{0.1, 1, 10} {
		lone := NewBudget(BudgetSettings{Total: 0.5, MaxInterval: 24 * time.Hour}, nil)
		lone.update("l", s, true)
		if got := share(lone, "l"); !near(got, 1) {
			t.Errorf("lone member of share %v under a budget of 0.5: %v polls a day, want 1 (the max_interval rate)", s, got)
		}
	}

	// Exactly at the max_interval rate: 3 a day over shares 1 and 2 gives
	// 1 and 2; the member at 1 a day gets it, the other the rest.
	e := NewBudget(BudgetSettings{Total: 3, MaxInterval: 24 * time.Hour}, nil)
	e.update("two", 2, true)
	e.update("one", 1, true)
	if got1, got2 := share(e, "one"), share(e, "two"); !near(got1, 1) || !near(got2, 2) {
		t.Errorf("at the max_interval rate: %v and %v polls a day, want 1 and 2", got1, got2)
	}
	e.rebuild()
	if got1, got2 := share(e, "one"), share(e, "two"); !near(got1, 1) || !near(got2, 2) {
		t.Errorf("at the max_interval rate, rebuilt: %v and %v polls a day, want 1 and 2", got1, got2)
	}

	// A member that joins with a share whose rate, counted free, would be
	// just under the max_interval rate is held there, and the others share
	// the rest: 10 a day, busy 10 then s = 1 (10·1/11 < 1): busy gets 9.
	n := NewBudget(BudgetSettings{Total: 10, MaxInterval: 24 * time.Hour}, nil)
	n.update("busy", 10, true)
	n.update("edge", 1, true)
	if got := share(n, "busy"); !near(got, 9) {
		t.Errorf("beside a member just under the max_interval rate: busy %v polls a day, want 9", got)
	}
	if got := share(n, "edge"); !near(got, 1) {
		t.Errorf("a member just under the max_interval rate: %v polls a day, want 1", got)
	}
}

// readersOf is a fixed count of readers per resource.
type readersOf map[string]int

func (r readersOf) Readers(id string) int { return r[id] }

// TestBudgetWeightReaders checks weight_readers: the weight is multiplied by
// the resource's readers, and a resource without readers counts one.
func TestBudgetWeightReaders(t *testing.T) {
	now := monday.Add(7 * 24 * time.Hour)
	b := NewBudget(BudgetSettings{Total: 30, MaxInterval: 48 * time.Hour}, readersOf{"a": 4})
	pa, _ := b.Policy("a", PolicyConfig{Kind: KindBudget, Weight: 1, WeightReaders: true})
	pb, _ := b.Policy("b", PolicyConfig{Kind: KindBudget, Weight: 4, WeightReaders: true})
	pc, _ := b.Policy("c", PolicyConfig{Kind: KindBudget, Weight: 4})
	// a: 1 × 4 readers × λ 2; b: 4 × (no readers: 1) × λ 2; c: 4 × λ 2,
	// readers not counted: three equal shares of 30.
	for _, p := range []Policy{pa, pb, pc} {
		p.Start(&PolicyState{Rate: learned(2, now)})
	}
	for _, id := range []string{"a", "b", "c"} {
		if r, _ := b.Share(id); math.Abs(r-10) > 1e-6 {
			t.Errorf("%s: %v polls a day, want 10 (three equal weights × λ)", id, r)
		}
	}
}

// TestBudgetSums checks the allocator's running sums where a member's term
// is replaced: a member without evidence updated or leaving, a rebuild with
// one, a member of share 0, and when the sums are rebuilt (once per 64
// updates here, not at each).
func TestBudgetSums(t *testing.T) {
	share := func(b *Budget, id string) float64 { s, _ := b.Share(id); return s }
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }

	// 10 a day, max_interval 24 h. "old" has evidence, "new" gets the mean share.
	b := NewBudget(BudgetSettings{Total: 10, MaxInterval: 24 * time.Hour}, nil)
	b.update("old", 1, true)
	b.update("new", 0, false)
	b.update("new", 0, false) // updated again, still without evidence
	if o, n := share(b, "old"), share(b, "new"); !near(o, 5) || !near(n, 5) {
		t.Errorf("a member without evidence updated twice: %v and %v polls a day, want 5 and 5", o, n)
	}
	b.Configure(b.Settings()) // rebuilt
	if o, n := share(b, "old"), share(b, "new"); !near(o, 5) || !near(n, 5) {
		t.Errorf("rebuilt with a member without evidence: %v and %v polls a day, want 5 and 5", o, n)
	}
	b.Leave("new")
	if o := share(b, "old"); !near(o, 10) {
		t.Errorf("after the member without evidence left: %v polls a day, want 10", o)
	}

	// A held member updated again stays counted once at the max_interval
	// rate: busy keeps 10 − 2.
	h := NewBudget(BudgetSettings{Total: 10, MaxInterval: 24 * time.Hour}, nil)
	h.update("busy", 100, true)
	h.update("q1", 0.01, true)
	h.update("q2", 0.01, true)
	h.update("q1", 0.01, true)
	if got := share(h, "busy"); !near(got, 8) {
		t.Errorf("beside two held members, one updated again: busy %v polls a day, want 8", got)
	}

	// A member exactly at the max_interval rate is free ("below" it is
	// held), when it joins and when the sums are rebuilt: 8 a day,
	// max_interval 6 h (4 a day), shares 1 and 1 give 4 each; a member of
	// share 3 joining then gets c over all three shares, 8/5·3.
	for _, rebuilt := range []bool{false, true} {
		e := NewBudget(BudgetSettings{Total: 8, MaxInterval: 6 * time.Hour}, nil)
		e.update("a", 1, true)
		e.update("b", 1, true)
		if rebuilt {
			e.rebuild()
		}
		if got := e.update("c", 3, true); !near(got, 8.0/5*3) {
			t.Errorf("beside two members at the max_interval rate (rebuilt %v): %v polls a day, want 8/5·3", rebuilt, got)
		}
	}

	// A member of share 0 is held at the max_interval rate; one without
	// evidence beside it gets a finite rate within the budget.
	z := NewBudget(BudgetSettings{Total: 10, MaxInterval: 24 * time.Hour}, nil)
	z.update("still", 0, true)
	z.update("new", 0, false)
	for _, id := range []string{"still", "new"} {
		if r := share(z, id); !(r >= 1 && r <= 10) {
			t.Errorf("%s beside a member of share 0: %v polls a day, want 1 to 10", id, r)
		}
	}

	// 10 a day, max_interval 6 h (4 a day): "small" joins free, then "big"
	// makes c·1 fall under 4 a day; "small" is held only from the rebuild,
	// at the 64th update, and "big" then gets 10 − 4.
	r := NewBudget(BudgetSettings{Total: 10, MaxInterval: 6 * time.Hour}, nil)
	r.update("small", 1, true)
	for u := 2; u <= 64; u++ {
		got := r.update("big", 100, true)
		want := 10.0 / 101 * 100
		if u == 64 {
			want = 6
		}
		if !near(got, want) {
			t.Fatalf("update %d: big polls %v a day, want %v (the sums rebuilt at the 64th update)", u, got, want)
		}
	}
}

// TestBudgetCountsPostings checks what a budget member's poll adds to its
// rate evidence: the new items' dates, the new items without one, and one
// posting for a change that shows no new item.
func TestBudgetCountsPostings(t *testing.T) {
	b := NewBudget(BudgetSettings{Total: 10, MaxInterval: 24 * time.Hour}, nil)
	p, _ := b.Policy("a", PolicyConfig{Kind: KindBudget, Weight: 1})
	t0 := monday.Add(7 * 24 * time.Hour)
	for _, c := range []struct {
		name     string
		changed  bool
		dated    int
		newItems int
		want     float64
	}{
		{"2 dated of 3 new", true, 2, 3, 3},
		{"2 dated of 2 new", true, 2, 2, 2},
		{"3 new, none dated", true, 0, 3, 3},
		{"changed, no new item", true, 0, 0, 1},
		{"unchanged", false, 0, 0, 0},
	} {
		st := PolicyState{}
		p.Start(&st)
		p.Observe(&st, Observation{Time: t0, Changed: true}) // the first reading: no postings
		var dates []time.Time
		for k := range c.dated {
			dates = append(dates, t0.Add(time.Duration(10+k)*time.Minute))
		}
		p.Observe(&st, Observation{Time: t0.Add(time.Hour), Changed: c.changed, Dates: dates, NewItems: c.newItems})
		if got := sum(&st.Rate.Posts); math.Abs(got-c.want) > 0.01 { // dated postings decay a little
			t.Errorf("%s: %.3f postings counted, want %v", c.name, got, c.want)
		}
	}
}

// TestPoliciesCountUnchanged checks the state's count of polls without a
// change since the last change, under each policy.
func TestPoliciesCountUnchanged(t *testing.T) {
	b := NewBudget(BudgetSettings{Total: 10, MaxInterval: 24 * time.Hour}, nil)
	flatP, _ := NewPolicy(PolicyConfig{Kind: KindFlat, Interval: time.Hour})
	smartP, _ := NewPolicy(PolicyConfig{Kind: KindSmart, Initial: time.Hour, Min: time.Minute, Max: 24 * time.Hour, Alpha: 0.5})
	budgetP, _ := b.Policy("b", PolicyConfig{Kind: KindBudget, Weight: 1})
	for _, p := range []Policy{flatP, smartP, budgetP} {
		st := PolicyState{}
		p.Start(&st)
		at := monday
		for i, changed := range []bool{true, false, false, false, true, false} {
			at = at.Add(time.Hour)
			p.Observe(&st, Observation{Time: at, Changed: changed})
			want := []int{0, 1, 2, 3, 0, 1}[i]
			if st.Unchanged != want {
				t.Errorf("%s, poll %d: %d unchanged, want %d", p.Config().Kind, i+1, st.Unchanged, want)
			}
		}
	}
}

// TestStatusTau: a budget resource's status tells the mean time between
// postings its rate has learned (24 h / λ) once there is a day of evidence,
// nothing before; a smart resource's, its own τ.
func TestStatusTau(t *testing.T) {
	o := newOrigin(t)
	yaml := func(kind string) string {
		return baseYAML(`  budget: {polls_per_day: 48, max_interval: 24h}
resources:
  - {id: a, url: ` + o.url("/a") + `, policy: {kind: ` + kind + `}}
`)
	}
	clk := newFakeClock(t0)
	e := newTestEngine(t, testConfig(t, yaml("budget")), newMemStore(), clk)
	setRate := func(posts, hours float64) {
		e.mu.Lock()
		defer e.mu.Unlock()
		r := &RateState{At: t0}
		r.Posts[3], r.Hours[3] = posts, hours
		e.resources["a"].st.Policy.Rate = r
	}
	setRate(5.5, 23)
	if st, _ := e.Status("a"); st.Tau != 0 {
		t.Errorf("under a day of evidence: τ %v, want none", st.Tau)
	}
	setRate(5.5, 48) // λ = 24·6/48 = 3 a day
	if st, _ := e.Status("a"); st.Tau != 8*time.Hour {
		t.Errorf("6 postings over 2 days: τ %v, want 8h", st.Tau)
	}
	if err := e.Apply(t.Context(), testConfig(t, yaml("smart"))); err != nil {
		t.Fatal(err)
	}
	setRate(5.5, 48)
	e.mu.Lock()
	e.resources["a"].st.Policy.Tau = 7 * time.Minute
	e.mu.Unlock()
	if st, _ := e.Status("a"); st.Tau != 7*time.Minute {
		t.Errorf("smart: τ %v, want its own 7m", st.Tau)
	}
}
