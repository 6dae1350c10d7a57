package chart

import (
	"fmt"
	"image/color"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/specsim/specsim/golden"
)

// AL draws a golden curve report into path (.png or .svg): AL(k),
// measured, extrapolated (dashed) and consistent where repaired, or at a
// draft length (r.Steps > 0) the distribution of L there.
func AL(path string, r *golden.Report) error {
	if err := checkExt(path); err != nil {
		return err
	}
	curve, consistent, repair, steps, dist := r.Curve, r.Consistent, r.Repair, r.Steps, r.Dist
	p := plot.New()
	if steps > 0 {
		p.Title.Text = fmt.Sprintf("%s, thinking %s, k=%d: distribution of L", curve.Model, curve.Thinking, steps)
		p.X.Label.Text = "accepted length L (tokens per verify step, bonus included)"
		p.Y.Label.Text = "probability"
		vals := make(plotter.Values, len(dist))
		copy(vals, dist)
		bars, err := plotter.NewBarChart(vals, vg.Points(20))
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		p.Add(bars)
		names := make([]string, len(dist))
		for i := range names {
			names[i] = strconv.Itoa(i + 1)
		}
		p.NominalX(names...)
	} else {
		p.Title.Text = fmt.Sprintf("%s, thinking %s: golden AL", curve.Model, curve.Thinking)
		p.X.Label.Text = "draft length k"
		p.Y.Label.Text = "AL (tokens per verify step)"
		n := len(curve.AL)
		if curve.Measured > 0 {
			n = curve.Measured
		}
		measured := make(plotter.XYs, n)
		for i := range n {
			measured[i] = plotter.XY{X: float64(i + 1), Y: curve.AL[i]}
		}
		line, pts, err := plotter.NewLinePoints(measured)
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		p.Add(line, pts)
		p.Legend.Add("measured", line, pts)
		if curve.Measured > 0 {
			ext := make(plotter.XYs, 0, len(curve.AL)-n+1)
			for i := n - 1; i < len(curve.AL); i++ {
				ext = append(ext, plotter.XY{X: float64(i + 1), Y: curve.AL[i]})
			}
			l, err := plotter.NewLine(ext)
			if err != nil {
				return fmt.Errorf("plot: %w", err)
			}
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(l)
			p.Legend.Add("extrapolated", l)
		}
		if repair.Changed {
			cons := make(plotter.XYs, len(consistent.AL))
			for i, v := range consistent.AL {
				cons[i] = plotter.XY{X: float64(i + 1), Y: v}
			}
			l, s, err := plotter.NewLinePoints(cons)
			if err != nil {
				return fmt.Errorf("plot: %w", err)
			}
			l.Color = repairRed
			s.Color = repairRed
			s.Shape = draw.CrossGlyph{}
			p.Add(l, s)
			p.Legend.Add("consistent", l, s)
		}
		p.Legend.Top = false
		p.Legend.Left = false
	}
	return save(p, 6*vg.Inch, 4*vg.Inch, path)
}

var repairRed = color.RGBA{R: 200, G: 30, B: 30, A: 255}
