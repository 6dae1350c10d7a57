package kernels

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readAICFixture(t *testing.T, files ...string) *AICImport {
	t.Helper()
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join("testdata", "aic", f))
	}
	imp, err := ReadAICFiles(paths)
	if err != nil {
		t.Fatal(err)
	}
	return imp
}

// TestAICFixture reads the fixture in AIConfigurator's layout: every row of
// an op this project prices is used, the rest counted by reason.
func TestAICFixture(t *testing.T) {
	imp := readAICFixture(t, "gemm_perf.txt", "moe_perf.txt", "generation_attention_perf.txt", "gdn_perf.txt", "custom_allreduce_perf.txt")
	// gemm: 4 bf16 + 1 per-tensor fp8 (fp8_block skipped); attention: 3 (one sliding window skipped)
	if len(imp.Ops.Rows) != 8 || len(imp.Engine.FusedMoE) != 3 || len(imp.Engine.GDN) != 4 || len(imp.Colls.Rows) != 3 {
		t.Fatalf("ops %d, moe %d, gdn %d, allreduce %d; want 8, 3, 4, 3", len(imp.Ops.Rows), len(imp.Engine.FusedMoE), len(imp.Engine.GDN), len(imp.Colls.Rows))
	}
	if imp.Rows != 18 || imp.SkippedText() != "1 gdn causal_conv1d_fn, 1 gemm fp8_block, 1 moe rows of a second routing distribution, 1 moe w4a16_mxfp4, 1 sliding-window attention" {
		t.Errorf("rows %d, skipped %s", imp.Rows, imp.SkippedText())
	}
	// ms -> us; generation attention: kv_len = step + isl; MoE sizes split by tp / ep
	a := imp.Ops.Rows[5] // files in name order: gemm rows, then attention
	if a.Op != "attention" || a.KVLen != 1025 || a.QLen != 1 || a.Heads != 16 || a.KVHeads != 1 || a.HeadDim != 256 || a.LatencyUS != 12 {
		t.Errorf("attention row %+v", a)
	}
	m := imp.Engine.FusedMoE[0]
	if m.Inter != 256 || m.Experts != 512 || m.TopK != 10 || math.Abs(m.LatencyUS-20) > 1e-9 || m.Kernel != "flashinfer_trtllm" {
		t.Errorf("moe row %+v", m)
	}
	if c := imp.Colls.Rows[1]; c.Bytes != 2*1048576 || c.GPUs != 4 || math.Abs(c.LatencyUS-30) > 1e-9 {
		t.Errorf("all-reduce row %+v: bytes are elements x 2", c)
	}
	if g := imp.Engine.GDN[2]; g.Mode != GDNDecode || g.QLen != 1 || g.Batch != 8 || g.Heads != 16 || g.KVHeads != 4 {
		t.Errorf("gdn decode row %+v", g)
	}
	if err := imp.CheckDevice("b200"); err != nil {
		t.Error(err)
	}
	for _, other := range []string{"h200", "gb200"} {
		if err := imp.CheckDevice(other); err == nil || !strings.Contains(err.Error(), `measured on "NVIDIA B200"`) {
			t.Errorf("%s: %v", other, err)
		}
	}
}

// TestAICPricesFromMeasurement: a B200 Coster built from the fixture
// reproduces the measured rows and interpolates between them.
func TestAICPricesFromMeasurement(t *testing.T) {
	imp := readAICFixture(t, "moe_perf.txt", "gdn_perf.txt", "gemm_perf.txt")
	c := CosterFromAIC(mustGPU(t, "b200"), imp)
	moe := must(t)(c.MoE(MoEShape{Tokens: 64, Experts: 512, TopK: 10, Hidden: 4096, Inter: 256, DType: BF16}))
	if want := loglog(64, 16, 90, 256, 360); math.Abs(moe.Seconds*1e6-want) > 1e-9 || moe.Source != SourceMeasured {
		t.Errorf("fused MoE at 64 tokens %.4f us (%s), want %.4f", moe.Seconds*1e6, moe.Source, want)
	}
	g, err := c.GDN(GDNShape{Batch: 1, QLen: 2048, KHeads: 4, VHeads: 16, KDim: 128, VDim: 128}, GDNPrefill)
	if err != nil || math.Abs(g.Seconds*1e6-math.Sqrt(50*150)) > 1e-9 || g.Kernel != "chunk_gated_delta_rule" {
		t.Errorf("gdn prefill %.4f us %q %v, want %.4f", g.Seconds*1e6, g.Kernel, err, math.Sqrt(50*150))
	}
	if gm := must(t)(c.GEMM(BF16, 256, 4096, 4096)); math.Abs(gm.Seconds*1e6-14) > 0.01*14 || gm.Source != SourceMeasured {
		t.Errorf("gemm at a measured point %.3f us (%s), want 14", gm.Seconds*1e6, gm.Source)
	}
	// without the tables the B200 is priced by carried-over efficiencies
	if must(t)(NewCoster(mustGPU(t, "b200")).MoE(MoEShape{Tokens: 64, Experts: 512, TopK: 10, Hidden: 4096, Inter: 256, DType: BF16})).Source == SourceMeasured {
		t.Error("b200 without tables priced as measured")
	}
}

func TestAICErrors(t *testing.T) {
	head := "framework,version,device,op_name,kernel_source,gemm_dtype,m,n,k,latency\n"
	for _, tc := range []struct{ data, want string }{
		{"op,m\ngemm,1\n", `g.txt:1: header has no "framework" column`},
		{head + "SGLang,1,NVIDIA B200,gemm,s,bfloat16,0,16,16,0.1\n", "g.txt:2: column m"},
		{head + "SGLang,1,NVIDIA B200,gemm,s,bfloat16,1,16,16,-1\n", "g.txt:2: column latency"},
		{head + "SGLang,1,NVIDIA B200,context_attention,s,bfloat16,1,16,16,0.1\n", "no row of an op this project prices"},
		{"framework,version,device,op_name,kernel_source,moe_dtype,num_tokens,hidden_size,inter_size,topk,num_experts,moe_tp_size,moe_ep_size,distribution,latency\n" +
			"S,1,NVIDIA B200,moe,k,bfloat16,1,4096,1000,8,256,3,1,uniform,0.1\n", "g.txt:2: inter_size 1000 / moe_tp_size 3"},
	} {
		if _, err := ParseAICTables(map[string][]byte{"g.txt": []byte(tc.data)}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.data, err, tc.want)
		}
	}
	dir := t.TempDir()
	if _, err := ReadAICFiles([]string{dir}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
	many := make([]string, maxAICFiles+1)
	if _, err := ReadAICFiles(many); err == nil {
		t.Error("too many files accepted")
	}
	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(big, make([]byte, maxAICFileBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAICFiles([]string{big}); err == nil {
		t.Error("oversized file accepted")
	}
}

func FuzzParseAICTables(f *testing.F) {
	for _, n := range []string{"gemm_perf.txt", "moe_perf.txt", "generation_attention_perf.txt", "gdn_perf.txt", "custom_allreduce_perf.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", "aic", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		imp, err := ParseAICTables(map[string][]byte{"f.txt": data})
		if err != nil {
			return
		}
		if imp.Rows != len(imp.Ops.Rows)+len(imp.Engine.FusedMoE)+len(imp.Engine.GDN)+len(imp.Colls.Rows) {
			t.Fatalf("rows %d do not add up", imp.Rows)
		}
		for _, r := range imp.Ops.Rows {
			if !(r.LatencyUS > 0) {
				t.Fatalf("row %+v", r)
			}
		}
	})
}
