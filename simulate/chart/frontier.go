package chart

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/specsim/specsim/simulate"
)

// Sweep draws a sweep's frontiers into path (.png or .svg), titled with
// FrontierTitle and shaded with the sweep's throughput band.
func Sweep(path string, so *simulate.SweepOutput) error {
	band := 0.0
	if so.Band != nil {
		band = so.Band.Relative.Throughput
	}
	return WriteBand(path, FrontierTitle(so.Inputs), so.SweepResult, band)
}

// FrontierTitle names what a sweep priced: model, precision, GPU and count,
// and the workload.
func FrontierTitle(in simulate.SweepInputs) string {
	return fmt.Sprintf("%s %s on %d x %s, %s", in.Model, strings.ToUpper(in.Precision), in.GPUs, strings.ToUpper(in.GPU), Workload(in))
}

// Workload names a sweep's workload for a title: the AgentX trace replay,
// or the fixed input and output lengths.
func Workload(in simulate.SweepInputs) string {
	if in.Workload == "agentx" {
		return "AgentX trace replay"
	}
	return fmt.Sprintf("ISL %d / OSL %d", in.WorkloadParams.ISL, in.WorkloadParams.OSL)
}

// Write draws the frontiers of res into path (.png or .svg), with the
// evaluated points faintly behind them.
func Write(path, title string, res *simulate.SweepResult) error {
	return WriteBand(path, title, res, 0)
}

// backgroundCells bounds the faint background: at most one point is drawn
// per cell of a backgroundCells x backgroundCells grid over the data, so a
// 72-GPU sweep of tens of thousands of points stays a small file and
// looks the same.
const backgroundCells = 120

