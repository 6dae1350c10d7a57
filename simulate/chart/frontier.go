package chart

import (
	"fmt"
	"image/color"
	"math"
	"slices"
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

// FrontierTitle names what a sweep priced: model, precision, GPU and the
// most GPUs a point may take, and the workload.
func FrontierTitle(in simulate.SweepInputs) string {
	return fmt.Sprintf("%s %s on up to %d x %s, %s", in.Model, strings.ToUpper(in.Precision), in.GPUs, strings.ToUpper(in.GPU), Workload(in))
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
// draft length where they change along the frontier, where the label
// finds room (spacedLabels).
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
	var cloud, outside *plotter.Scatter
	inSLA, outSLA := splitBySLA(res.Points)
	if all := thin(xys(outSLA), backgroundCells); len(all) > 0 {
		// Points an SLA limit removed before the frontiers can sit above
		// them; they are drawn apart and named so.
		s, err := plotter.NewScatter(all)
		if err != nil {
			return err
		}
		s.GlyphStyle.Color = color.RGBA{R: 240, G: 190, B: 150, A: 255}
		s.GlyphStyle.Shape = draw.CrossGlyph{}
		s.GlyphStyle.Radius = vg.Points(1.5)
		p.Add(s)
		outside = s
	}
	if all := thin(xys(inSLA), backgroundCells); len(all) > 0 {
		s, err := plotter.NewScatter(all)
		if err != nil {
			return err
		}
		s.GlyphStyle.Color = color.Gray{Y: 200}
		s.GlyphStyle.Radius = vg.Points(1.2)
		p.Add(s)
		// The cloud holds MTP points too and mean-field estimates never
		// simulated, so some sit above the no-speculation frontier; the
		// legend says so.
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
		labels.marker = points.Radius
	}
	if band > 0 {
		p.Title.Text += fmt.Sprintf(" (shaded: throughput band %s)", simulate.BandText(band, 0))
	}
	if len(labels.Labels.Labels) > 0 {
		p.Add(labels)
	}
	if cloud != nil {
		p.Legend.Add("other points (any k; mean-field unless simulated)", cloud)
	}
	if outside != nil {
		p.Legend.Add("outside the SLA limits (removed before the frontiers)", outside)
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
// those only the ones whose text fits near its point without covering a
// label already drawn, a frontier line or marker, or the legend, in
// frontier order (placeLabels). A 72-GPU frontier of dozens of nearby
// deployments thus keeps readable labels instead of a smudge; the legend
// says how many were left out.
type spacedLabels struct {
	plotter.Labels // the candidates; its GlyphBoxes keep them inside the axes

	lines   []plotter.XYs // the frontiers, drawn with markers of radius marker
	marker  vg.Length
	omitted int  // labels left out by the last Plot
	noted   bool // the legend says so
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
	l.lines = append(l.lines, xy)
}

// omittedNote is the legend's line for n of m labels left out.
func omittedNote(n, m int) string {
	return fmt.Sprintf("%d of %d frontier labels left out (no room)", n, m)
}

// Plot draws the labels that fit (see spacedLabels) and, where some did
// not, says how many in the legend (drawn after the plotters).
func (l *spacedLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	at := func(q plotter.XY) vg.Point { return vg.Point{X: trX(q.X), Y: trY(q.Y)} }
	var obstacles []vg.Rectangle
	var lines [][]vg.Point
	for _, xy := range l.lines {
		line := make([]vg.Point, len(xy))
		for i, q := range xy {
			line[i] = at(q)
			r := l.marker + vg.Points(1)
			obstacles = append(obstacles, vg.Rectangle{Min: line[i].Sub(vg.Point{X: r, Y: r}), Max: line[i].Add(vg.Point{X: r, Y: r})})
		}
		lines = append(lines, line)
	}
	// The legend sits in the top right corner of the axes; reserve it with
	// the line this Plot may add (a count of as many digits as the total).
	m := len(l.Labels.Labels)
	lg := p.Legend
	lg.Add(omittedNote(m, m))
	if lr := lg.Rectangle(c); lr.Size().X > 0 {
		w, h := lr.Size().X+p.Legend.Padding, lr.Size().Y+p.Legend.Padding
		obstacles = append(obstacles, vg.Rectangle{Min: vg.Point{X: c.Max.X - w, Y: c.Max.Y - h}, Max: c.Max})
	}
	reqs := make([]labelReq, 0, m)
	var drawn []int
	for i, s := range l.Labels.Labels {
		pt := at(l.XYs[i])
		if !c.Contains(pt) {
			continue
		}
		reqs = append(reqs, labelReq{At: pt, Size: l.TextStyle[i].Rectangle(s).Size()})
		drawn = append(drawn, i)
	}
	boxes, ok := placeLabels(reqs, c.Rectangle, obstacles, lines, vg.Points(2))
	l.omitted = m - len(reqs)
	for j, i := range drawn {
		if !ok[j] {
			l.omitted++
			continue
		}
		// Rectangle is relative to the text's origin: draw at the box's
		// corner less that offset.
		st := l.TextStyle[i]
		r := st.Rectangle(l.Labels.Labels[i])
		c.FillText(st, boxes[j].Min.Sub(r.Min), l.Labels.Labels[i])
	}
	if l.omitted > 0 && !l.noted {
		p.Legend.Add(omittedNote(l.omitted, m))
		l.noted = true
	}
}

// labelReq is a label to place: the point it names and its text's size.
type labelReq struct {
	At   vg.Point
	Size vg.Point
}

// placeLabels places each label, in order, at the first candidate box
// beside its point (labelOffsets) that lies inside area, comes no nearer
// than gap sideways to a box placed before it, and meets no obstacle and
// no segment of lines; ok[i] is false
// (and boxes[i] zero) for a label no candidate fits.
func placeLabels(reqs []labelReq, area vg.Rectangle, obstacles []vg.Rectangle, lines [][]vg.Point, gap vg.Length) (boxes []vg.Rectangle, ok []bool) {
	boxes, ok = make([]vg.Rectangle, len(reqs)), make([]bool, len(reqs))
	var placed []vg.Rectangle
	for i, q := range reqs {
		for _, off := range labelOffsets(q.Size, gap) {
			corner := q.At.Add(off)
			box := vg.Rectangle{Min: corner, Max: corner.Add(q.Size)}
			// Labels on one line keep a gap between them, or they read
			// as one ("...k6tp4ep4 k6").
			spaced := vg.Rectangle{Min: box.Min.Sub(vg.Point{X: gap}), Max: box.Max.Add(vg.Point{X: gap})}
			if !inside(box, area) || overlaps(spaced, placed) || overlaps(box, obstacles) || crosses(box, lines) {
				continue
			}
			placed = append(placed, box)
			boxes[i], ok[i] = box, true
			break
		}
	}
	return boxes, ok
}

// labelOffsets are the lower left corners, relative to the point, of the
// boxes a label of size sz may take, nearest first: the four corners at
// gap from the point, then centred above and below, then the same six a
// line further out.
func labelOffsets(sz vg.Point, gap vg.Length) []vg.Point {
	w, h := sz.X, sz.Y
	var out []vg.Point
	for _, d := range []vg.Length{gap, 2*gap + h} {
		out = append(out,
			vg.Point{X: gap, Y: d}, vg.Point{X: gap, Y: -h - d},
			vg.Point{X: -w - gap, Y: d}, vg.Point{X: -w - gap, Y: -h - d},
			vg.Point{X: -w / 2, Y: d + gap}, vg.Point{X: -w / 2, Y: -h - d - gap})
	}
	return out
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

// crosses reports whether a segment of lines passes through r.
func crosses(r vg.Rectangle, lines [][]vg.Point) bool {
	for _, line := range lines {
		for i := 1; i < len(line); i++ {
			if segmentMeets(line[i-1], line[i], r) {
				return true
			}
		}
	}
	return false
}

// segmentMeets reports whether the segment a-b has a point strictly
// inside r (Liang-Barsky clipping).
func segmentMeets(a, b vg.Point, r vg.Rectangle) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := float64(b.X-a.X), float64(b.Y-a.Y)
	for _, e := range [4][2]float64{
		{-dx, float64(a.X - r.Min.X)}, {dx, float64(r.Max.X - a.X)},
		{-dy, float64(a.Y - r.Min.Y)}, {dy, float64(r.Max.Y - a.Y)},
	} {
		p, q := e[0], e[1]
		if p == 0 {
			if q <= 0 {
				return false // parallel to this edge and outside (or on) it
			}
			continue
		}
		t := q / p
		if p < 0 {
			t0 = math.Max(t0, t)
		} else {
			t1 = math.Min(t1, t)
		}
		if t0 >= t1 {
			return false
		}
	}
	return true
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

// splitBySLA parts points into those the sweep's SLA limits kept and those
// they removed (annotated "outside SLA").
func splitBySLA(points []simulate.Point) (in, out []simulate.Point) {
	for _, p := range points {
		if slices.ContainsFunc(p.Notes, func(n string) bool { return strings.HasPrefix(n, "outside SLA") }) {
			out = append(out, p)
		} else {
			in = append(in, p)
		}
	}
	return in, out
}
