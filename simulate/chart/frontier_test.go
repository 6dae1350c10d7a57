package chart

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/specsim/specsim/simulate"
)

// frontiers builds a small sweep result by hand: two frontiers and a few
// dominated points.
func frontiers() *simulate.SweepResult {
	pt := func(inter, tput float64, topo string, k int) simulate.Point {
		var p simulate.Point
		p.Interactivity, p.TputPerGPU, p.Topology, p.Steps = inter, tput, topo, k
		return p
	}
	mtp := []simulate.Point{pt(40, 3000, "agg:tp2", 3), pt(80, 2200, "agg:tp2", 3), pt(160, 900, "agg:tp8", 5)}
	none := []simulate.Point{pt(30, 2800, "agg:tp2", 0), pt(60, 1800, "agg:tp4", 0), pt(110, 600, "disagg:1xtp4+1xdep8", 0)}
	all := append(append([]simulate.Point{pt(50, 1000, "agg:tp1", 1), pt(90, 500, "agg:tp1", 1)}, mtp...), none...)
	return &simulate.SweepResult{Points: all, FrontierMTP: mtp, FrontierNone: none}
}

func TestWritePNGAndSVG(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file  string
		check func(t *testing.T, data []byte)
	}{
		{"frontier.png", func(t *testing.T, data []byte) {
			if !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
				t.Errorf("no PNG signature: % x", data[:min(8, len(data))])
			}
		}},
		{"frontier.SVG", func(t *testing.T, data []byte) {
			dec := xml.NewDecoder(bytes.NewReader(data))
			for {
				tok, err := dec.Token()
				if err != nil {
					t.Fatalf("no root element: %v", err)
				}
				if se, ok := tok.(xml.StartElement); ok {
					if se.Name.Local != "svg" {
						t.Errorf("root element <%s>, want <svg>", se.Name.Local)
					}
					break
				}
			}
			// The title, both legend entries and each run of one
			// deployment along a frontier are drawn as text; a second
			// point of the same deployment is not labelled again.
			for _, s := range []string{"DeepSeek test frontier", "no speculation", "MTP", ">tp2 k3<", ">tp8 k5<", ">tp4 k0<", ">disagg:1xtp4+1xdep8 k0<"} {
				if !strings.Contains(string(data), s) {
					t.Errorf("SVG lacks %q", s)
				}
			}
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			if strings.HasSuffix(tc.file, ".SVG") {
				defer func() {
					data, _ := os.ReadFile(filepath.Join(dir, tc.file))
					if n := strings.Count(string(data), ">tp2 k3<"); n != 1 {
						t.Errorf("tp2 k3 labelled %d times, want once (first point of its run)", n)
					}
				}()
			}
			path := filepath.Join(dir, tc.file)
			if err := Write(path, "DeepSeek test frontier", frontiers()); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// An 8x5 inch plot with axes, grid, six lines and a legend is
			// kilobytes; an empty canvas or a truncated file is not.
			if len(data) < 4<<10 {
				t.Errorf("%s is only %d bytes", tc.file, len(data))
			}
			tc.check(t, data)
		})
	}
}

func TestWriteRejectsOtherExtensions(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"frontier.jpg", "frontier", "frontier.png.txt"} {
		path := filepath.Join(dir, name)
		err := Write(path, "x", frontiers())
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Write(%s) = %v, want an error naming the file", name, err)
		}
		if _, statErr := os.Stat(path); statErr == nil {
			t.Errorf("Write(%s) created the file", name)
		}
	}
}

func TestWriteEmptyResult(t *testing.T) {
	// A sweep where nothing fit still yields a valid (empty) plot.
	path := filepath.Join(t.TempDir(), "empty.png")
	if err := Write(path, "nothing fits", &simulate.SweepResult{}); err != nil {
		t.Fatal(err)
	}
}

