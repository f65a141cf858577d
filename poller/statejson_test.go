package poller

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// randomText mixes ASCII, markup, quotes, control characters, non-ASCII
// and invalid UTF-8: what an ETag, an error or a diagnostic may hold.
func randomText(rng *rand.Rand) string {
	parts := []string{"", "a", `"q"`, `\`, "\n", "\t", "\x00", "\x1f", "<b>&amp;</b>", "é", "日本", "\u2028", "\xff", "\xe2\x82", "W/\"abc\"", "Mon, 02 Jan 2006 15:04:05 GMT", "\x80", "\x7f"}
	var sb strings.Builder
	for range rng.IntN(5) {
		sb.WriteString(parts[rng.IntN(len(parts))])
	}
	return sb.String()
}

func randomTime(rng *rand.Rand) time.Time {
	if rng.IntN(4) == 0 {
		return time.Time{}
	}
	zones := []*time.Location{time.UTC, time.FixedZone("", 2*3600), time.FixedZone("", -5*3600-1800)}
	return time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)).In(zones[rng.IntN(len(zones))])
}

func randomState(rng *rand.Rand) persisted {
	p := persisted{
		URL:         randomText(rng),
		Kind:        []string{KindFlat, KindSmart, KindBudget, ""}[rng.IntN(4)],
		LastPoll:    randomTime(rng),
		NextPoll:    randomTime(rng),
		LastOutcome: randomText(rng),
		LastError:   randomText(rng),
		Polls:       rng.Int64(),
		Changes:     rng.Int64N(1000),
		Errors:      rng.Int64N(3) - 1,
		Failures:    rng.IntN(3),
		BodyHash:    rng.Uint64() * uint64(rng.IntN(2)),
		Extraction:  rng.Uint64() * uint64(rng.IntN(2)),
		PolicyKey:   rng.Uint64() * uint64(rng.IntN(2)),
		Since:       randomTime(rng),
		HistorySeq:  rng.Uint64N(3) * rng.Uint64(),
		Progress:    rng.IntN(2) == 0,
	}
	p.HistoryVersions = rng.IntN(3) * rng.IntN(1e6)
	p.Validators = validators{ETag: randomText(rng), LastModified: randomText(rng)}
	for range rng.IntN(3) {
		p.Diagnostics = append(p.Diagnostics, randomText(rng))
	}
	third := 1.0
	third /= 3 // a variable: constant arithmetic would round 0.1 + 0.2 to 0.3 exactly
	alphas := []float64{0, 0.5, 1e-7, 3e21, -2.5, 0.1 + 0.2, 1e-300, third, third * 1e-9, third * 1e22, -third}
	p.Policy = PolicyState{
		Tau:        time.Duration(rng.Int64N(1e15)),
		Alpha:      alphas[rng.IntN(len(alphas))],
		LastUpdate: randomTime(rng),
		Published:  rng.IntN(2) == 0,
		Wait:       time.Duration(rng.Int64N(1e15)) - 1e14,
		Unchanged:  rng.IntN(3),
		Kind:       []string{KindFlat, KindSmart, ""}[rng.IntN(3)],
	}
	for range rng.IntN(4) {
		p.Policy.Intervals = append(p.Policy.Intervals, time.Duration(rng.Int64N(1e15)))
	}
	if rng.IntN(4) == 0 {
		p.Policy.Rate = &RateState{At: randomTime(rng)}
		p.Policy.Rate.Posts[rng.IntN(WeekHours)] = rng.Float64()
	}
	if rng.IntN(3) > 0 {
		p.Last = &lastVersion{Newest: randomTime(rng)}
		for range rng.IntN(4) {
			p.Last.Items = append(p.Last.Items, rng.Uint64())
		}
	}
	return p
}

// The hand-built encoding decodes to exactly what encoding/json's does.
func TestAppendStateAsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 23))
	for i := range 20000 {
		p := randomState(rng)
		ours, err := p.marshalWith(nil)
		if err != nil {
			t.Fatalf("state %d: %v", i, err)
		}
		c := p
		c.V = stateVersion
		ref, err := json.Marshal(&c)
		if err != nil {
			t.Fatalf("state %d: encoding/json: %v", i, err)
		}
		if !json.Valid(ours) || !utf8.Valid(ours) {
			t.Fatalf("state %d: invalid JSON or UTF-8 %q", i, ours)
		}
		var a, b persisted
		if err := json.Unmarshal(ours, &a); err != nil {
			t.Fatalf("state %d: %v\n%s", i, err, ours)
		}
		if err := json.Unmarshal(ref, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("state %d decodes differently:\nours %s\nref  %s", i, ours, ref)
		}
	}
	// The first and last years JSON times have.
	for _, y := range []int{0, 9999} {
		p := persisted{LastPoll: time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)}
		ours, err := p.marshalWith(nil)
		var a persisted
		if err == nil {
			err = json.Unmarshal(ours, &a)
		}
		if err != nil || !a.LastPoll.Equal(p.LastPoll) {
			t.Errorf("year %d: %s, %v; decoded %v", y, ours, err, a.LastPoll)
		}
	}
	// What encoding/json refuses, so does the hand-built encoder.
	for _, p := range []persisted{
		{Policy: PolicyState{Alpha: nanValue()}},
		{LastPoll: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{LastPoll: time.Date(-1, 12, 31, 0, 0, 0, 0, time.UTC)},
	} {
		if _, err := p.marshalWith(nil); err == nil {
			t.Errorf("%+v encoded; want an error", p)
		}
	}
}

func nanValue() float64 { var z float64; return z / z }
