package poller

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// WeekHours is the number of hour-of-the-week bins of a [RateState]: Monday
// 00:00–01:00 UTC is bin 0.
const WeekHours = 168

// RateMemory is the time constant of the exponential decay of a
// [RateState]'s evidence: a posting (or an hour of observation) counts
// e^(−age/RateMemory), so rates are learned over about two weeks, as Sia &
// Cho learn theirs, and follow a page whose habits change.
const RateMemory = 14 * 24 * time.Hour

// rateLookback bounds how far back a first page's item dates are taken as
// evidence (beyond it they would weigh less than e^−4 anyway).
const rateLookback = 8 * 7 * 24 * time.Hour

// rateEvidence is how much observed time (decayed hours) a rate needs
// before it is trusted; before that the resource gets the mean share.
const rateEvidence = 24.0

// Pseudo-counts that shrink the profile towards flat when evidence is thin:
// the hour-of-day factors, the day-of-week factors and the full
// hour-of-the-week correction (see [RateState.Profile]).
const (
	shrinkDay  = 3.0
	shrinkWeek = 5.0
	shrinkBin  = 20.0
)

// profileFloor is the least relative rate of an hour in a profile: no hour
// of the week is taken as certainly silent.
const profileFloor = 0.02

// RateState is what a resource has learned of its page's posting rate:
// decayed postings and decayed observed hours per hour of the week (UTC).
// λ is their ratio over the whole week ([RateState.Lambda]), the profile
// the per-hour ratio, smoothed ([RateState.Profile]). It is updated online
// at every poll ([RateState.Observe]) in O(168), persisted with the poll
// state, and kept through policy changes.
type RateState struct {
	// At is the instant the decayed sums refer to: the last observation
	// (zero: nothing observed yet).
	At time.Time `json:"at,omitzero"`
	// Posts are the decayed postings by hour of the week.
	Posts weekBins `json:"posts"`
	// Hours are the decayed observed hours by hour of the week.
	Hours weekBins `json:"hours"`
}

// weekBins is one float per hour of the week; it is written to JSON with
// five significant digits, which is all the estimates need.
type weekBins [WeekHours]float64

func (b *weekBins) MarshalJSON() ([]byte, error) {
	out := make([]byte, 0, 8*WeekHours)
	out = append(out, '[')
	for i, v := range b {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendFloat(out, v, 'g', 5, 64)
	}
	return append(out, ']'), nil
}

func (b *weekBins) UnmarshalJSON(data []byte) error {
	var v []float64
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("rate bins: %w", err)
	}
	if len(v) != WeekHours {
		return fmt.Errorf("rate bins: want %d values, got %d", WeekHours, len(v))
	}
	copy(b[:], v)
	return nil
}

func sum(b *weekBins) float64 {
	s := 0.0
	for _, v := range b {
		s += v
	}
	return s
}

// weekEpoch is a Monday 00:00 UTC: hours of the week count from it.
var weekEpoch = time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC).Unix()

// hourOfWeek returns t's position in the week in hours, in [0, 168).
func hourOfWeek(t time.Time) float64 {
	s := float64((t.Unix()-weekEpoch)%(7*86400)) + float64(t.Nanosecond())/1e9
	if s < 0 {
		s += 7 * 86400
	}
	return s / 3600
}

// Lambda returns the learned posting rate in postings per day and whether
// there is enough evidence to trust it (a day of observation). Half a
// pseudo-posting keeps a page that has not posted yet from a rate of zero.
func (r *RateState) Lambda() (perDay float64, evidence bool) {
	if r == nil {
		return 0, false
	}
	h := sum(&r.Hours)
	return 24 * (sum(&r.Posts) + 0.5) / max(h, rateEvidence), h >= rateEvidence
}

// Observe folds one poll into the state: the observed time since the last
// observation, and the postings the poll revealed. dates are the posting
// times of new items that the page dates; extra is how many more new items
// it revealed without a usable date, spread over the time since the last
// observation in proportion to the current profile (their posting time is
// only known to lie in it: censored by the polls). On the first observation,
// dates reach back to the oldest one (at most 8 weeks): a page that dates
// its items tells its history at once.
func (r *RateState) Observe(now time.Time, dates []time.Time, extra int) {
	if !r.At.IsZero() && now.Before(r.At) {
		now = r.At // the clock went back: treat as no time passed
	}
	from := r.At
	if from.IsZero() {
		from = now
		for _, d := range dates {
			if d.Before(from) && !d.Before(now.Add(-rateLookback)) {
				from = d
			}
		}
	} else if f := math.Exp(-now.Sub(r.At).Hours() / RateMemory.Hours()); f < 1 {
		for i := range r.Posts {
			r.Posts[i] *= f
			r.Hours[i] *= f
		}
	}
	var prof [WeekHours]float64
	if extra > 0 {
		r.Profile(&prof) // before this poll's exposure and postings
	}
	// Exposure over [from, now], hour segment by hour segment, each weighted
	// by its decay at its middle; the extra postings share the same walk.
	total := 0.0
	if extra > 0 {
		r.segments(from, now, func(bin int, hours, w float64) { total += hours * w * prof[bin] })
	}
	r.segments(from, now, func(bin int, hours, w float64) {
		r.Hours[bin] += hours * w
		if extra > 0 && total > 0 {
			r.Posts[bin] += float64(extra) * hours * w * prof[bin] / total
		}
	})
	if extra > 0 && total <= 0 { // no time passed: the postings are now
		r.Posts[int(hourOfWeek(now))%WeekHours] += float64(extra)
	}
	for _, d := range dates {
		if d.After(now) {
			d = now // a clock ahead of ours
		}
		if d.Before(from) {
			d = from // older than what this poll covers: counted at its start
		}
		w := math.Exp(-now.Sub(d).Hours() / RateMemory.Hours())
		r.Posts[int(hourOfWeek(d))%WeekHours] += w
	}
	r.At = now
}

