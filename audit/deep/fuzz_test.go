package deep

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzBlocks feeds arbitrary bytes through decoding and every grid test as
// BF16, F16 and F32: no panic, and any fit found is a real interval of
// positive scales that puts each value on the grid.
func FuzzBlocks(f *testing.F) {
	f.Add([]byte{0x80, 0x3f, 0x00, 0x40, 0xc0, 0x40, 0x00, 0x00}, uint8(0))
	f.Add(make([]byte, 256), uint8(1))
	f.Add([]byte{0x7f, 0x7f, 0x01, 0x00, 0xff, 0xff, 0x80, 0x7f}, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, sel uint8) {
		st := []*storage{storages["BF16"], storages["F16"], storages["F32"]}[int(sel)%3]
		n := len(data) / st.size
		n -= n % 16
		if n == 0 || n > 4096 {
			return
		}
		elems := make([]elem, n)
		if !st.decodeElems(data, elems) {
			return
		}
		var fit fitter
		var buf []float64
		for _, g := range grids {
			for b := 0; b+g.group <= n; b += g.group {
				block := elems[b : b+g.group]
				sum := summarize(block)
				ft := fit.test(g, block, &sum)
				if !ft.onGrid {
					continue
				}
				if !(ft.scaleLo > 0 && ft.scaleLo <= ft.scaleHi) || math.IsInf(ft.scaleHi, 0) {
					t.Fatalf("%s: scale interval [%g, %g]", g.code, ft.scaleLo, ft.scaleHi)
				}
				// Within the rounding interval: at most half a step, or 2/3
				// of the interval at the bottom of a binade (half the step
				// below is half as wide).
				if r := g.residual(block, (ft.scaleLo+ft.scaleHi)/2, &buf); r > 2.0/3+1e-6 && !g.asym {
					t.Fatalf("%s: on the grid with median residual %g code steps", g.code, r)
				}
			}
		}
	})
}

// FuzzAudit audits a file of arbitrary bytes as one tensor of a shape
// taken from the first bytes: no panic, and reads stay within the budget.
func FuzzAudit(f *testing.F) {
	f.Add([]byte{4, 1, 0x80, 0x3f, 0x00, 0x40}, uint16(4096))
	f.Add(make([]byte, 1030), uint16(100))
	// One directory for the whole run: a t.TempDir per input cost more than
	// the audit. Each input gets its own file (fuzz workers run in parallel
	// processes, each with its own directory).
	dir := f.TempDir()
	n := 0
	f.Fuzz(func(t *testing.T, data []byte, budgetKiB uint16) {
		if len(data) < 2 {
			return
		}
		n++
		path := filepath.Join(dir, fmt.Sprintf("x%d.safetensors", n))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(path)
		rows := int64(data[0]) + 1
		body := int64(len(data) - 2)
		dtype := []string{"BF16", "F16", "F32", "F8_E4M3"}[data[1]%4]
		size := map[string]int64{"BF16": 2, "F16": 2, "F32": 4, "F8_E4M3": 1}[dtype]
		cols := body / size / rows
		budget := int64(budgetKiB) << 10
		ts := []Tensor{{Path: path, Name: "mtp.x.weight", DType: dtype, Shape: []int64{rows, cols}, Begin: 2, End: 2 + rows*cols*size}}
		rep, err := Audit(ts, Options{Budget: budget})
		if err != nil {
			return
		}
		if budget == 0 {
			budget = DefaultBudget
		}
		if rep.BytesRead > budget {
			t.Fatalf("read %d bytes over a %d budget", rep.BytesRead, budget)
		}
	})
}
