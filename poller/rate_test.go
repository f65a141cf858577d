package poller

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestHourOfWeekBeforeEpoch: times before the week's epoch (Monday 1
// January 2024) fall in the same hours of the week.
func TestHourOfWeekBeforeEpoch(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		want float64
	}{
		{time.Date(2023, time.December, 31, 23, 30, 0, 0, time.UTC), 167.5}, // a Sunday
		{time.Date(2023, time.December, 25, 13, 0, 0, 0, time.UTC), 13},     // a Monday
		{time.Date(1999, time.December, 29, 6, 0, 0, 0, time.UTC), 54},      // a Wednesday
	} {
		if got := hourOfWeek(tc.t); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("hourOfWeek(%v) = %v, want %v", tc.t, got, tc.want)
		}
	}
}

// TestLambda: the rate is 24·(postings + ½) per day of exposure, exposure
// counted at least a day, and evidence from a full day on.
func TestLambda(t *testing.T) {
	if l, ev := (*RateState)(nil).Lambda(); l != 0 || ev {
		t.Errorf("nil state: %v, %v", l, ev)
	}
	for _, tc := range []struct {
		posts, hours float64
		want         float64
		evidence     bool
	}{
		{0, 0, 0.5, false},
		{3, 24, 3.5, true},
		{3, 48, 1.75, true},
		{3, 23.99, 3.5, false},
		{0, 96, 0.125, true},
	} {
		var r RateState
		r.Posts[5], r.Hours[7] = tc.posts, tc.hours
		l, ev := r.Lambda()
		if math.Abs(l-tc.want) > 1e-12 || ev != tc.evidence {
			t.Errorf("%v postings over %v hours: λ %v, evidence %v; want %v, %v", tc.posts, tc.hours, l, ev, tc.want, tc.evidence)
		}
	}
}

// TestRateObserveWeights: exposure is counted hour bin by hour bin, each
// hour weighted by its decay at its middle; a dated posting counts
// exp(−age/RateMemory) in its hour's bin; postings revealed with no time
// passed count in the current hour.
func TestRateObserveWeights(t *testing.T) {
	M := RateMemory.Hours()
	start := monday.Add(10*time.Hour + 30*time.Minute)
	var r RateState
	r.Observe(start, nil, 0)
	now := monday.Add(12 * time.Hour)
	r.Observe(now, nil, 0)
	if want := 0.5 * math.Exp(-(1.5-0.25)/M); math.Abs(r.Hours[10]-want) > 1e-12 {
		t.Errorf("hour 10: %v of exposure, want %v (half an hour, its middle 1.25 h ago)", r.Hours[10], want)
	}
	if want := math.Exp(-0.5 / M); math.Abs(r.Hours[11]-want) > 1e-12 {
		t.Errorf("hour 11: %v of exposure, want %v (an hour, its middle 0.5 h ago)", r.Hours[11], want)
	}
	if got := sum(&r.Hours); math.Abs(got-r.Hours[10]-r.Hours[11]) > 1e-12 {
		t.Errorf("exposure outside hours 10 and 11: %v in all", got)
	}

	// Two postings revealed at the same instant as the last poll.
	r.Observe(now, nil, 2)
	if r.Posts[12] != 2 || sum(&r.Posts) != 2 {
		t.Errorf("postings with no time passed: %v in hour 12, %v in all; want 2 and 2", r.Posts[12], sum(&r.Posts))
	}

	// A first observation with a posting one RateMemory old: the posting
	// weighs 1/e, the exposure reaches back to it, weighted hour by hour.
	var d RateState
	then := monday.Add(3 * 24 * time.Hour) // Thursday 00:00
	posted := then.Add(-RateMemory).Add(13 * time.Hour)
	d.Observe(then, []time.Time{posted}, 0)
	if got, want := d.Posts[int(hourOfWeek(posted))], math.Exp(-1+13/M); math.Abs(got-want) > 1e-12 || math.Abs(sum(&d.Posts)-want) > 1e-12 {
		t.Errorf("a posting %v old: %v in its hour, %v in all; want %v", then.Sub(posted), got, sum(&d.Posts), want)
	}
	span := then.Sub(posted).Hours()
	want := 0.0
	for k := 0.0; k < span; k++ { // midpoints of whole hours
		want += math.Exp(-(k + 0.5) / M)
	}
	if got := sum(&d.Hours); math.Abs(got-want) > 1e-9 {
		t.Errorf("exposure over %v h: %v, want %v", span, got, want)
	}
}

