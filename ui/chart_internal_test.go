package ui

import (
	"fmt"
	"github.com/dynamo-rss/dynamo/api"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// TestPollClass checks how outcomes group on the charts: a 304 is a poll
// that found nothing new, anything that yielded no document a failure.
func TestPollClass(t *testing.T) {
	for outcome, want := range map[string]string{
		"changed": classChanged, "unchanged": classUnchanged, "not-modified": classUnchanged,
		"error": classError, "not-annotated": classError, "robots-denied": classError, "disk_full": classError, "": classError,
	} {
		if got := pollClass(outcome); got != want {
			t.Errorf("pollClass(%q) = %q, want %q", outcome, got, want)
		}
	}
}

// TestChartSeries checks what a history becomes on the chart, value by
// value: the marks by class at the wait after each poll (one second at
// least), τ only where there is one, the versions only once there are
// some and continued to now, and the axes' ranges with their margins.
func TestChartSeries(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	x := func(t time.Time) float64 { return float64(t.Unix()) }

	t.Run("empty", func(t *testing.T) {
		cs := newChartSeries(nil, now)
		if cs.minX != x(now.Add(-24*time.Hour)) || cs.maxX != x(now) {
			t.Errorf("x axis %v..%v, want the last day up to now", cs.minX, cs.maxX)
		}
		if cs.minY != 30 || cs.maxY != 7200 {
			t.Errorf("y axis %v..%v, want 30..7200 (a minute to an hour, with margins)", cs.minY, cs.maxY)
		}
		if len(cs.tau) != 0 || len(cs.versions) != 0 || len(cs.marks) != 0 {
			t.Errorf("series from no polls: %+v", cs)
		}
	})

	t.Run("polls", func(t *testing.T) {
		t0 := now.Add(-2 * time.Hour)
		h := []api.PollRecord{
			{Time: t0, Outcome: "changed", Wait: 0, Versions: 1},
			{Time: t0.Add(time.Hour), Outcome: "not-modified", Wait: 10 * time.Minute, Tau: 30 * time.Minute, Versions: 1},
			{Time: t0.Add(90 * time.Minute), Outcome: "robots-denied", Wait: 2 * time.Hour},
		}
		cs := newChartSeries(h, now)
		want := map[string][]float64{
			classChanged:   {x(t0), 1},
			classUnchanged: {x(t0.Add(time.Hour)), 600},
			classError:     {x(t0.Add(90 * time.Minute)), 7200},
		}
		for class, xy := range want {
			m := cs.marks[class]
			if len(m) != 1 || m[0].X != xy[0] || m[0].Y != xy[1] {
				t.Errorf("%s marks %v, want one at %v", class, m, xy)
			}
		}
		if len(cs.tau) != 1 || cs.tau[0].X != x(t0.Add(time.Hour)) || cs.tau[0].Y != 1800 {
			t.Errorf("τ %v, want one point at the second poll, 1800 s", cs.tau)
		}
		wantV := [][2]float64{{x(t0), 1}, {x(t0.Add(time.Hour)), 1}, {x(now), 1}}
		if len(cs.versions) != len(wantV) {
			t.Fatalf("versions %v, want %v", cs.versions, wantV)
		}
		for i, v := range wantV {
			if cs.versions[i].X != v[0] || cs.versions[i].Y != v[1] {
				t.Errorf("versions[%d] = %v, want %v", i, cs.versions[i], v)
			}
		}
		if cs.maxX != x(now) || cs.minX != x(now)-7200*1.04 {
			t.Errorf("x axis %v..%v, want %v..%v", cs.minX, cs.maxX, x(now)-7200*1.04, x(now))
		}
		if cs.minY != 1 || cs.maxY != 14400 {
			t.Errorf("y axis %v..%v, want 1..14400 (the floor of one second; twice the longest wait)", cs.minY, cs.maxY)
		}
	})

	t.Run("one short poll", func(t *testing.T) {
		cs := newChartSeries([]api.PollRecord{{Time: now.Add(-time.Minute), Outcome: "unchanged", Wait: 3 * time.Second}}, now)
		if cs.minX != x(now)-600*1.04 {
			t.Errorf("x axis from %v, want ten minutes (and the margin) before now, %v", cs.minX, x(now)-600*1.04)
		}
		if cs.minY != 1.5 || cs.maxY != 6 {
			t.Errorf("y axis %v..%v, want 1.5..6", cs.minY, cs.maxY)
		}
	})

	t.Run("a poll past now", func(t *testing.T) {
		later := now.Add(time.Hour)
		cs := newChartSeries([]api.PollRecord{{Time: now.Add(-time.Hour), Outcome: "changed", Wait: time.Minute, Versions: 2}, {Time: later, Outcome: "changed", Wait: time.Minute, Versions: 3}}, now)
		if cs.maxX != x(later) || cs.minX != x(later)-7200*1.04 {
			t.Errorf("x axis %v..%v, want it to end at the later poll %v", cs.minX, cs.maxX, x(later))
		}
		if n := len(cs.versions); n != 3 || cs.versions[n-1].X != x(later) || cs.versions[n-1].Y != 3 {
			t.Errorf("versions %v, want the last count continued to the axis' end", cs.versions)
		}
	})
}

// TestTimeFormat checks the time axis' label layout at each span's bounds.
func TestTimeFormat(t *testing.T) {
	for span, want := range map[float64]string{
		36 * 3600: "15:04", 36*3600 + 1: "Jan 2 15:04",
		10 * 24 * 3600: "Jan 2 15:04", 10*24*3600 + 1: "Jan 2",
	} {
		cs := chartSeries{minX: 1e9, maxX: 1e9 + span}
		if got := timeFormat(cs); got != want {
			t.Errorf("span %v s: %q, want %q", span, got, want)
		}
	}
}

// labels lists ticks as value:label.
func labels(ticks []plot.Tick) string {
	var b strings.Builder
	for i, tk := range ticks {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%v:%s", tk.Value, tk.Label)
	}
	return b.String()
}

// TestDurationTicks checks the wait axis' ticks exactly: every candidate
// within the range, both ends included; only the coarse ones labelled from
// eight ticks with three coarse ones; every other coarse one past seven.
func TestDurationTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{15, 120, "15:15s 30:30s 60:1m 120:2m"},
		{16, 119, "30:30s 60:1m"},
		{1, 60, "1:1s 2:2s 5:5s 10:10s 15:15s 30:30s 60:1m"},
		{1, 120, "1:1s 2: 5: 10:10s 15: 30: 60:1m 120:"},
		{1, 3 * 3600, "1:1s 2: 5: 10:10s 15: 30: 60:1m 120: 300:5m 600: 900:15m 1800: 3600:1h 7200: 10800:3h"},
		{1, 12 * 3600, "1:1s 2: 5: 10: 15: 30: 60:1m 120: 300: 600: 900:15m 1800: 3600: 7200: 10800:3h 21600: 43200:"},
		{1, 365 * 86400, "1:1s 2: 5: 10: 15: 30: 60:1m 120: 300: 600: 900:15m 1800: 3600: 7200: 10800:3h 21600: 43200: " +
			"86400:1d 172800: 259200: 604800:7d 1.2096e+06: 2.4192e+06: 7.8624e+06: 3.1536e+07:365d"},
	} {
		if got := labels(durationTicks{}.Ticks(c.lo, c.hi)); got != c.want {
			t.Errorf("%v..%v s:\n got %s\nwant %s", c.lo, c.hi, got, c.want)
		}
	}
}

