package ui

import (
	"bytes"
	"context"
	"fmt"
	"github.com/dynamo-rss/dynamo/internal/humantime"
	"html/template"
	"image/color"
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/dynamo-rss/dynamo/api"
)

// pollHistory returns id's recent polls, nil when the poller keeps none.
func (s *Server) pollHistory(ctx context.Context, id string) []api.PollRecord {
	ph, ok := s.opts.Poller.(api.PollHistory)
	if !ok {
		return nil
	}
	h, _ := ph.History(ctx, id)
	return h
}

// Poll classes the charts tell apart.
const (
	classChanged   = "changed"
	classUnchanged = "unchanged"
	classError     = "error"
)

// pollClass groups an outcome into what the charts show: a new version, a
// poll that found nothing new (a 304 included), or a poll that failed to
// yield a document.
func pollClass(outcome string) string {
	switch outcome {
	case "changed":
		return classChanged
	case "unchanged", "not-modified":
		return classUnchanged
	default:
		return classError
	}
}

// Colours and shapes of the chart marks: distinct by colour and by shape, so
// they read in grey scale and for colour-blind people too.
var (
	colorChanged   = color.RGBA{R: 0x1b, G: 0x7a, B: 0x3a, A: 0xff}
	colorUnchanged = color.RGBA{R: 0x6b, G: 0x74, B: 0x85, A: 0xff}
	colorError     = color.RGBA{R: 0xb0, G: 0x00, B: 0x20, A: 0xff}
	colorTau       = color.RGBA{R: 0xb3, G: 0x47, B: 0x0f, A: 0xff}
	colorVersions  = color.RGBA{R: 0x1f, G: 0x4e, B: 0x9c, A: 0xff}
)

// chartSeries is a poll history split into what is drawn.
type chartSeries struct {
	marks    map[string]plotter.XYs // by poll class: x unix seconds, y the wait after the poll (seconds)
	tau      plotter.XYs
	versions plotter.XYs
	minX     float64
	maxX     float64
	minY     float64
	maxY     float64
}

// minChartWait is the floor of the y axis (log scale): one second.
const minChartWait = 1.0

func newChartSeries(h []api.PollRecord, now time.Time) chartSeries {
	cs := chartSeries{marks: map[string]plotter.XYs{}, minY: math.Inf(1), maxY: math.Inf(-1)}
	y := func(d time.Duration) float64 { return math.Max(d.Seconds(), minChartWait) }
	for _, r := range h {
		x := float64(r.Time.Unix())
		w := y(r.Wait)
		c := pollClass(r.Outcome)
		cs.marks[c] = append(cs.marks[c], plotter.XY{X: x, Y: w})
		cs.minY, cs.maxY = math.Min(cs.minY, w), math.Max(cs.maxY, w)
		if r.Tau > 0 {
			t := y(r.Tau)
			cs.tau = append(cs.tau, plotter.XY{X: x, Y: t})
			cs.minY, cs.maxY = math.Min(cs.minY, t), math.Max(cs.maxY, t)
		}
		if r.Versions > 0 {
			cs.versions = append(cs.versions, plotter.XY{X: x, Y: float64(r.Versions)})
		}
	}
	// The time axis ends at now (or at a poll the clock has not reached:
	// an injected or skewed clock), never past it; a margin on the left
	// keeps the first mark off the axis.
	switch {
	case len(h) == 0:
		cs.minX, cs.maxX = float64(now.Add(-24*time.Hour).Unix()), float64(now.Unix())
	default:
		cs.maxX = math.Max(float64(h[len(h)-1].Time.Unix()), float64(now.Unix()))
		span := math.Max(cs.maxX-float64(h[0].Time.Unix()), 600) // at least ten minutes wide
		cs.minX = cs.maxX - span*1.04
	}
	if math.IsInf(cs.minY, 0) {
		cs.minY, cs.maxY = 60, 3600
	}
	// Room above and below the data on the log scale.
	cs.minY, cs.maxY = math.Max(cs.minY/2, minChartWait), cs.maxY*2
	// The versions line continues to now: the count still holds.
	if n := len(cs.versions); n > 0 {
		cs.versions = append(cs.versions, plotter.XY{X: cs.maxX, Y: cs.versions[n-1].Y})
	}
	return cs
}

// timeFormat is the layout of the time axis' labels for the chart's span.
func timeFormat(cs chartSeries) string {
	switch span := cs.maxX - cs.minX; {
	case span <= 36*3600:
		return "15:04"
	case span <= 10*24*3600:
		return "Jan 2 15:04"
	default:
		return "Jan 2"
	}
}

// durationTicks labels a log-scale axis of seconds with round durations:
// several of them whatever the range (1-2-5 steps within each unit), the
// labels thinned to the coarser ones when there are many.
type durationTicks struct{}