// TestSmooth: the circular (¼, ½, ¼) kernel keeps the total and spreads a
// single value over its neighbours, across the ends.
func TestSmooth(t *testing.T) {
	in := make([]float64, 24)
	in[0] = 8
	out := make([]float64, 24)
	smooth(in, out)
	if out[23] != 2 || out[0] != 4 || out[1] != 2 {
		t.Errorf("a single 8 at 0: %v, %v, %v at 23, 0, 1; want 2, 4, 2", out[23], out[0], out[1])
	}
	total := 0.0
	for _, v := range out {
		total += v
	}
	if total != 8 {
		t.Errorf("total %v after smoothing, want 8", total)
	}
}

// TestProfileShape: the profile averages 1 over the week; with no posting
// or no exposure it is flat; with little evidence it stays near flat (the
// shrinkage), with much it follows the postings.
func TestProfileShape(t *testing.T) {
	var p [WeekHours]float64
	for _, r := range []RateState{{}, func() (r RateState) { r.Posts[5] = 3; return }(), func() (r RateState) { r.Hours[5] = 30; return }()} {
		r.Profile(&p)
		for i, v := range p {
			if v != 1 {
				t.Fatalf("posts %v, hours %v: profile %v at %d, want flat 1", sum(&r.Posts), sum(&r.Hours), v, i)
			}
		}
	}
	var little, daily, much RateState
	for i := range WeekHours {
		little.Hours[i], daily.Hours[i], much.Hours[i] = 2, 2, 2
	}
	little.Posts[13] = 3 // three postings at Monday 13:00 over two weeks
	for d := range 7 {
		daily.Posts[d*24+13] = 10 // ten every day at 13:00
	}
	much.Posts[13+24] = 3000 // thousands on Tuesdays at 13:00
	for _, tc := range []struct {
		name     string
		r        RateState
		peak     int
		min, max float64
	}{
		{"little", little, 13, 0.5, 3},
		{"daily", daily, 13, 0.1, 10}, // every hour still polled now and then
		{"much", much, 13 + 24, profileFloor, WeekHours},
	} {
		tc.r.Profile(&p)
		total := 0.0
		for i, v := range p {
			total += v
			if v < tc.min || v > tc.max {
				t.Errorf("%s: profile %v at %d, outside [%v, %v]", tc.name, v, i, tc.min, tc.max)
			}
			if v > p[tc.peak]*(1+1e-12) {
				t.Errorf("%s: profile %v at %d above the peak hour %d's %v", tc.name, v, i, tc.peak, p[tc.peak])
			}
		}
		if tc.name != "much" && math.Abs(total-WeekHours) > 1e-9 {
			t.Errorf("%s: profile sums to %v, want %d (a mean of 1)", tc.name, total, WeekHours)
		}
		if tc.name == "much" && p[tc.peak] < 20 {
			t.Errorf("%s: the peak hour's profile %v, want it far above the mean", tc.name, p[tc.peak])
		}
	}
}