// TestTimeTicks checks the step the time axis takes (the first giving six
// steps or fewer) and its ticks, the axis' end included.
func TestTimeTicks(t *testing.T) {
	tt := timeTicks{format: "15:04"}
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 360, "0:00:00 60:00:01 120:00:02 180:00:03 240:00:04 300:00:05 360:00:06"},
		{0, 361, "0:00:00 120:00:02 240:00:04 360:00:06"},
		{30, 390, "60:00:01 120:00:02 180:00:03 240:00:04 300:00:05 360:00:06"},
		{0, 6 * 3600, "0:00:00 3600:01:00 7200:02:00 10800:03:00 14400:04:00 18000:05:00 21600:06:00"},
	} {
		if got := labels(tt.Ticks(c.lo, c.hi)); got != c.want {
			t.Errorf("%v..%v:\n got %s\nwant %s", c.lo, c.hi, got, c.want)
		}
	}
	// Each step in turn: the span of six of it takes it, a second more the
	// next one.
	day := 24 * time.Hour
	steps := []time.Duration{time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, day, 2 * day, 7 * day, 14 * day, 28 * day, 91 * day, 365 * day}
	for i, s := range steps {
		got := tt.Ticks(0, 6*s.Seconds())
		if len(got) != 7 || got[1].Value != s.Seconds() {
			t.Errorf("a span of 6×%v: %s, want 7 ticks %v apart", s, labels(got), s)
		}
		if i+1 < len(steps) {
			if got := tt.Ticks(0, 6*s.Seconds()+1); len(got) < 2 || got[1].Value != steps[i+1].Seconds() {
				t.Errorf("a span of 6×%v + 1 s: %s, want ticks %v apart", s, labels(got), steps[i+1])
			}
		}
	}
	// Longer than six years: a tick a year, the longest step.
	year := (365 * 24 * time.Hour).Seconds()
	if got := tt.Ticks(0, 10*year); len(got) != 11 || got[1].Value != year || got[10].Value != 10*year {
		t.Errorf("ten years: %s, want 11 ticks a year apart", labels(got))
	}
}

