// Package paretoplot draws sweep frontiers (total tokens/s per GPU against
// interactivity), MTP against no speculation, as PNG or SVG. It is apart
// from package simulate so that the simulation does not pull in the
// plotting and font packages.
package paretoplot

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/specsim/specsim/simulate"
)

// Write draws the frontiers of res into path (.png or .svg), with every
// evaluated point faintly behind them.
func Write(path, title string, res *simulate.SweepResult) error {
	return WriteBand(path, title, res, 0)
}

// WriteBand is Write with each frontier's throughput uncertainty shaded:
// between y/(1+band) and y*(1+band) (simulate.BandWidthsFor); band 0
// draws no shading.
func WriteBand(path, title string, res *simulate.SweepResult, band float64) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("--plot %s: want a .png or .svg file", path)
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "interactivity (tokens/s per user)"
	p.Y.Label.Text = "total throughput (tokens/s per GPU)"
	p.Add(plotter.NewGrid())
	all := xys(res.Points)
	if len(all) > 0 {
		s, err := plotter.NewScatter(all)
		if err != nil {
			return err
		}
		s.GlyphStyle.Color = color.Gray{Y: 200}
		s.GlyphStyle.Radius = vg.Points(1.5)
		p.Add(s)
	}
	for _, f := range []struct {
		name  string
		pts   []simulate.Point
		color color.Color
		shape draw.GlyphDrawer
	}{
		{"MTP (best k per point)", res.FrontierMTP, color.RGBA{R: 200, G: 40, B: 40, A: 255}, draw.CircleGlyph{}},
		{"no speculation", res.FrontierNone, color.RGBA{R: 40, G: 80, B: 200, A: 255}, draw.SquareGlyph{}},
	} {
		if len(f.pts) == 0 {
			continue
		}
		xy := xys(f.pts)
		if band > 0 && len(xy) > 1 {
			poly := make(plotter.XYs, 0, 2*len(xy))
			for _, q := range xy {
				poly = append(poly, plotter.XY{X: q.X, Y: q.Y * (1 + band)})
			}
			for i := len(xy) - 1; i >= 0; i-- {
				poly = append(poly, plotter.XY{X: xy[i].X, Y: xy[i].Y / (1 + band)})
			}
			shade, err := plotter.NewPolygon(poly)
			if err != nil {
				return err
			}
			r, g, b, _ := f.color.RGBA()
			shade.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 50}
			shade.LineStyle.Width = 0
			p.Add(shade)
		}
		line, points, err := plotter.NewLinePoints(xy)
		if err != nil {
			return err
		}
		line.Color = f.color
		line.Width = vg.Points(1.5)
		points.Color = f.color
		points.Shape = f.shape
		p.Add(line, points)
		p.Legend.Add(f.name, line, points)
	}
	if band > 0 {
		p.Title.Text += fmt.Sprintf(" (shaded: ±%.0f%% throughput band)", 100*band)
	}
	p.Legend.Top = true
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

func xys(ps []simulate.Point) plotter.XYs {
	out := make(plotter.XYs, 0, len(ps))
	for _, p := range ps {
		if p.Interactivity > 0 && p.TputPerGPU > 0 {
			out = append(out, plotter.XY{X: p.Interactivity, Y: p.TputPerGPU})
		}
	}
	return out
}
