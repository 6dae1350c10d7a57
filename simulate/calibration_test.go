package simulate

import (
	"strings"
	"testing"
)

func TestParseCalibration(t *testing.T) {
	good := "version: 1\nentries:\n  - gpu: H200\n    params: {layer_fixed_us: 2, host_overhead_ms: 0.1, mem_efficiency_scale: 0.9, compute_efficiency_scale: 1}\n    band: {throughput: 0.1, latency: 0.2}\n"
	c, err := ParseCalibration([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	c.Path = "cal.yaml"
	e, err := c.For("h200", "")
	if err != nil || e.Engine != "sglang" || e.Params.MemScale != 0.9 {
		t.Fatalf("entry %+v err %v", e, err)
	}
	if _, err := c.For("h200", "vllm"); err == nil || !strings.Contains(err.Error(), "no entry for h200/vllm (it has h200/sglang)") {
		t.Errorf("missing entry: %v", err)
	}
	// Round trip through Marshal.
	data, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if d, err := ParseCalibration(data); err != nil || d.Entries[0].Params != c.Entries[0].Params {
		t.Errorf("round trip: %+v %v", d, err)
	}
	for _, tc := range []struct{ data, want string }{
		{"", "empty"},
		{"version: 2\nentries: [{gpu: h200}]\n", "version 2"},
		{"version: 1\n", "no entries"},
		{"version: 1\nentries: [{engine: sglang}]\n", "no gpu"},
		{"version: 1\nentries: [{gpu: h200}, {gpu: h200}]\n", "second entry"},
		{"version: 1\nentries: [{gpu: h200, params: {mem_efficiency_scale: 9}}]\n", "mem_efficiency_scale 9"},
		{"version: 1\nentries: [{gpu: h200, params: {host_overhead_ms: -5}}]\n", "host_overhead_ms"},
		{"version: 1\nentries: [{gpu: h200, band: {throughput: -1}}]\n", "band"},
		{"version: 1\nentries: [{gpu: h200, knob: 3}]\n", "knob"},
	} {
		if _, err := ParseCalibration([]byte(tc.data)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.data, err, tc.want)
		}
	}
}

func TestCalParamsApply(t *testing.T) {
	r, err := (Query{Model: "Qwen3.5-35B-A3B", Precision: "fp8", GPU: "h200", Topology: "agg:tp1", Workload: "fixed", ISL: 1024, OSL: 256,
		RangeRatio: 1, Spec: "none", SchedOverhead: -1, SpecOverhead: -1, Seed: 1}).Resolve(testCurves, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	topo, _ := ParseTopology("agg:tp1")
	step := func(p *CalParams) Breakdown {
		sc, err := r.WithCalibration(p).Scenario(topo, 8, 0)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := NewPlan(sc, r.GPU)
		if err != nil {
			t.Fatal(err)
		}
		return pl.decodeEngine().DecodeStep(8, 0, 1024)
	}
	base := step(nil)
	// +0.2 ms host time per iteration and +5 us per layer and forward (the
	// model has 40 layers): 0.2 ms + 40 x 5 us = 0.4 ms more overhead.
	p := Identity()
	p.HostOverheadMS, p.LayerFixedUS = 0.2, 5
	got := step(&p)
	if d := (got.Overhead - base.Overhead) * 1e3; d < 0.4-1e-9 || d > 0.4+1e-9 {
		t.Errorf("overhead moved %.6f ms, want 0.4", d)
	}
	if got.MoE != base.MoE {
		t.Error("shifts must not move kernel times")
	}
	// Halving the bandwidth slows the memory-bound decode MoE, by at most 2x.
	p = Identity()
	p.MemScale = 0.5
	if m := step(&p).MoE / base.MoE; m < 1.3 || m > 2.0001 {
		t.Errorf("MoE at half bandwidth: %.3fx", m)
	}
}

func FuzzParseCalibration(f *testing.F) {
	f.Add([]byte("version: 1\nentries:\n  - gpu: h200\n    engine: sglang\n    params: {mem_efficiency_scale: 1.1}\n"))
	f.Add([]byte("version: 1\nentries: [{gpu: b200, band: {throughput: 0.2, latency: 0.1}}]\n"))
	f.Add([]byte("&a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCalibration(data)
		if err != nil {
			return
		}
		for _, e := range c.Entries {
			if err := e.Params.Validate(); err != nil {
				t.Fatalf("accepted invalid params: %v", err)
			}
		}
	})
}

// A negative scale is a factor out of range, said so (its log is NaN, which
// read "not a finite number").
func TestCalParamsNegativeScale(t *testing.T) {
	for _, c := range []struct {
		p    CalParams
		want string
	}{
		{CalParams{MemScale: -1}, "mem_efficiency_scale -1: want a positive factor, 0.25..4"},
		{CalParams{ComputeScale: -0.5}, "compute_efficiency_scale -0.5: want a positive factor, 0.25..4"},
	} {
		if err := c.p.Validate(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
}