// TestCountTicks checks the count axis' 1-2-5 steps, each branch.
func TestCountTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 5, "0:0 1:1 2:2 3:3 4:4 5:5"},
		{0, 6, "0:0 2:2 4:4 6:6"},
		{3, 9, "4:4 6:6 8:8"},
		{0, 11, "0:0 5:5 10:10"},
		{0, 26, "0:0 10:10 20:20"},
		{0, 101, "0:0 50:50 100:100"},
		{0, 251, "0:0 100:100 200:200"},
	} {
		if got := labels(countTicks{}.Ticks(c.lo, c.hi)); got != c.want {
			t.Errorf("%v..%v:\n got %s\nwant %s", c.lo, c.hi, got, c.want)
		}
	}
}

// TestMarkStyle checks that the classes differ by shape and size, not
// colour alone.
func TestMarkStyle(t *testing.T) {
	r := vg.Points(2)
	for class, want := range map[string]struct {
		radius vg.Length
		shape  draw.GlyphDrawer
	}{
		classChanged:   {r * 1.3, draw.CircleGlyph{}},
		classError:     {r * 1.3, draw.CrossGlyph{}},
		classUnchanged: {r, draw.RingGlyph{}},
	} {
		g := markStyle(class, r)
		if g.Radius != want.radius || g.Shape != want.shape {
			t.Errorf("%s: radius %v shape %T, want %v %T", class, g.Radius, g.Shape, want.radius, want.shape)
		}
	}
}

