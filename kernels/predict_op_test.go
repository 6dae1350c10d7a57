package kernels

import (
	"errors"
	"strings"
	"testing"
)

// PredictOp prices what PredictRow and the op methods price, and refuses
// a choice no op takes with a QueryError naming the OpQuery field.
func TestPredictOp(t *testing.T) {
	c := NewCoster(mustGPU(t, "h200"))
	moe := OpRow{Op: "moe", Tokens: 8, Experts: 128, TopK: 8, Hidden: 2048, Inter: 768, DType: BF16}
	gemm := OpRow{Op: "GEMM", M: 8, N: 4096, K: 4096, DType: BF16}
	for name, tc := range map[string]struct {
		q    OpQuery
		want Cost
	}{
		"moe fused": {OpQuery{Row: moe, MoEKernel: MoEFused},
			must(t)(c.MoE(MoEShape{Tokens: 8, Experts: 128, TopK: 8, Hidden: 2048, Inter: 768, DType: BF16}))},
		"gemm as a row": {OpQuery{Row: gemm}, c.tensorScaledGEMM(BF16, 8, 4096, 4096)},
		"allreduce":     {OpQuery{Row: OpRow{Op: "allreduce"}, Bytes: 1 << 20, GPUs: 8}, c.Collective(AllReduce, 1<<20, 8)},
		"gdn reference": {OpQuery{Row: OpRow{Op: "gdn", Batch: 4, QLen: 1, Heads: 32, KVHeads: 16, HeadDim: 128}, StateDType: FP32, Reference: true},
			must(t)(c.GatedDeltaNetReference(GDNShape{Batch: 4, QLen: 1, KHeads: 16, VHeads: 32, KDim: 128, VDim: 128, StateDType: FP32}))},
	} {
		got, err := c.PredictOp(tc.q)
		if err != nil || got.Cost != tc.want {
			t.Errorf("%s: PredictOp = %+v, %v; want %+v", name, got.Cost, err, tc.want)
		}
	}
	for _, tc := range []struct {
		q     OpQuery
		field string
	}{
		{OpQuery{Row: moe, MoEKernel: "cutlass"}, "MoEKernel"},
		{OpQuery{Row: moe, MoEKernel: MoEFused, Skew: 5}, "Skew"},
		{OpQuery{Row: OpRow{Op: "collective"}, Collective: "broadcast", Bytes: 1, GPUs: 2}, "Collective"},
		{OpQuery{Row: OpRow{Op: "alltoall"}, Bytes: 1, GPUs: 1}, "GPUs"},
		{OpQuery{Row: OpRow{Op: "alltoall"}, Bytes: 0, GPUs: 2}, "Bytes"},
		{OpQuery{Row: OpRow{Op: "gdn", Batch: 1, QLen: 1, Heads: 8, HeadDim: 8}, StateDType: FP8}, "StateDType"},
		{OpQuery{Row: OpRow{Op: "gdn", Batch: 1, QLen: 1, Heads: 8, HeadDim: 8}, StateDType: FP32, Reference: true, GDNMode: GDNDecode}, "GDNMode"},
	} {
		var qe *QueryError
		if _, err := c.PredictOp(tc.q); !errors.As(err, &qe) || qe.Field != tc.field {
			t.Errorf("PredictOp(%+v) err = %v, want a QueryError on %s", tc.q, err, tc.field)
		}
	}
	var se *ShapeError
	_, err := c.PredictOp(OpQuery{Row: OpRow{Op: "attention", Batch: 1, QLen: 1, KVLen: 8, Heads: 10, KVHeads: 4, HeadDim: 64}, Prefill: true})
	if !errors.As(err, &se) || len(se.Dims) != 2 || se.Dims[0] != "heads" || se.Dims[1] != "kv_heads" {
		t.Errorf("prefill attention 10 over 4: err = %v, want a ShapeError on heads, kv_heads", err)
	}
}

// NVFP4 weights need FP4 tensor cores: PredictOp refuses them on Hopper
// with predict's message, and prices them on Blackwell.
func TestPredictOpRefusesNVFP4OnHopper(t *testing.T) {
	tests := []struct {
		gpu, op string
		dt      DType
		refused bool
	}{
		{"h200", "gemm", NVFP4, true},
		{"h100", "moe", NVFP4, true},
		{"h200", "lm_head", NVFP4, true},
		{"h200", "gemm", FP8, false},
		{"b200", "gemm", NVFP4, false},
		{"gb300", "moe", NVFP4, false},
		{"h200", "attention", FP8, false},
	}
	for _, tc := range tests {
		t.Run(tc.gpu+"/"+tc.op+"/"+string(tc.dt), func(t *testing.T) {
			c := NewCoster(mustGPU(t, tc.gpu))
			r := OpRow{Op: tc.op, DType: tc.dt, M: 64, N: 7168, K: 2048, Tokens: 64, Experts: 64, TopK: 8, Hidden: 4096, Inter: 512,
				Batch: 8, QLen: 1, KVLen: 1024, Heads: 16, KVHeads: 1, HeadDim: 256}
			_, err := c.PredictOp(OpQuery{Row: r, MoEKernel: MoEFused})
			var qe *QueryError
			switch {
			case tc.refused && !errors.As(err, &qe):
				t.Fatalf("err = %v, want a QueryError", err)
			case tc.refused:
				want := tc.gpu + " has no FP4 tensor cores: NVFP4 weights need Blackwell (B200, B300, GB200, GB300); use fp8"
				if qe.Field != "DType" || qe.Reason != want {
					t.Errorf("got %+v, want reason %q", qe, want)
				}
			case err != nil:
				t.Errorf("err = %v", err)
			}
			if !tc.refused && strings.Contains(c.GPU().NoFP4(), "no FP4") != (tc.gpu[0] == 'h') {
				t.Errorf("NoFP4 = %q", c.GPU().NoFP4())
			}
		})
	}
}
