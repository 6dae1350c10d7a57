package paretoplot

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/simulate"
)

// frontiers builds a small sweep result by hand: two frontiers and a few
// dominated points.
func frontiers() *simulate.SweepResult {
	pt := func(inter, tput float64) simulate.Point {
		var p simulate.Point
		p.Interactivity, p.TputPerGPU = inter, tput
		return p
	}
	mtp := []simulate.Point{pt(40, 3000), pt(80, 2200), pt(160, 900)}
	none := []simulate.Point{pt(30, 2800), pt(60, 1800), pt(110, 600)}
	all := append(append([]simulate.Point{pt(50, 1000), pt(90, 500)}, mtp...), none...)
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
			// The title and both legend entries are drawn as text.
			for _, s := range []string{"DeepSeek test frontier", "no speculation", "MTP"} {
				if !strings.Contains(string(data), s) {
					t.Errorf("SVG lacks %q", s)
				}
			}
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
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
	if !strings.Contains(string(b), "±20% throughput band") || strings.Contains(string(a), "band") && strings.Contains(string(a), "±") {
		t.Error("the shaded plot's title does not name the band, or the plain one does")
	}
	if strings.Count(string(b), "fill-opacity") <= strings.Count(string(a), "fill-opacity") &&
		strings.Count(string(b), "<path") <= strings.Count(string(a), "<path") {
		t.Error("the shaded plot draws nothing more than the plain one")
	}
}