// svgTexts lists the texts of an SVG's <text> elements.
func svgTexts(svg string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<text[^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestSVGHTML checks the inlined markup: no prolog, the class and label
// escaped on the root element.
func TestSVGHTML(t *testing.T) {
	got, err := svgHTML(vgsvg.New(vg.Points(10), vg.Points(10)), `a"b`, `<polls> & "τ"`)
	if err != nil {
		t.Fatal(err)
	}
	want := `<svg class="a&#34;b" role="img" aria-label="&lt;polls&gt; &amp; &#34;τ&#34;"`
	if !strings.HasPrefix(string(got), want) || strings.Count(string(got), "<svg") != 1 || strings.Contains(string(got), "<?xml") {
		t.Errorf("svgHTML = %.200s…, want it to start %s", got, want)
	}
}

// TestPollChartContents checks the big chart's legend, label and count
// axis, and the sparkline's window and label.
func TestPollChartContents(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	h := make([]api.PollRecord, 10)
	for i := range h {
		h[i] = api.PollRecord{Time: now.Add(time.Duration(i-10) * time.Hour), Outcome: "changed", Wait: time.Hour, Tau: time.Hour, Versions: i + 1}
	}
	svg, err := pollChart(h, now)
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(string(svg))
	for _, want := range []string{"estimate τ", "changed poll", "0", "5", "10"} {
		if !slices.Contains(texts, want) {
			t.Errorf("chart texts %q lack %q", texts, want)
		}
	}
	// Ten versions: the count axis goes to 12 (15 % of room, rounded up),
	// ticks every 5.
	for _, absent := range []string{"unchanged poll", "error poll", "2", "8", "15"} {
		if slices.Contains(texts, absent) {
			t.Errorf("chart texts %q have %q", texts, absent)
		}
	}
	if n := strings.Count(strings.Join(texts, "\n"), "versions stored"); n != 2 {
		t.Errorf(`"versions stored" %d times, want the axis and the legend`, n)
	}
	if !strings.Contains(string(svg), `aria-label="Chart of the last 10 polls:`) {
		t.Errorf("chart label: %.300s", svg)
	}

	// No versions: the count axis is 0..1, no versions line in the legend.
	svg, err = pollChart([]api.PollRecord{{Time: now.Add(-time.Hour), Outcome: "error", Wait: time.Hour}}, now)
	if err != nil {
		t.Fatal(err)
	}
	texts = svgTexts(string(svg))
	if !slices.Contains(texts, "1") || !slices.Contains(texts, "error poll") || slices.Contains(texts, "estimate τ") {
		t.Errorf("chart of one failed poll: texts %q", texts)
	}
	if n := strings.Count(strings.Join(texts, "\n"), "versions stored"); n != 1 {
		t.Errorf(`"versions stored" %d times with no versions, want the axis only`, n)
	}

	// The sparkline shows the last 48 polls.
	long := testHistory(60, now)
	svg, err = sparkline(long)
	if err != nil {
		t.Fatal(err)
	}
	var changed, failed int
	for _, r := range long[12:] {
		switch pollClass(r.Outcome) {
		case classChanged:
			changed++
		case classError:
			failed++
		}
	}
	want := fmt.Sprintf(`aria-label="last 48 polls: %d changed, %d failed"`, changed, failed)
	if !strings.Contains(string(svg), want) {
		t.Errorf("sparkline: %.200s…, want %s", svg, want)
	}

	// A resource that has not polled yet has an empty one.
	svg, err = sparkline(nil)
	if err != nil || !strings.Contains(string(svg), `aria-label="last 0 polls: 0 changed, 0 failed"`) {
		t.Errorf("sparkline of no polls: %.200s…, %v", svg, err)
	}
}

// TestSparklineCache: a resource's cached sparkline is drawn again when
// its poll history changed, by one poll more or by a window that moved on
// (as long, ending later): the home page never shows an old chart.
func TestSparklineCache(t *testing.T) {
	p := &people{sparks: sparkCache{m: map[string]sparkEntry{}}}
	t0 := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	polls := func(from, n int, outcome string) []api.PollRecord {
		var h []api.PollRecord
		for i := from; i < from+n; i++ {
			h = append(h, api.PollRecord{Time: t0.Add(time.Duration(i) * time.Hour), Outcome: outcome, Wait: time.Hour, Versions: i})
		}
		return h
	}
	for _, step := range []struct {
		name string
		h    []api.PollRecord
	}{
		{"first", polls(0, 10, "unchanged")},
		{"the same history", polls(0, 10, "unchanged")},
		{"one poll more", append(polls(0, 10, "unchanged"), api.PollRecord{Time: t0.Add(10 * time.Hour), Outcome: "changed", Wait: time.Hour, Versions: 11})},
		{"the window moved on", polls(5, 11, "changed")},
	} {
		got, err := p.sparkline("news", step.h)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sparkline(step.h)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: the cached sparkline is another history's", step.name)
		}
	}
}
