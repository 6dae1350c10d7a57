package kernels

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCatalogFigures(t *testing.T) {
	tests := []struct {
		name           string
		hbm, bw, bf16  float64
		fp4, nvlink    float64
		domain, node   int
		computeDT      DType
		sourcesAtLeast int
	}{
		{"h100", 80e9, 3.35e12, 989e12, 0, 450e9, 8, 8, BF16, 6},
		{"h200", 141e9, 4.8e12, 989e12, 0, 450e9, 8, 8, BF16, 6},
		{"b200", 180e9, 8e12, 2250e12, 9000e12, 900e9, 8, 8, NVFP4, 6},
		{"b300", 288e9, 8e12, 2250e12, 14000e12, 900e9, 8, 8, NVFP4, 6},
		{"gb200", 186e9, 8e12, 2500e12, 10000e12, 900e9, 72, 4, NVFP4, 6},
		{"gb300", 288e9, 8e12, 2500e12, 15000e12, 900e9, 72, 4, NVFP4, 6},
	}
	for _, tc := range tests {
		g, err := lookupGPU(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if g.HBMBytes != tc.hbm || g.HBMBandwidth != tc.bw || g.Peak[BF16] != tc.bf16 || g.Peak[NVFP4] != tc.fp4 ||
			g.NVLinkBandwidth != tc.nvlink || g.NVLinkDomain != tc.domain || g.GPUsPerNode != tc.node {
			t.Errorf("%s = %+v", tc.name, g)
		}
		if _, dt := g.ComputeRate(NVFP4); dt != tc.computeDT {
			t.Errorf("%s computes NVFP4 GEMMs as %s, want %s", tc.name, dt, tc.computeDT)
		}
		if len(g.Sources) < tc.sourcesAtLeast {
			t.Errorf("%s has %d sources, want one per figure", tc.name, len(g.Sources))
		}
	}
	if g, err := lookupGPU("H200-SXM"); err != nil || g.Name != "h200" {
		t.Errorf("alias lookup: %v %v", g, err)
	}
	if _, err := lookupGPU("a100"); err == nil || !strings.Contains(err.Error(), "gb300") {
		t.Errorf("unknown GPU error should list the catalog: %v", err)
	}
	// Callers get copies.
	g, _ := lookupGPU("h200")
	g.Peak[BF16] = 1
	if g2, _ := lookupGPU("h200"); g2.Peak[BF16] != 989e12 {
		t.Error("LookupGPU returned shared state")
	}
}

// testCatalog is the embedded catalog, fitted once for the package's tests.
var testCatalog = DefaultCatalog()

func lookupGPU(name string) (*GPU, error) { return testCatalog.Lookup(name) }

func TestLoadCatalogFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpus.yaml")
	data := `gpus:
  - name: h200
    hbm_gb: 141
    hbm_tb_per_s: 4.3
    tflops: {bf16: 790}
    nvlink_gb_per_s: 450
    nvlink_domain: 8
    network_gb_per_s: 50
    sources: {hbm_tb_per_s: "measured copy"}
  - name: r100
    aliases: [rubin]
    hbm_gb: 288
    hbm_tb_per_s: 20
    tflops: {bf16: 4000, fp8: 17500, nvfp4: 35000}
    nvlink_gb_per_s: 1800
    nvlink_domain: 72
    network_gb_per_s: 200
`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := LoadCatalogFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := cat.Lookup("rubin"); err != nil || g.NVLinkDomain != 72 || g.Peak[NVFP4] != 35000e12 {
		t.Errorf("added GPU: %+v %v", g, err)
	}
	if g, _ := cat.Lookup("h200"); g.HBMBandwidth != 4.3e12 {
		t.Errorf("override did not replace h200: %v", g.HBMBandwidth)
	}
	if g, err := cat.Lookup("gb300"); err != nil || g.Peak[NVFP4] != 15000e12 {
		t.Errorf("embedded GPUs must stay: %v", err)
	}
	// The catalog is a value: loading a file changes no other catalog.
	if g, _ := lookupGPU("h200"); g.HBMBandwidth != 4.8e12 {
		t.Errorf("the file changed the default catalog: h200 at %v B/s", g.HBMBandwidth)
	}
	if _, err := lookupGPU("rubin"); err == nil {
		t.Error("the file's GPU leaked into the default catalog")
	}
	// The file's h200 is fitted with its own figures, apart from the
	// default catalog's.
	if cat.Calibrations() == testCatalog.Calibrations() {
		t.Error("two catalogs share calibrations")
	}
}

