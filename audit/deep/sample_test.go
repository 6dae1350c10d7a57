package deep

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"
)

func TestStratified(t *testing.T) {
	for _, c := range []struct{ total, n int64 }{{10, 10}, {1000, 7}, {1 << 40, 4096}, {5, 1}} {
		idx := stratified("mtp.fc.weight", c.total, c.n)
		if int64(len(idx)) != c.n {
			t.Fatalf("%v: %d indices", c, len(idx))
		}
		for i, u := range idx {
			lo := int64(float64(c.total) * float64(i) / float64(c.n))
			hi := int64(float64(c.total) * float64(i+1) / float64(c.n))
			if u < lo || u >= max(hi, lo+1) || u >= c.total {
				t.Fatalf("%v: index %d = %d outside stratum [%d, %d)", c, i, u, lo, hi)
			}
		}
		again := stratified("mtp.fc.weight", c.total, c.n)
		for i := range idx {
			if idx[i] != again[i] {
				t.Fatalf("%v: not deterministic", c)
			}
		}
	}
}

// TestPlanAddresses reads a 3-D F32 tensor whose every value encodes its
// own (matrix, row, column) and checks that each planned read lands where
// the plan says, in both tile and segment mode.
func TestPlanAddresses(t *testing.T) {
	for _, cols := range []int{640, 1024, 48} {
		planAddresses(t, 3, 256, cols)
	}
}

func planAddresses(t *testing.T, batch, rows, cols int) {
	data := make([]byte, 4*batch*rows*cols)
	for b := range batch {
		for r := range rows {
			for c := range cols {
				i := (b*rows+r)*cols + c
				binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(b*1_000_000+r*1000+c)))
			}
		}
	}
	ts := writeSafetensors(t, filepath.Join(t.TempDir(), "m.safetensors"),
		[]fixtureTensor{{"mtp.experts.w", "F32", []int64{int64(batch), int64(rows), int64(cols)}, data}})
	st := storages["F32"]
	for _, share := range []int64{8 << 10, 64 << 10, 4 << 20} {
		p := newPlan(&ts[0], st, share, DefaultBudget)
		if p.bytes() > share || len(p.units) == 0 {
			t.Fatalf("share %d: plan of %d units, %d bytes", share, len(p.units), p.bytes())
		}
		if p.width%p.tile != 0 || int64(cols)%p.width != 0 && cols >= segWidth {
			t.Fatalf("share %d: width %d, tile %d", share, p.width, p.tile)
		}
		r := newBudgetReader(share)
		buf := make([]byte, 4*p.width)
		elems := make([]elem, p.width)
		for _, u := range p.units {
			ct, rt, b := u%p.colUnits, (u/p.colUnits)%p.rowUnits, u/(p.colUnits*p.rowUnits)
			for row := range p.height {
				if err := r.readAt(ts[0].Path, buf, p.rowOffset(u, row)); err != nil {
					t.Fatal(err)
				}
				st.decodeElems(buf, elems)
				for k, e := range elems {
					want := float64(b*1_000_000 + (rt*p.height+row)*1000 + ct*p.width + int64(k))
					if e.v != want {
						t.Fatalf("share %d, unit %d, row %d, col %d: read %v, want %v", share, u, row, k, e.v, want)
					}
				}
			}
		}
		if r.read != p.bytes() {
			t.Fatalf("share %d: read %d, plan %d", share, r.read, p.bytes())
		}
		t.Logf("cols %d, share %d: %d units of %dx%d", cols, share, len(p.units), p.height, p.width)
	}
}