// TestWalk: the wait that covers a given area under the profile: on a flat
// profile as many hours as the area, whole weeks at once, across the end
// of the week, and never past the limit; nothing on an empty profile.
func TestWalk(t *testing.T) {
	var flat, zero, twoLevel, silentNights [WeekHours]float64
	for i := range WeekHours {
		flat[i] = 1
		twoLevel[i] = 1
		if i%24 >= 6 {
			silentNights[i] = 1 // nothing from midnight to six
		}
		if i%24 >= 12 {
			twoLevel[i] = 3 // afternoons count three times
		}
	}
	limit := 1000 * time.Hour
	sunday := monday.Add(6*24*time.Hour + 22*time.Hour + 30*time.Minute)
	for _, tc := range []struct {
		name string
		t    time.Time
		g    *[WeekHours]float64
		area float64
		want time.Duration
	}{
		{"flat, within an hour", monday.Add(10*time.Hour + 15*time.Minute), &flat, 0.5, 30 * time.Minute},
		{"flat, across hours", monday.Add(10*time.Hour + 15*time.Minute), &flat, 2.5, 150 * time.Minute},
		{"flat, across the week's end", sunday, &flat, 3, 3 * time.Hour},
		// Sunday 22:30 to midnight, Monday's silent night, then an hour.
		{"silent nights, across the week's end", sunday, &silentNights, 2.5, 8*time.Hour + 30*time.Minute},
		{"flat, two weeks and a half", monday, &flat, 2.5 * WeekHours, 420 * time.Hour},
		{"two levels: a morning hour", monday.Add(11 * time.Hour), &twoLevel, 1 + 3*2, 3 * time.Hour},
		{"two levels from half past", monday.Add(11*time.Hour + 30*time.Minute), &twoLevel, 0.5 + 3, 90 * time.Minute},
		{"over the limit", monday, &flat, 2000, limit},
		{"empty profile", monday, &zero, 5, 0},
		{"no area", monday, &flat, 0, 0},
		{"whole weeks from a silent hour", monday.Add(3 * time.Hour), &silentNights, 2 * 18 * 7, 2 * WeekHours * time.Hour},
	} {
		if got := walk(tc.t, tc.g, tc.area, limit); (got - tc.want).Abs() > time.Millisecond {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestObserveSpreadsUndated: postings a poll reveals without a date are
// spread over the time since the last poll, hour by hour, in proportion to
// each hour's exposure times the profile learned before the poll; they add
// up to exactly their number. The last hour, cut short by the poll, counts
// only its part.
func TestObserveSpreadsUndated(t *testing.T) {
	M := RateMemory.Hours()
	var r RateState
	r.Observe(monday.Add(10*time.Hour+30*time.Minute), nil, 0)
	r.Observe(monday.Add(12*time.Hour+15*time.Minute), nil, 3)
	for bin, want := range map[int]float64{
		10: 0.5 * math.Exp(-1.5/M),
		11: math.Exp(-0.75 / M),
		12: 0.25 * math.Exp(-0.125/M),
	} {
		if got := r.Hours[bin]; math.Abs(got-want) > 1e-12 {
			t.Errorf("hour %d: %v of exposure, want %v", bin, got, want)
		}
	}
	exposure := sum(&r.Hours)
	if math.Abs(exposure-r.Hours[10]-r.Hours[11]-r.Hours[12]) > 1e-12 {
		t.Errorf("exposure outside hours 10–12: %v in all", exposure)
	}
	// No profile learned yet (flat): the postings follow the exposure.
	for bin := range WeekHours {
		if want := 3 * r.Hours[bin] / exposure; math.Abs(r.Posts[bin]-want) > 1e-12 {
			t.Errorf("flat profile: %v postings in hour %d, want %v", r.Posts[bin], bin, want)
		}
	}

	// A learned profile: each hour's share is its exposure times its
	// profile, the profile being the one before this poll (after decay).
	var s RateState
	for i := range WeekHours {
		s.Hours[i] = 2
	}
	for d := range 7 {
		s.Posts[d*24+13] = 10 // every day at 13:00
	}
	s.At = monday.Add(11 * time.Hour)
	now := monday.Add(15*time.Hour + 40*time.Minute)
	before := s
	decay := math.Exp(-now.Sub(s.At).Hours() / M)
	for i := range WeekHours {
		before.Posts[i] *= decay
		before.Hours[i] *= decay
	}
	var prof [WeekHours]float64
	before.Profile(&prof)
	s.Observe(now, nil, 5)
	weights := 0.0
	added := [WeekHours]float64{}
	for i := range WeekHours {
		added[i] = s.Hours[i] - before.Hours[i]
		weights += added[i] * prof[i]
	}
	got := 0.0
	for i := range WeekHours {
		inc := s.Posts[i] - before.Posts[i]
		got += inc
		if want := 5 * added[i] * prof[i] / weights; math.Abs(inc-want) > 1e-9 {
			t.Errorf("learned profile: %v postings added in hour %d, want %v", inc, i, want)
		}
	}
	if math.Abs(got-5) > 1e-9 {
		t.Errorf("5 undated postings added up to %v", got)
	}
	if prof[13] <= prof[11] {
		t.Fatalf("the test needs a profile that favours 13:00: %v at 11, %v at 13", prof[11], prof[13])
	}
}

// profileByDefinition is RateState.Profile written out as its comment and
// docs/ define it, by day and hour: [1 2 1]/4 smoothing over the week's
// hours; hour-of-day factors (observed + 3) / (expected + 3) from the
// week's days pooled and smoothed again over the day; day-of-week factors
// (observed + 5) / (expected + 5) against what the hour factors expect; a
// per-hour correction (observed + 20) / (expected + 20); scaled to a mean
// of 1, each hour at least 0.02.
func profileByDefinition(r *RateState) [WeekHours]float64 {
	var out [WeekHours]float64
	at := func(b *weekBins, d, k int) float64 { return b[((d*24+k)%WeekHours+WeekHours)%WeekHours] }
	smoothed := func(b *weekBins, d, k int) float64 {
		return (at(b, d, k-1) + 2*at(b, d, k) + at(b, d, k+1)) / 4
	}
	n, h := sum(&r.Posts), sum(&r.Hours)
	if n == 0 || h == 0 {
		for i := range out {
			out[i] = 1
		}
		return out
	}
	rate := n / h
	var byHourPosts, byHourHours [24]float64
	for k := range 24 {
		for d := range 7 {
			byHourPosts[k] += smoothed(&r.Posts, d, k)
			byHourHours[k] += smoothed(&r.Hours, d, k)
		}
	}
	var hourFactor [24]float64
	for k := range 24 {
		prev, next := (k+23)%24, (k+1)%24
		obs := (byHourPosts[prev] + 2*byHourPosts[k] + byHourPosts[next]) / 4
		exp := rate * (byHourHours[prev] + 2*byHourHours[k] + byHourHours[next]) / 4
		hourFactor[k] = (obs + 3) / (exp + 3)
	}
	var dayFactor [7]float64
	for d := range 7 {
		obs, exp := 0.0, 0.0
		for k := range 24 {
			obs += smoothed(&r.Posts, d, k)
			exp += rate * hourFactor[k] * smoothed(&r.Hours, d, k)
		}
		dayFactor[d] = (obs + 5) / (exp + 5)
	}
	total := 0.0
	for d := range 7 {
		for k := range 24 {
			base := hourFactor[k] * dayFactor[d]
			obs := smoothed(&r.Posts, d, k)
			exp := rate * base * smoothed(&r.Hours, d, k)
			out[d*24+k] = base * (obs + 20) / (exp + 20)
			total += out[d*24+k]
		}
	}
	for i := range out {
		out[i] = max(out[i]/total*WeekHours, 0.02)
	}
	return out
}

// TestProfileByDefinition: on random states, sparse and dense, and on ones
// whose hours fall to the floor, the profile is the one its definition
// gives, to rounding.
func TestProfileByDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 31))
	states := []RateState{}
	for n := range 12 {
		var r RateState
		for i := range WeekHours {
			if n%3 == 0 || rng.IntN(4) == 0 {
				r.Posts[i] = rng.Float64() * float64(1+n*n)
			}
			r.Hours[i] = rng.Float64() * 3
		}
		states = append(states, r)
	}
	var spike RateState // one hour far above the others: the rest at the floor
	for i := range WeekHours {
		spike.Hours[i] = 2
	}
	spike.Posts[37] = 5000
	states = append(states, spike)
	floored := 0
	for si, r := range states {
		var got [WeekHours]float64
		r.Profile(&got)
		want := profileByDefinition(&r)
		for i := range WeekHours {
			if math.Abs(got[i]-want[i]) > 1e-9*max(1, want[i]) {
				t.Fatalf("state %d: profile %v at hour %d, by definition %v", si, got[i], i, want[i])
			}
			if want[i] == 0.02 {
				floored++
			}
		}
	}
	if floored == 0 {
		t.Error("no hour at the floor: the test does not reach it")
	}
}