func TestParseCatalogErrors(t *testing.T) {
	base := "gpus:\n  - name: x\n    hbm_gb: 1\n    hbm_tb_per_s: 1\n    tflops: {bf16: 1}\n    nvlink_gb_per_s: 1\n    nvlink_domain: 8\n    network_gb_per_s: 1\n"
	tests := []struct{ name, data, want string }{
		{"unknown field", base + "    colour: red\n", "colour"},
		{"negative bandwidth", strings.Replace(base, "hbm_tb_per_s: 1", "hbm_tb_per_s: -1", 1), "hbm_tb_per_s"},
		{"no bf16", strings.Replace(base, "bf16: 1", "fp8: 1", 1), "bf16"},
		{"bad dtype", strings.Replace(base, "bf16: 1", "bf16: 1, fp5: 2", 1), "fp5"},
		{"domain", strings.Replace(base, "nvlink_domain: 8", "nvlink_domain: 0", 1), "nvlink_domain"},
		{"node larger than the domain", base + "    gpus_per_node: 16\n", "gpus_per_node"},
		{"negative node", base + "    gpus_per_node: -4\n", "gpus_per_node"},
		{"duplicate", base + strings.TrimPrefix(base, "gpus:\n"), "duplicate"},
		{"no name", strings.Replace(base, "name: x", "name: ''", 1), "missing name"},
		{"empty", "", "no gpus"},
		{"not the schema", "gpu: [{name: x}]\n", "gpu"},
	}
	for _, tc := range tests {
		_, err := ParseCatalog("c.yaml", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "c.yaml") {
			t.Errorf("%s: error %v, want the file and %q", tc.name, err, tc.want)
		}
	}
}

func FuzzParseCatalog(f *testing.F) {
	f.Add(embeddedCatalog)
	f.Add([]byte("gpus: [{name: a, hbm_gb: 1, hbm_tb_per_s: 1, tflops: {bf16: 1}, nvlink_gb_per_s: 1, nvlink_domain: 1, network_gb_per_s: 1}]"))
	f.Add([]byte("gpus: &a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCatalog("fuzz.yaml", data)
		if err != nil {
			return
		}
		for _, n := range c.Names() {
			g, err := c.Lookup(n)
			if err != nil || !(g.HBMBandwidth > 0) || !(g.Peak[BF16] > 0) {
				t.Fatalf("accepted unusable GPU %+v (%v)", g, err)
			}
			must(t)(NewCoster(g).GEMM(BF16, 1, 1, 1))
		}
	})
}

func TestBackends(t *testing.T) {
	tests := []struct {
		engine, name string
		dt           DType
		want         string
		fellBack     bool
	}{
		// SGLang's UnquantizedFusedMoEMethod serves BF16 on
		// flashinfer_trtllm (see TestSGLangUnquantizedMoE).
		{"sglang", "flashinfer_trtllm", BF16, "flashinfer_trtllm", false},
		{"sglang", "flashinfer_cutedsl", BF16, "triton", true},
		{"sglang", "flashinfer_trtllm", NVFP4, "flashinfer_trtllm", false},
		{"sglang", "auto", NVFP4, "flashinfer_trtllm", false},
		// Fp8MoEMethod.create_moe_runner (v0.5.14): auto stays on DeepGEMM
		// only with a DeepEP-class all-to-all, else the Triton fused MoE
		// (a model rule, not this table, moves Qwen3.5/DeepSeek on SM100).
		{"sglang", "", FP8, "triton", false},
		{"sglang", "deep_gemm", BF16, "triton", true},
		{"vllm", "flashinfer_trtllm", BF16, "flashinfer_trtllm", false},
		{"vllm", "deep_gemm", NVFP4, "marlin", true},
		{"TensorRT-LLM", "trtllm", BF16, "cutlass", true},
	}
	for _, tc := range tests {
		b, fell, err := BackendFor(tc.engine, tc.name, tc.dt)
		if err != nil || b.Name != tc.want || fell != tc.fellBack {
			t.Errorf("%s %s %s: got %s fellBack=%v err=%v, want %s fellBack=%v", tc.engine, tc.name, tc.dt, b.Name, fell, err, tc.want, tc.fellBack)
		}
		if err == nil && !b.Accepts(tc.dt) {
			t.Errorf("%s %s %s resolved to %s which does not accept it", tc.engine, tc.name, tc.dt, b.Name)
		}
	}
	for _, bad := range [][2]string{{"llama.cpp", "auto"}, {"sglang", "nope"}} {
		if _, _, err := BackendFor(bad[0], bad[1], BF16); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	// The fallback is slower: the draft's MoE costs more than the target's kernel would.
	tri, _, _ := BackendFor("sglang", "triton", BF16)
	fast, _, _ := BackendFor("sglang", "flashinfer_trtllm", NVFP4)
	c := Cost{Seconds: 1}
	if tri.Scale(c).Seconds <= fast.Scale(c).Seconds {
		t.Error("the Triton fallback must price slower than flashinfer_trtllm")
	}
	if len(Backends()) < 10 {
		t.Errorf("only %d backends", len(Backends()))
	}
}

func TestParseDType(t *testing.T) {
	for in, want := range map[string]DType{"BF16": BF16, "bfloat16": BF16, "e4m3": FP8, "fp4": NVFP4, " int4 ": INT4} {
		if got, err := ParseDType(in); err != nil || got != want {
			t.Errorf("ParseDType(%q) = %v %v", in, got, err)
		}
	}
	if _, err := ParseDType("fp6"); err == nil {
		t.Error("fp6 accepted")
	}
	if NVFP4.Bytes() != 0.5625 || FP8.Bytes() != 1 || BF16.Bytes() != 2 {
		t.Error("dtype sizes")
	}
}
