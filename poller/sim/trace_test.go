package sim

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestGenerateDeterministic(t *testing.T) {
	a, _ := Generate(GenConfig{Feeds: 30, Seed: 7})
	b, _ := Generate(GenConfig{Feeds: 60, Seed: 7})
	c, _ := Generate(GenConfig{Feeds: 30, Seed: 8})
	for i := range a.Postings {
		if !slices.Equal(a.Postings[i], b.Postings[i]) {
			t.Fatalf("feed %d differs between 30- and 60-feed traces of one seed", i)
		}
	}
	if a.Count() == c.Count() {
		t.Errorf("seeds 7 and 8 give the same count %d", a.Count())
	}
}

// TestGenerateStatistics checks the trace against the published statistics
// it is meant to reproduce.
func TestGenerateStatistics(t *testing.T) {
	tr, models := Generate(GenConfig{Feeds: 1000, Seed: 1})
	cfg := GenConfig{}.withDefaults()
	if tr.End.Sub(tr.Start) != 13*Week {
		t.Fatalf("trace spans %v", tr.End.Sub(tr.Start))
	}
	// Power law x^-0.78 on [1, 4900]: P(X ≥ 91) = (4900^.22 − 91^.22)/(4900^.22 − 1) ≈ 0.69,
	// mean ≈ 1046 postings per feed.
	daily, total := 0, 0
	for i, ps := range tr.Postings {
		if len(ps) >= 91 {
			daily++
		}
		total += len(ps)
		if !slices.IsSorted(ps) {
			t.Fatalf("feed %d postings unsorted", i)
		}
		if len(ps) > 0 && (ps[0] < 0 || ps[len(ps)-1] >= 13*Week) {
			t.Fatalf("feed %d postings outside the trace", i)
		}
	}
	if f := float64(daily) / 1000; f < 0.64 || f > 0.74 {
		t.Errorf("%.2f of feeds post at least daily, want ≈ 0.69", f)
	}
	if m := float64(total) / 1000; m < 900 || m > 1200 {
		t.Errorf("mean %.0f postings per feed, want ≈ 1046", m)
	}
	// Hour-of-day and weekday profile over all postings.
	var hours [24]float64
	var weekday, weekend float64
	for _, ps := range tr.Postings {
		for _, p := range ps {
			ts := tr.Start.Add(p)
			hours[ts.Hour()]++
			switch ts.Weekday() {
			case time.Saturday, time.Sunday:
				weekend++
			default:
				weekday++
			}
		}
	}
	peak := 0
	for h := range hours {
		if hours[h] > hours[peak] {
			peak = h
		}
	}
	if peak < 11 || peak > 15 {
		t.Errorf("busiest hour %d:00, want near 13:00", peak)
	}
	if hours[3] > hours[13]/3 {
		t.Errorf("03:00 has %v postings vs %v at 13:00: no daily cycle", hours[3], hours[13])
	}
	// Per-day ratio, weighted by feed volume: between the configured bounds.
	if r := (weekend / 2) / (weekday / 5); r < cfg.WeekendMin || r > cfg.WeekendMax {
		t.Errorf("weekend/weekday daily ratio %.2f outside [%v, %v]", r, cfg.WeekendMin, cfg.WeekendMax)
	}
	// Bursts: the share of gaps under an hour exceeds what the same feed's
	// rate would give without them, for a busy-but-not-saturated feed set.
	var short, gaps, expected float64
	for i, ps := range tr.Postings {
		if models[i].Count < 50 || models[i].Count > 300 {
			continue
		}
		rate := models[i].Count / (13 * 7 * 24) // per hour, on average
		for k := 1; k < len(ps); k++ {
			gaps++
			if ps[k]-ps[k-1] < time.Hour {
				short++
			}
		}
		expected += float64(len(ps)-1) * (1 - math.Exp(-3*rate)) // generous: 3× the mean rate at peak
	}
	if short <= expected {
		t.Errorf("%v of %v gaps under 1 h, no more than %v without bursts", short, gaps, expected)
	}
}

func TestCSVRoundTrip(t *testing.T) {
	tr, _ := Generate(GenConfig{Feeds: 5, Seed: 4, Duration: 3 * Week})
	var buf bytes.Buffer
	if err := WriteCSV(&buf, tr); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCSV(&buf, tr.Start, tr.End)
	if err != nil {
		t.Fatal(err)
	}
	if got.Count() != tr.Count() {
		t.Fatalf("read %d postings, wrote %d", got.Count(), tr.Count())
	}
	k := 0
	for i, id := range tr.IDs {
		if len(tr.Postings[i]) == 0 {
			continue // a silent feed has no line
		}
		if got.IDs[k] != id {
			t.Fatalf("feed %d is %q, want %q", k, got.IDs[k], id)
		}
		for j, p := range tr.Postings[i] {
			if d := p.Truncate(time.Second) - got.Postings[k][j]; d != 0 {
				t.Fatalf("feed %s posting %d off by %v", id, j, d)
			}
		}
		k++
	}
}

func TestReadCSV(t *testing.T) {
	tests := []struct {
		name, in string
		feeds    int
		counts   []int
		start    string
		err      string
	}{
		{
			name:   "header, two feeds, unsorted",
			in:     "feed_id,time\nb,2026-02-03T10:00:00Z\na,2026-02-01T09:30:00+01:00\nb,2026-02-02T10:00:00Z\n",
			feeds:  2,
			counts: []int{2, 1},
			start:  "2026-02-01T00:00:00Z",
		},
		{name: "bad time", in: "a,yesterday\n", err: "line 1"},
		{name: "too many fields", in: "a,2026-02-01T00:00:00Z,x\n", err: "read trace"},
		{name: "empty", in: "", err: "no postings"},
		{name: "header only", in: "feed_id,time\n", err: "no postings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := ReadCSV(strings.NewReader(tt.in), time.Time{}, time.Time{})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tr.Len() != tt.feeds {
				t.Fatalf("%d feeds, want %d", tr.Len(), tt.feeds)
			}
			for i, c := range tt.counts {
				if len(tr.Postings[i]) != c || !slices.IsSorted(tr.Postings[i]) {
					t.Errorf("feed %s: %v", tr.IDs[i], tr.Postings[i])
				}
			}
			if s := tr.Start.Format(time.RFC3339); s != tt.start {
				t.Errorf("start %s, want %s", s, tt.start)
			}
		})
	}
}

func FuzzReadCSV(f *testing.F) {
	f.Add("feed_id,time\na,2026-02-01T09:30:00Z\n")
	f.Add("a,2026-02-01T09:30:00+01:00\nb,2026-01-01T00:00:00Z\n")
	f.Add("\"a\",\"x\"\n")
	f.Fuzz(func(t *testing.T, in string) {
		tr, err := ReadCSV(strings.NewReader(in), time.Time{}, time.Time{})
		if err != nil {
			return
		}
		span := tr.End.Sub(tr.Start)
		for _, ps := range tr.Postings {
			for _, p := range ps {
				if p < 0 || p >= span {
					t.Fatalf("posting %v outside [0, %v)", p, span)
				}
			}
		}
	})
}