// TestSegmentsAcrossTheWeek: a poll from Sunday night to Monday morning
// spreads its exposure over the last hour of the week and the first hours
// of the next, each by its overlap, not all into Monday's first.
func TestSegmentsAcrossTheWeek(t *testing.T) {
	var r RateState
	type seg struct {
		bin   int
		hours float64
	}
	var got []seg
	r.segments(monday.Add(-30*time.Minute), monday.Add(2*time.Hour+15*time.Minute), func(bin int, hours, _ float64) {
		got = append(got, seg{bin, hours})
	})
	want := []seg{{WeekHours - 1, 0.5}, {0, 1}, {1, 1}, {2, 0.25}}
	if len(got) != len(want) {
		t.Fatalf("segments %v, want %v", got, want)
	}
	for i := range want {
		if got[i].bin != want[i].bin || math.Abs(got[i].hours-want[i].hours) > 1e-12 {
			t.Errorf("segments %v, want %v", got, want)
			break
		}
	}
}

// TestObserveLookback: on the first observation, a page's dates older than
// the lookback (eight weeks) do not stretch the exposure back to them.
func TestObserveLookback(t *testing.T) {
	now := monday.Add(100 * 24 * time.Hour)
	var withOld, without RateState
	withOld.Observe(now, []time.Time{now.Add(-7 * 24 * time.Hour), now.Add(-10 * 7 * 24 * time.Hour), now.Add(-24 * time.Hour)}, 0)
	without.Observe(now, []time.Time{now.Add(-7 * 24 * time.Hour)}, 0)
	for bin := range WeekHours {
		if math.Abs(withOld.Hours[bin]-without.Hours[bin]) > 1e-12 {
			t.Fatalf("hour %d: %v of exposure with a 10-week-old date, %v without it", bin, withOld.Hours[bin], without.Hours[bin])
		}
	}
	if e := sum(&without.Hours); e <= 0 {
		t.Fatalf("no exposure over the week the page dates: %v", e)
	}
}