func TestWriteBandShadesFrontiers(t *testing.T) {
	dir := t.TempDir()
	plain, shaded := filepath.Join(dir, "plain.svg"), filepath.Join(dir, "band.svg")
	if err := Write(plain, "band test", frontiers()); err != nil {
		t.Fatal(err)
	}
	if err := WriteBand(shaded, "band test", frontiers(), 0.2); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(plain)
	b, _ := os.ReadFile(shaded)
	// The band adds one filled path per frontier and says so in the title.
	if !strings.Contains(string(b), "throughput band ×/÷ 1.20 (-17%/+20%)") || strings.Contains(string(a), "band") && strings.Contains(string(a), "±") {
		t.Error("the shaded plot's title does not name the band, or the plain one does")
	}
	if strings.Count(string(b), "fill-opacity") <= strings.Count(string(a), "fill-opacity") &&
		strings.Count(string(b), "<path") <= strings.Count(string(a), "<path") {
		t.Error("the shaded plot draws nothing more than the plain one")
	}
}

// FrontierTitle names the workload: the AgentX replay, or the fixed lengths.
func TestFrontierTitle(t *testing.T) {
	in := simulate.SweepInputs{Model: "Qwen3.5-397B-A17B", Precision: "fp4", GPU: "gb300", GPUs: 72, Workload: "agentx"}
	if got, want := FrontierTitle(in), "Qwen3.5-397B-A17B FP4 on up to 72 x GB300, AgentX trace replay"; got != want {
		t.Errorf("FrontierTitle = %q, want %q", got, want)
	}
	in.Workload, in.WorkloadParams = "fixed", simulate.WorkloadInputs{ISL: 1024, OSL: 8192}
	if got := FrontierTitle(in); !strings.HasSuffix(got, "ISL 1024 / OSL 8192") {
		t.Errorf("FrontierTitle = %q, want the lengths", got)
	}
}

// A 72-GPU sweep's background of many thousands of points is thinned to
// one per grid cell, so the file stays small: 40,000 points on a 200 x 200
// lattice keep at most backgroundCells^2, and a plot of them is a few
// hundred kB at most.
func TestBackgroundThinned(t *testing.T) {
	res := frontiers()
	for i := range 40000 {
		var p simulate.Point
		p.Interactivity, p.TputPerGPU = 10+float64(i%200), 100+float64(i/200)*10
		res.Points = append(res.Points, p)
	}
	if n := len(thin(xys(res.Points), backgroundCells)); n > backgroundCells*backgroundCells || n < backgroundCells {
		t.Errorf("thinned to %d points, want %d..%d", n, backgroundCells, backgroundCells*backgroundCells)
	}
	path := filepath.Join(t.TempDir(), "big.svg")
	if err := Write(path, "big", res); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() > 4<<20 {
		t.Errorf("big.svg: %v bytes, err %v; want under 4 MiB", fi.Size(), err)
	}
	if got := thin(plotter.XYs{{X: 1, Y: 1}, {X: 1, Y: 1}}, 2); len(got) != 2 {
		t.Errorf("thin keeps inputs shorter than n: got %d", len(got))
	}
}

// TestSLARemovedDrawnApart: points an SLA limit removed are not in the
// grey cloud but drawn apart under their own legend entry, which a plot
// without removed points does not have.
func TestSLARemovedDrawnApart(t *testing.T) {
	in := simulate.Point{Result: simulate.Result{Interactivity: 50, TputPerGPU: 900}}
	out := simulate.Point{Result: simulate.Result{Interactivity: 40, TputPerGPU: 5000}, Notes: []string{"queued: prefill runs 4 of 64", "outside SLA: --max-ttft-ms 5000"}}
	gotIn, gotOut := splitBySLA([]simulate.Point{in, out, in})
	if len(gotIn) != 2 || len(gotOut) != 1 || gotOut[0].TputPerGPU != 5000 {
		t.Fatalf("split: %d in, %d out", len(gotIn), len(gotOut))
	}
	dir := t.TempDir()
	with, without := filepath.Join(dir, "with.svg"), filepath.Join(dir, "without.svg")
	res := frontiers()
	res.Points = append(res.Points, out)
	if err := Write(with, "sla", res); err != nil {
		t.Fatal(err)
	}
	if err := Write(without, "sla", frontiers()); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(with)
	b, _ := os.ReadFile(without)
	const entry = "outside the SLA limits"
	if !strings.Contains(string(a), entry) || strings.Contains(string(b), entry) {
		t.Errorf("legend entry %q: in the plot with a removed point %v, in the one without %v", entry, strings.Contains(string(a), entry), strings.Contains(string(b), entry))
	}
}