// tickDurations are the candidate ticks of durationTicks; the coarse ones
// keep their label when the axis is crowded.
var tickDurations = []struct {
	d      time.Duration
	coarse bool
}{
	{time.Second, true}, {2 * time.Second, false}, {5 * time.Second, false}, {10 * time.Second, true}, {15 * time.Second, false}, {30 * time.Second, false},
	{time.Minute, true}, {2 * time.Minute, false}, {5 * time.Minute, true}, {10 * time.Minute, false}, {15 * time.Minute, true}, {30 * time.Minute, false},
	{time.Hour, true}, {2 * time.Hour, false}, {3 * time.Hour, true}, {6 * time.Hour, false}, {12 * time.Hour, true},
	{24 * time.Hour, true}, {2 * 24 * time.Hour, false}, {3 * 24 * time.Hour, true}, {7 * 24 * time.Hour, true}, {14 * 24 * time.Hour, false},
	{28 * 24 * time.Hour, true}, {91 * 24 * time.Hour, false}, {365 * 24 * time.Hour, true},
}

func (durationTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	coarse := 0
	for _, c := range tickDurations {
		if v := c.d.Seconds(); v >= lo && v <= hi {
			ticks = append(ticks, plot.Tick{Value: v, Label: humantime.Duration(c.d)})
			if c.coarse {
				coarse++
			}
		}
	}
	if len(ticks) > 7 && coarse >= 3 { // crowded: label the coarse ones only
		i := 0
		for _, c := range tickDurations {
			if v := c.d.Seconds(); v >= lo && v <= hi {
				if !c.coarse {
					ticks[i].Label = ""
				}
				i++
			}
		}
	}
	labelled := 0
	for i := range ticks {
		if ticks[i].Label != "" {
			if labelled%2 == 1 && coarse > 7 { // a very wide range: every other coarse one
				ticks[i].Label = ""
			}
			labelled++
		}
	}
	return ticks
}

// timeTicks labels a time axis (unix seconds) at round times: every 1, 2,
// 5, 10, 15 or 30 minutes, 1, 2, 3, 6 or 12 hours, 1, 2 or 7 days…, in UTC,
// the step that gives four to seven labels.
type timeTicks struct{ format string }

var timeSteps = []time.Duration{
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 2 * 24 * time.Hour, 7 * 24 * time.Hour, 14 * 24 * time.Hour, 28 * 24 * time.Hour, 91 * 24 * time.Hour, 365 * 24 * time.Hour,
}

func (tt timeTicks) Ticks(lo, hi float64) []plot.Tick {
	step := timeSteps[len(timeSteps)-1].Seconds()
	for _, s := range timeSteps {
		if (hi-lo)/s.Seconds() <= 6 {
			step = s.Seconds()
			break
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: time.Unix(int64(v), 0).UTC().Format(tt.format)})
	}
	return ticks
}

// countTicks labels an axis of counts with whole numbers at 1-2-5 steps.
type countTicks struct{}

func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	step := 1.0
	for (hi-lo)/step > 5 {
		switch m := step / math.Pow(10, math.Floor(math.Log10(step))); m {
		case 1:
			step *= 2
		case 2:
			step *= 2.5
		default:
			step *= 2
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatInt(int64(v), 10)})
	}
	return ticks
}

// markStyle is the glyph of a poll class.
func markStyle(class string, radius vg.Length) draw.GlyphStyle {
	switch class {
	case classChanged:
		return draw.GlyphStyle{Color: colorChanged, Radius: radius * 1.3, Shape: draw.CircleGlyph{}}
	case classError:
		return draw.GlyphStyle{Color: colorError, Radius: radius * 1.3, Shape: draw.CrossGlyph{}}
	default:
		return draw.GlyphStyle{Color: colorUnchanged, Radius: radius, Shape: draw.RingGlyph{}}
	}
}

// pollPlot is the plot of the polls (marks) and τ (a line) over time.
func pollPlot(cs chartSeries, radius vg.Length, legend *plot.Legend) (*plot.Plot, error) {
	p := plot.New()
	p.X.Min, p.X.Max = cs.minX, cs.maxX
	p.Y.Min, p.Y.Max = cs.minY, cs.maxY
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = durationTicks{}
	p.X.Tick.Marker = timeTicks{format: "Jan 2 15:04"}
	if len(cs.tau) > 0 {
		l, err := plotter.NewLine(cs.tau)
		if err != nil {
			return nil, fmt.Errorf("τ line: %w", err)
		}
		l.Color, l.Width, l.StepStyle = colorTau, vg.Points(1.5), plotter.PostStep
		p.Add(l)
		if legend != nil {
			legend.Add("estimate τ", l)
		}
	}
	for _, class := range []string{classUnchanged, classChanged, classError} {
		xys := cs.marks[class]
		if len(xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, fmt.Errorf("%s marks: %w", class, err)
		}
		sc.GlyphStyle = markStyle(class, radius)
		p.Add(sc)
		if legend != nil {
			legend.Add(class+" poll", sc)
		}
	}
	return p, nil
}

