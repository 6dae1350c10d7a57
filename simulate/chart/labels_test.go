package chart

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/specsim/specsim/simulate"
)

func pt(x, y float64) vg.Point { return vg.Point{X: vg.Length(x), Y: vg.Length(y)} }

func rect(x0, y0, x1, y1 float64) vg.Rectangle { return vg.Rectangle{Min: pt(x0, y0), Max: pt(x1, y1)} }

// TestPlaceLabels: labels of 40 x 10 at a point, gap 2, boxes worked out
// by hand from the candidate order (labelOffsets): upper right
// (x+2, y+2), lower right (x+2, y-12), upper left (x-42, y+2), lower left
// (x-42, y-12), centred above and below, then the same six 12 further
// out. A label whose box would cover an earlier one (or come nearer than
// the gap beside it), an obstacle or a line, or leave the area, moves to
// the next; one that fits nowhere is left out.
func TestPlaceLabels(t *testing.T) {
	area := rect(0, 0, 400, 300)
	size := pt(40, 10)
	at := pt(100, 100)
	same := func(n int) []labelReq {
		r := make([]labelReq, n)
		for i := range r {
			r[i] = labelReq{At: at, Size: size}
		}
		return r
	}
	for _, tc := range []struct {
		name      string
		reqs      []labelReq
		area      vg.Rectangle
		obstacles []vg.Rectangle
		lines     [][]vg.Point
		want      []vg.Rectangle // zero: left out
	}{
		{"one label: upper right", same(1), area, nil, nil, []vg.Rectangle{rect(102, 102, 142, 112)}},
		{"two at one point: the second below", same(2), area, nil, nil,
			[]vg.Rectangle{rect(102, 102, 142, 112), rect(102, 88, 142, 98)}},
		// Four corners, then the centred pair overlaps them; the outer
		// ring's four corners (14 out) fit; the outer centred pair
		// overlaps those too; the eleventh and twelfth find nothing.
		{"twelve at one point: eight placed", same(12), area, nil, nil, []vg.Rectangle{
			rect(102, 102, 142, 112), rect(102, 88, 142, 98), rect(58, 102, 98, 112), rect(58, 88, 98, 98),
			rect(102, 114, 142, 124), rect(102, 76, 142, 86), rect(58, 114, 98, 124), rect(58, 76, 98, 86),
			{}, {}, {}, {}}},
		{"an earlier box at a nearby point", []labelReq{{At: pt(110, 100), Size: size}, {At: at, Size: size}}, area, nil, nil,
			// the first takes (112,102); the second's upper right (102,102)
			// would overlap it, its lower right (102,88)-(142,98) is free
			[]vg.Rectangle{rect(112, 102, 152, 112), rect(102, 88, 142, 98)}},
		{"side by side on one line: kept a gap apart", []labelReq{{At: at, Size: size}, {At: pt(141, 100), Size: size}}, area, nil, nil,
			// the second's upper right (143,102) would sit 1 from the
			// first's right edge (142), nearer than the gap: lower right
			[]vg.Rectangle{rect(102, 102, 142, 112), rect(143, 88, 183, 98)}},
		{"an obstacle over the right side", same(1), area, []vg.Rectangle{rect(101, 50, 200, 150)}, nil,
			[]vg.Rectangle{rect(58, 102, 98, 112)}},
		{"a line up and to the right through the point", same(1), area, nil, [][]vg.Point{{pt(50, 50), pt(150, 150)}},
			// upper right and lower left cross it; lower right does not
			[]vg.Rectangle{rect(102, 88, 142, 98)}},
		{"near the area's corner", []labelReq{{At: pt(390, 295), Size: size}}, area, nil, nil,
			// only the lower left box stays inside 400 x 300
			[]vg.Rectangle{rect(348, 283, 388, 293)}},
		{"no room anywhere", same(1), rect(90, 90, 110, 110), nil, nil, []vg.Rectangle{{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			boxes, ok := placeLabels(tc.reqs, tc.area, tc.obstacles, tc.lines, 2)
			for i, want := range tc.want {
				if ok[i] != (want != vg.Rectangle{}) || boxes[i] != want {
					t.Errorf("label %d: box %v (placed %v), want %v", i, boxes[i], ok[i], want)
				}
			}
			for i := range boxes {
				for j := range i {
					if ok[i] && ok[j] && overlaps(boxes[i], []vg.Rectangle{boxes[j]}) {
						t.Errorf("labels %d and %d overlap: %v %v", j, i, boxes[j], boxes[i])
					}
				}
			}
		})
	}
}

// TestSegmentMeets: a segment meets a rectangle when part of it lies
// strictly inside; touching an edge or passing by does not count.
func TestSegmentMeets(t *testing.T) {
	r := rect(10, 10, 20, 20)
	for _, tc := range []struct {
		a, b vg.Point
		want bool
	}{
		{pt(0, 0), pt(30, 30), true},   // diagonal through
		{pt(15, 0), pt(15, 30), true},  // vertical through
		{pt(12, 12), pt(13, 13), true}, // wholly inside
		{pt(0, 0), pt(5, 30), false},   // left of it
		{pt(0, 10), pt(30, 10), false}, // along the bottom edge
		{pt(0, 25), pt(25, 0), true},   // cuts the corner (15,10)-(10,15)
		{pt(0, 20), pt(20, 0), false},  // touches the corner (10,10) only
		{pt(21, 0), pt(21, 30), false}, // right of it
		{pt(0, 15), pt(10, 15), false}, // ends on the left edge
	} {
		if got := segmentMeets(tc.a, tc.b, r); got != tc.want {
			t.Errorf("%v-%v: %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestDenseFrontierLabels: a frontier of 40 deployments packed into a
// narrow band draws each label at most once, none over another, and the
// legend says how many of the 40 were left out; the labels drawn plus
// those left out are the 40.
func TestDenseFrontierLabels(t *testing.T) {
	var pts []simulate.Point
	for i := range 40 {
		var p simulate.Point
		p.Interactivity, p.TputPerGPU = 100+float64(i), 5000-10*float64(i)
		p.Topology, p.Steps = fmt.Sprintf("disagg:%dxtp1+1xtp4ep4", i+1), 3
		pts = append(pts, p)
	}
	path := filepath.Join(t.TempDir(), "dense.svg")
	if err := Write(path, "dense", &simulate.SweepResult{Points: pts, FrontierMTP: pts}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(data)
	drawn := 0
	for _, p := range pts {
		n := strings.Count(svg, ">"+PointLabel(&p)+"<")
		if n > 1 {
			t.Errorf("%s drawn %d times", PointLabel(&p), n)
		}
		drawn += n
	}
	m := regexp.MustCompile(`(\d+) of (\d+) frontier labels left out \(no room\)`).FindStringSubmatch(svg)
	if m == nil {
		t.Fatalf("no left-out count in the legend; %d of 40 labels drawn", drawn)
	}
	left, _ := strconv.Atoi(m[1])
	if m[2] != "40" || left+drawn != 40 || left == 0 || drawn == 0 {
		t.Errorf("legend says %s of %s left out; %d drawn", m[1], m[2], drawn)
	}
}
