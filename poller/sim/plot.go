package sim

import (
	"fmt"
	"image/color"
	"io"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PlotDelay writes a PNG of mean delay (hours) against the budget's mean
// poll interval Ī (hours), one line per contender, with the Ī/2 that a
// uniform schedule of Poisson postings would give.
func PlotDelay(w io.Writer, rep *Report) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Mean delay per posting at equal budget (%d feeds)", rep.Feeds)
	p.X.Label.Text = "budget: mean poll interval per page Ī (hours)"
	p.Y.Label.Text = "mean delay (hours)"
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	if len(rep.Budgets) == 0 {
		return fmt.Errorf("plot delay: empty report")
	}
	half := make(plotter.XYs, len(rep.Budgets))
	for b, bu := range rep.Budgets {
		half[b] = plotter.XY{X: bu.Interval.Hours(), Y: bu.Interval.Hours() / 2}
	}
	l, err := plotter.NewLine(half)
	if err != nil {
		return fmt.Errorf("plot delay: %w", err)
	}
	l.Color = color.Gray{Y: 150}
	l.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	p.Add(l)
	p.Legend.Add("Ī/2", l)
	for c := range rep.Budgets[0].Rows {
		xys := make(plotter.XYs, len(rep.Budgets))
		for b, bu := range rep.Budgets {
			xys[b] = plotter.XY{X: bu.Interval.Hours(), Y: bu.Rows[c].Mean.Hours()}
		}
		line, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("plot delay: %w", err)
		}
		line.Color, pts.Color = plotutil.Color(c), plotutil.Color(c)
		line.Width = vg.Points(1.5)
		pts.Shape = plotutil.Shape(c)
		p.Add(line, pts)
		p.Legend.Add(rep.Budgets[0].Rows[c].Policy, line, pts)
	}
	return writePNG(w, p, 18*vg.Centimeter, 12*vg.Centimeter)
}

// PlotWatch writes a PNG of one page during [from, to): its postings, the
// polls the policy made, and the policy's estimate τ and scaled wait (hours).
func PlotWatch(w io.Writer, tr *Trace, track *WatchTrack, policy string, from, to time.Time) error {
	if track == nil {
		return fmt.Errorf("plot watch: no watched page")
	}
	hours := func(t time.Time) float64 { return t.Sub(from).Hours() }
	var posts, polls, tau, wait plotter.XYs
	for _, off := range tr.Postings[track.Feed] {
		if t := tr.Start.Add(off); !t.Before(from) && t.Before(to) {
			posts = append(posts, plotter.XY{X: hours(t), Y: -0.8})
		}
	}
	top := 1.0
	for k, t := range track.Polls {
		if !t.Before(to) {
			break
		}
		if t.Before(from) {
			// The last poll before the window sets the lines' start at 0.
			if k+1 < len(track.Polls) && !track.Polls[k+1].Before(from) {
				tau = append(tau, plotter.XY{X: 0, Y: track.Estimate[k].Hours()})
				wait = append(wait, plotter.XY{X: 0, Y: track.Wait[k].Hours()})
				top = max(top, track.Estimate[k].Hours(), track.Wait[k].Hours())
			}
			continue
		}
		polls = append(polls, plotter.XY{X: hours(t), Y: -2})
		tau = append(tau, plotter.XY{X: hours(t), Y: track.Estimate[k].Hours()})
		wait = append(wait, plotter.XY{X: hours(t), Y: track.Wait[k].Hours()})
		top = max(top, track.Estimate[k].Hours(), track.Wait[k].Hours())
	}
	// The step lines hold their last value to the end of the window.
	if n := len(tau); n > 0 {
		tau = append(tau, plotter.XY{X: to.Sub(from).Hours(), Y: tau[n-1].Y})
		wait = append(wait, plotter.XY{X: to.Sub(from).Hours(), Y: wait[n-1].Y})
	}
	if len(polls) == 0 {
		return fmt.Errorf("plot watch: no polls between %v and %v", from, to)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Page %s under %s, %s – %s (%d postings, %d polls)",
		tr.IDs[track.Feed], policy, from.Format("Mon 2 Jan"), to.Add(-time.Second).Format("Mon 2 Jan"), len(posts), len(polls))
	p.X.Label.Text = fmt.Sprintf("hours since %s UTC (weekend from hour %d)", from.Format("Mon 2 Jan 15:04"), weekendStart(from))
	p.Y.Label.Text = "τ and wait (hours); below 0: postings ▲, polls ●"
	p.X.Min, p.X.Max = 0, to.Sub(from).Hours()
	p.Y.Min, p.Y.Max = -3, top*1.35 // room for the legend above the lines
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	add := func(name string, xys plotter.XYs, c int, step bool) error {
		if len(xys) == 0 {
			return nil
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("plot watch: %w", err)
		}
		l.Color = plotutil.Color(c)
		l.Width = vg.Points(1.5)
		if step {
			l.StepStyle = plotter.PostStep
		}
		p.Add(l)
		p.Legend.Add(name, l)
		return nil
	}
	mark := func(name string, xys plotter.XYs, c int, shape draw.GlyphDrawer) error {
		if len(xys) == 0 {
			return nil
		}
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return fmt.Errorf("plot watch: %w", err)
		}
		s.Color, s.Shape, s.Radius = plotutil.Color(c), shape, vg.Points(2.5)
		p.Add(s)
		p.Legend.Add(name, s)
		return nil
	}
	if err := add("estimate τ", tau, 0, true); err != nil {
		return err
	}
	if err := add("wait chosen (scaled)", wait, 1, true); err != nil {
		return err
	}
	if err := mark("posting", posts, 2, draw.PyramidGlyph{}); err != nil {
		return err
	}
	if err := mark("poll", polls, 4, draw.CircleGlyph{}); err != nil {
		return err
	}
	return writePNG(w, p, 24*vg.Centimeter, 12*vg.Centimeter)
}

// weekendStart returns the hour (from from) at which the first Saturday starts.
func weekendStart(from time.Time) int {
	d := (int(time.Saturday) - int(from.Weekday()) + 7) % 7
	sat := time.Date(from.Year(), from.Month(), from.Day()+d, 0, 0, 0, 0, from.Location())
	return int(sat.Sub(from).Hours())
}

func writePNG(w io.Writer, p *plot.Plot, width, height vg.Length) error {
	wt, err := p.WriterTo(width, height, "png")
	if err != nil {
		return fmt.Errorf("render png: %w", err)
	}
	if _, err := wt.WriteTo(w); err != nil {
		return fmt.Errorf("write png: %w", err)
	}
	return nil
}