// svgHTML turns a vgsvg canvas into markup to inline in a page: without the
// XML prolog, scaled by CSS through its viewBox, labelled for screen readers.
func svgHTML(c *vgsvg.Canvas, class, label string) (template.HTML, error) {
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", fmt.Errorf("write svg: %w", err)
	}
	out := buf.String()
	i := strings.Index(out, "<svg")
	if i < 0 {
		return "", fmt.Errorf("write svg: no <svg> element")
	}
	out = out[i:]
	attrs := fmt.Sprintf(`<svg class="%s" role="img" aria-label="%s"`, template.HTMLEscapeString(class), template.HTMLEscapeString(label))
	return template.HTML(attrs + out[len("<svg"):]), //nolint:gosec // gonum's own SVG; the only text in it is escaped above and in the tick labels it writes
		nil
}

// pollChart draws a resource's polls over the history h: on top, each poll
// as a mark at the wait chosen after it (changed, unchanged, error) and τ as
// a line, on a log scale of durations; below, the versions stored; a legend
// on the right.
func pollChart(h []api.PollRecord, now time.Time) (template.HTML, error) {
	const (
		width, height = 720, 340 // points; CSS scales the SVG to the page
		legendWidth   = 130
	)
	cs := newChartSeries(h, now)
	legend := plot.NewLegend()
	top, err := pollPlot(cs, vg.Points(2.5), &legend)
	if err != nil {
		return "", err
	}
	top.Title.Text = "Polls and the interval estimate τ"
	top.Y.Label.Text = "wait after poll"
	top.X.Tick.Marker = timeTicks{format: timeFormat(cs)}

	bottom := plot.New()
	bottom.X.Min, bottom.X.Max = cs.minX, cs.maxX
	bottom.X.Tick.Marker = timeTicks{format: timeFormat(cs)}
	bottom.Y.Tick.Marker = countTicks{}
	bottom.X.Label.Text = "UTC"
	bottom.Y.Label.Text = "versions stored"
	bottom.Y.Min = 0
	if len(cs.versions) > 0 {
		l, err := plotter.NewLine(cs.versions)
		if err != nil {
			return "", fmt.Errorf("versions line: %w", err)
		}
		l.Color, l.Width, l.StepStyle = colorVersions, vg.Points(1.5), plotter.PostStep
		bottom.Add(l)
		legend.Add("versions stored", l)
		bottom.Y.Max = math.Max(math.Ceil(bottom.Y.Max*1.15), 1)
	} else {
		bottom.Y.Max = 1
	}
	bottom.Add(plotter.NewGrid())

	c := vgsvg.New(vg.Points(width), vg.Points(height))
	dc := draw.New(c)
	plots := draw.Crop(dc, 0, -legendWidth, 0, 0)
	tiles := plot.Align([][]*plot.Plot{{top}, {bottom}}, draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Points(4)}, plots)
	top.Draw(tiles[0][0])
	bottom.Draw(tiles[1][0])
	legend.Top, legend.Left = true, true
	legend.Padding = vg.Points(4)
	legend.Draw(draw.Crop(dc, width-legendWidth+8, 0, 0, -24))
	label := fmt.Sprintf("Chart of the last %d polls: changed, unchanged and failed polls, the estimate τ and the versions stored", len(h))
	return svgHTML(c, "chart", label)
}

// sparklinePolls bounds the polls a sparkline shows.
const sparklinePolls = 48

// sparkline draws a resource's recent polls small, for the list on /: the
// marks and the τ line of the big chart, without axes, from the first to the
// last of those polls (so that it changes only when a poll is added).
func sparkline(h []api.PollRecord) (template.HTML, error) {
	if len(h) > sparklinePolls {
		h = h[len(h)-sparklinePolls:]
	}
	var end time.Time
	if len(h) > 0 {
		end = h[len(h)-1].Time
	}
	cs := newChartSeries(h, end)
	p, err := pollPlot(cs, vg.Points(1.6), nil)
	if err != nil {
		return "", err
	}
	p.HideAxes()
	// No padding: the marks fill the box (the axes' default padding would leave
	// a small sparkline in the middle of an empty one).
	p.X.Padding, p.Y.Padding = vg.Points(2), vg.Points(2)
	c := vgsvg.New(vg.Points(160), vg.Points(28))
	p.Draw(draw.New(c))
	var changed, errs int
	for _, r := range h {
		switch pollClass(r.Outcome) {
		case classChanged:
			changed++
		case classError:
			errs++
		}
	}
	label := fmt.Sprintf("last %d polls: %d changed, %d failed", len(h), changed, errs)
	return svgHTML(c, "spark", label)
}