// WriteBand is Write with each frontier's throughput uncertainty shaded:
// between y/(1+band) and y*(1+band) (simulate.BandWidthsFor); band 0
// draws no shading. Each frontier point is labelled with its topology and
// draft length where they change along the frontier.
func WriteBand(path, title string, res *simulate.SweepResult, band float64) error {
	if err := checkExt(path); err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "interactivity (tokens/s per user)"
	p.Y.Label.Text = "total throughput (tokens/s per GPU)"
	p.Add(plotter.NewGrid())
	labels := &spacedLabels{}
	var cloud *plotter.Scatter
	if all := thin(xys(res.Points), backgroundCells); len(all) > 0 {
		s, err := plotter.NewScatter(all)
		if err != nil {
			return err
		}
		s.GlyphStyle.Color = color.Gray{Y: 200}
		s.GlyphStyle.Radius = vg.Points(1.2)
		p.Add(s)
		// The cloud holds MTP points too, SLA-removed points, and
		// mean-field estimates never simulated, so some sit above the
		// no-speculation frontier; the legend says so.
		cloud = s
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
		xy, pts := frontierXYs(f.pts)
		if len(xy) == 0 {
			continue
		}
		if band > 0 && len(xy) > 1 {
			// One shade per frontier; the legend names the band once.
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
		points.Radius = vg.Points(2)
		p.Add(line, points)
		p.Legend.Add(f.name, line, points)
		labels.add(xy, pts, f.color)
	}
	if band > 0 {
		p.Title.Text += fmt.Sprintf(" (shaded: ±%.0f%% throughput band)", 100*band)
	}
	if len(labels.Labels.Labels) > 0 {
		p.Add(labels)
	}
	if cloud != nil {
		p.Legend.Add("other points (any k; mean-field unless simulated)", cloud)
	}
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.Legend.Top = true
	return save(p, 8*vg.Inch, 5*vg.Inch, path)
}

// PointLabel is how a frontier point is labelled: its topology without
// the "agg:" prefix, and its draft length ("k0" is no speculation).
func PointLabel(p *simulate.Point) string {
	return fmt.Sprintf("%s k%d", strings.TrimPrefix(p.Topology, "agg:"), p.Steps)
}

// spacedLabels labels frontier points in small type: the first point of
// each run of one deployment (topology and k) along a frontier, and of
// those only the ones whose text fits beside its point (right or left,
// above or below) without covering a label already drawn, in frontier
// order. A 72-GPU frontier of dozens of nearby deployments thus keeps
// readable labels instead of a smudge.
type spacedLabels struct {
	plotter.Labels // the candidates; its GlyphBoxes keep them inside the axes
}

func (l *spacedLabels) add(xy plotter.XYs, pts []simulate.Point, c color.Color) {
	style := text.Style{Font: font.From(plotter.DefaultFont, vg.Points(6)), Color: c, Handler: plot.DefaultTextHandler}
	last := ""
	for i := range pts {
		if s := PointLabel(&pts[i]); s != last {
			l.XYs = append(l.XYs, xy[i])
			l.Labels.Labels = append(l.Labels.Labels, s)
			l.TextStyle = append(l.TextStyle, style)
			last = s
		}
	}
}

// Plot draws the labels that fit (see spacedLabels).
func (l *spacedLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	var placed []vg.Rectangle
	gap := vg.Points(2)
	for i, s := range l.Labels.Labels {
		pt := vg.Point{X: trX(l.XYs[i].X), Y: trY(l.XYs[i].Y)}
		if !c.Contains(pt) {
			continue
		}
		st := l.TextStyle[i]
		r := st.Rectangle(s)
		w, h := r.Size().X, r.Size().Y
		for _, off := range []vg.Point{{X: gap, Y: gap}, {X: gap, Y: -h - gap}, {X: -w - gap, Y: gap}, {X: -w - gap, Y: -h - gap}} {
			box := r.Add(pt.Add(off))
			if !inside(box, c.Rectangle) || overlaps(box, placed) {
				continue
			}
			placed = append(placed, box)
			c.FillText(st, pt.Add(off), s)
			break
		}
	}
}

func inside(r, in vg.Rectangle) bool {
	return r.Min.X >= in.Min.X && r.Min.Y >= in.Min.Y && r.Max.X <= in.Max.X && r.Max.Y <= in.Max.Y
}

func overlaps(r vg.Rectangle, rs []vg.Rectangle) bool {
	for _, o := range rs {
		if r.Min.X < o.Max.X && o.Min.X < r.Max.X && r.Min.Y < o.Max.Y && o.Min.Y < r.Max.Y {
			return true
		}
	}
	return false
}

func xys(ps []simulate.Point) plotter.XYs {
	out, _ := frontierXYs(ps)
	return out
}

// frontierXYs are the plottable points of ps (positive, finite) and the
// points they come from.
func frontierXYs(ps []simulate.Point) (plotter.XYs, []simulate.Point) {
	out := make(plotter.XYs, 0, len(ps))
	var kept []simulate.Point
	for _, p := range ps {
		if p.Interactivity > 0 && p.TputPerGPU > 0 && !math.IsInf(p.Interactivity, 0) && !math.IsInf(p.TputPerGPU, 0) {
			out = append(out, plotter.XY{X: p.Interactivity, Y: p.TputPerGPU})
			kept = append(kept, p)
		}
	}
	return out, kept
}

// thin keeps the first point of each cell of an n x n grid over the
// points' range, in their order.
func thin(xy plotter.XYs, n int) plotter.XYs {
	if len(xy) <= n {
		return xy
	}
	xmin, xmax, ymin, ymax := plotter.XYRange(xy)
	cell := func(v, lo, hi float64) int {
		if hi <= lo {
			return 0
		}
		return min(int(float64(n)*(v-lo)/(hi-lo)), n-1)
	}
	seen := make(map[[2]int]bool)
	out := xy[:0:0]
	for _, q := range xy {
		k := [2]int{cell(q.X, xmin, xmax), cell(q.Y, ymin, ymax)}
		if !seen[k] {
			seen[k] = true
			out = append(out, q)
		}
	}
	return out
}
