package main

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// plotResults draws cost against size, log-log, one panel per cost.
func plotResults(path string, rs []result) error {
	type line struct {
		name string
		y    func(result) float64
	}
	panels := []struct {
		title, unit string
		lines       []line
	}{
		{"Memory per idle resource", "bytes", []line{
			{"RSS", func(r result) float64 { return r.BytesPerIdleResource }},
			{"live heap", func(r result) float64 { return r.LivePerResource }},
		}},
		{"Start-up to ready (state stored)", "seconds", []line{{"", func(r result) float64 { return r.StartStored }}}},
		{"Disk per stored version", "bytes", []line{{"", func(r result) float64 { return r.DiskPerVersion }}}},
		{"CPU per poll", "µs", []line{
			{"changed", func(r result) float64 { return r.ChangedCPU }},
			{"same bytes", func(r result) float64 { return r.SameCPU }},
		}},
	}
	const cols, rows = 2, 2
	img := vgimg.New(vg.Points(900), vg.Points(650))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align([][]*plot.Plot{make([]*plot.Plot, cols), make([]*plot.Plot, cols)}, tiles, dc)
	for i, pn := range panels {
		p := plot.New()
		p.Title.Text = pn.title
		p.X.Label.Text = "resources"
		p.Y.Label.Text = pn.unit
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		var args []any // name, points, name, points…: what AddLinePoints takes
		for _, l := range pn.lines {
			var pts plotter.XYs
			for _, r := range rs {
				if v := l.y(r); v > 0 {
					pts = append(pts, plotter.XY{X: float64(r.Resources), Y: v})
				}
			}
			if len(pts) == 0 {
				continue
			}
			if len(pn.lines) > 1 {
				args = append(args, l.name)
			}
			args = append(args, pts)
		}
		if len(args) > 0 {
			if err := plotutil.AddLinePoints(p, args...); err != nil {
				return fmt.Errorf("plot %s: %w", pn.title, err)
			}
		}
		p.Legend.Top = true
		p.Y.Min = 0
		p.Draw(canvases[i/cols][i%cols])
	}
	return savePNG(path, img)
}