// segments calls f for each hour-of-week bin that [from, to] overlaps, in
// order, with the overlap in hours and the decay weight of its middle as
// seen from to.
func (r *RateState) segments(from, to time.Time, f func(bin int, hours, w float64)) {
	span := to.Sub(from).Hours()
	if span <= 0 {
		return
	}
	pos := hourOfWeek(from)
	done := 0.0
	for done < span {
		bin := int(pos) % WeekHours
		// Both are > 0: pos < Floor(pos)+1, and the difference of two
		// distinct floats is never 0; done < span.
		step := math.Min(math.Floor(pos)+1-pos, span-done)
		age := span - done - step/2
		f(bin, step, math.Exp(-age/RateMemory.Hours()))
		done += step
		pos += step
		if pos >= WeekHours {
			pos -= WeekHours
		}
	}
}

// Profile writes the learned relative posting rate of each hour of the week
// into p (mean 1 over the week). It is a product of smoothed factors, each
// (observed + k) / (expected + k) so that thin evidence shrinks it to 1:
// hour of the day (the week's days pooled), day of the week, and a
// correction for the single hour of the week, which only weighs once there
// are many postings. Neighbouring hours are smoothed ([1 2 1]/4) first.
func (r *RateState) Profile(p *[WeekHours]float64) {
	n, h := sum(&r.Posts), sum(&r.Hours)
	if n <= 0 || h <= 0 {
		for i := range p {
			p[i] = 1
		}
		return
	}
	mean := n / h // postings per observed hour
	var posts, hours [WeekHours]float64
	smooth(r.Posts[:], posts[:])
	smooth(r.Hours[:], hours[:])
	// Hour of the day.
	var dp, dh, day [24]float64
	for i := range WeekHours {
		dp[i%24] += posts[i]
		dh[i%24] += hours[i]
	}
	var sdp, sdh [24]float64
	smooth(dp[:], sdp[:])
	smooth(dh[:], sdh[:])
	for k := range 24 {
		day[k] = (sdp[k] + shrinkDay) / (mean*sdh[k] + shrinkDay)
	}
	// Day of the week, against what the hour-of-day factors expect.
	var week [7]float64
	for d := range 7 {
		obs, exp := 0.0, 0.0
		for k := range 24 {
			obs += posts[d*24+k]
			exp += mean * day[k] * hours[d*24+k]
		}
		week[d] = (obs + shrinkWeek) / (exp + shrinkWeek)
	}
	total := 0.0
	for i := range WeekHours {
		f := day[i%24] * week[i/24]
		f *= (posts[i] + shrinkBin) / (mean*f*hours[i] + shrinkBin)
		p[i] = f
		total += f
	}
	for i := range p {
		p[i] = math.Max(p[i]*WeekHours/total, profileFloor)
	}
}

// smooth writes the circular [1 2 1]/4 smoothing of in into out.
func smooth(in, out []float64) {
	n := len(in)
	for i := range in {
		out[i] = (in[(i+n-1)%n] + 2*in[i] + in[(i+1)%n]) / 4
	}
}

// walk returns how long after t the area under g (a weekly curve, one value
// per hour) reaches area (in value·hours), capped at limit.
func walk(t time.Time, g *[WeekHours]float64, area float64, limit time.Duration) time.Duration {
	week := 0.0
	for _, v := range g {
		week += v
	}
	if week <= 0 || area <= 0 {
		return 0
	}
	hours := 0.0
	if full := math.Floor(area / week); full > 0 { // whole weeks at once
		hours = full * WeekHours
		area -= full * week
	}
	max := limit.Hours()
	pos := hourOfWeek(t)
	for area > 0 && hours < max {
		bin := int(pos) % WeekHours
		step := math.Floor(pos) + 1 - pos // > 0, as in segments
		if a := g[bin] * step; a >= area {
			hours += area / g[bin]
			break
		} else {
			area -= a
		}
		hours += step
		pos += step
		if pos >= WeekHours {
			pos -= WeekHours
		}
	}
	return min(time.Duration(hours*float64(time.Hour)), limit)
}
