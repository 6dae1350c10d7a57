package kernels

import "testing"

// The bar on the H200 measured here: held-out median error of 10%
// or better for gemm, moe and attention, and on the separately measured
// off-grid shapes the same 10% median with no op class worse than 20%.
func TestMeasuredH200MeetsBar(t *testing.T) {
	ops, held, _, err := MeasuredTables("h200")
	if err != nil {
		t.Fatal(err)
	}
	if ops == nil {
		t.Skip("no measured H200 table in this build")
	}
	v, err := ValidateOps(mustGPU(t, "h200"), ops, held)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range v.Ops {
		if (o.Op == "gemm" || o.Op == "moe" || o.Op == "attention") && o.MedianAbsErr > 0.10 {
			t.Errorf("%s: held-out median error %.1f%% > 10%%", o.Op, 100*o.MedianAbsErr)
		}
	}
	if !v.MeetsBar {
		t.Error("MeetsBar is false")
	}
	if v.Independent == nil {
		return
	}
	if v.Independent.MedianAbsErr > 0.10 {
		t.Errorf("held-aside median error %.1f%% > 10%%", 100*v.Independent.MedianAbsErr)
	}
	for _, o := range v.Independent.Ops {
		if o.MedianAbsErr > 0.20 {
			t.Errorf("held-aside %s: median error %.1f%% > 20%%", o.Op, 100*o.MedianAbsErr)
		}
	}
}

// The embedded H200 tables are used: an H200 Coster interpolates measured
// shapes, other GPUs carry its efficiencies over and say so.
func TestEmbeddedCalibration(t *testing.T) {
	ops, _, _, _ := MeasuredTables("h200")
	if ops == nil {
		t.Skip("no measured H200 table in this build")
	}
	h := NewCoster(mustGPU(t, "h200"))
	r := ops.Rows[len(ops.Rows)/2]
	c, err := h.PredictRow(r)
	if err != nil || c.Source != SourceMeasured {
		t.Fatalf("%+v: %v %v", r, c, err)
	}
	if b := NewCoster(mustGPU(t, "b200")); must(t)(b.GEMM(BF16, 64, 4096, 4096)).Source != SourceCarryOver || b.tables != nil {
		t.Error("b200 costs must be carried over, without the H200's per-shape grids")
	}
	// The H100 shares the H200's die: it borrows the grids, scaled by its
	// own memory bandwidth, and still says "carried over".
	h100 := NewCoster(mustGPU(t, "h100"))
	c1, _ := h100.PredictRow(r)
	if h100.tables == nil || c1.Source != SourceCarryOver || !(c1.Seconds >= c.Seconds) {
		t.Errorf("h100 on a measured H200 shape: %+v (h200 %+v)", c1, c)
	}
}
