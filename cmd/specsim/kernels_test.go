package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKernelsPredictJSON(t *testing.T) {
	code, out, stderr := runCLI("kernels", "predict", "--gpu", "h200", "--op", "gemm", "--m", "1", "--n", "4096", "--k", "4096", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var p struct {
		LatencyUS float64 `json:"latency_us"`
		Source    string  `json:"source"`
		Bytes     float64 `json:"bytes"`
		FLOPs     float64 `json:"flops"`
		Bound     string  `json:"bound"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	// One token through a 4096x4096 BF16 weight: 32 MiB of weights at
	// 4.8 TB/s is 7 us at the datasheet rate; the model must be above that.
	if p.Bytes != 4096*4096*2+2*4096*2 || p.FLOPs != 2*4096*4096 || p.LatencyUS < 7 || p.LatencyUS > 40 || p.Bound == "" {
		t.Errorf("prediction %+v", p)
	}
	if p.Source != "measured-interpolated" && p.Source != "roofline" {
		t.Errorf("source %q", p.Source)
	}
}

func TestKernelsPredictCarriedOverSaysSo(t *testing.T) {
	code, out, _ := runCLI("kernels", "predict", "--gpu", "gb300", "--op", "moe", "--tokens", "8", "--experts", "256",
		"--topk", "8", "--hidden", "7168", "--inter", "256", "--dtype", "nvfp4", "--json")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out, `"note"`) {
		t.Errorf("a GPU without tables must say where its efficiencies come from:\n%s", out)
	}
	code, out, _ = runCLI("kernels", "predict", "--gpu", "gb300", "--op", "collective", "--collective", "alltoall", "--gpus", "72", "--bytes", "1048576")
	if code != exitOK || !strings.Contains(out, "alltoall") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

func TestKernelsPredictInput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "shapes.csv")
	csv := "op,dtype,m,n,k,tokens,experts,topk,hidden,inter,batch,q_len,kv_len,heads,kv_heads,head_dim,latency_us\n" +
		"gemm,fp8,64,7168,2048,,,,,,,,,,,,\n" +
		"attention,bf16,,,,,,,,,8,4,32768,32,4,128,99\n" +
		"gdn,bf16,,,,,,,,,16,4,,32,16,128,\n" +
		"rmsnorm,bf16,,,,128,,,4096,,,,,,,,\n"
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI("kernels", "predict", "--gpu", "h200", "--input", path, "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Predictions []struct {
			Row       int     `json:"row"`
			Op        string  `json:"op"`
			LatencyUS float64 `json:"latency_us"`
		} `json:"predictions"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	wantOps := []string{"gemm", "attention", "gdn", "rmsnorm"}
	if len(r.Predictions) != len(wantOps) {
		t.Fatalf("%d predictions, want %d", len(r.Predictions), len(wantOps))
	}
	for i, p := range r.Predictions {
		if p.Row != i+1 || p.Op != wantOps[i] || !(p.LatencyUS > 0) {
			t.Errorf("prediction %d = %+v", i, p)
		}
	}
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("op,m,n\ngemm,1,\n"), 0o644)
	code, _, stderr = runCLI("kernels", "predict", "--input", bad, "--json")
	if code != exitBadInput || !strings.Contains(stderr, "bad.csv:2") {
		t.Errorf("exit %d, stderr %q: want exit 2 naming the file and line", code, stderr)
	}
}

func TestKernelsValidateSynthetic(t *testing.T) {
	code, out, stderr := runCLI("kernels", "validate", "--gpu", "h200", "--table", "../../kernels/testdata/synthetic_ops.csv", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var v struct {
		HeldoutPoints int     `json:"heldout_points"`
		MedianAbsErr  float64 `json:"median_abs_err"`
		P90AbsErr     float64 `json:"p90_abs_err"`
		Ops           []struct {
			Op           string  `json:"op"`
			MedianAbsErr float64 `json:"median_abs_err"`
		} `json:"ops"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.HeldoutPoints < 50 || v.MedianAbsErr > 0.01 || len(v.Ops) != 7 {
		t.Errorf("validation %+v", v)
	}
	code, out, stderr = runCLI("kernels", "validate", "--op", "collective", "--collective-table", "../../kernels/testdata/synthetic_collectives.csv", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var cv struct {
		GPUCounts     []int   `json:"gpu_counts"`
		MedianAbsErr  float64 `json:"median_abs_err"`
		HeldoutPoints int     `json:"heldout_points"`
	}
	if err := json.Unmarshal([]byte(out), &cv); err != nil {
		t.Fatal(err)
	}
	if len(cv.GPUCounts) != 3 || cv.HeldoutPoints == 0 || cv.MedianAbsErr > 0.015 {
		t.Errorf("collective validation %+v", cv)
	}
	code, out, _ = runCLI("kernels", "validate", "--table", "../../kernels/testdata/synthetic_ops.csv", "--op", "gemm", "--format", "markdown")
	if code != exitOK || !strings.Contains(out, "| gemm |") {
		t.Errorf("markdown validate: exit %d\n%s", code, out)
	}
}

func TestKernelsGPUsAndBackends(t *testing.T) {
	code, out, _ := runCLI("kernels", "gpus", "--json")
	if code != exitOK || !strings.Contains(out, `"gb300"`) || !strings.Contains(out, `"sources"`) {
		t.Errorf("gpus: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI("kernels", "backends", "--engine", "sglang", "--backend", "flashinfer_cutedsl", "--dtype", "bf16")
	if code != exitOK || !strings.Contains(out, "triton (fallback)") {
		t.Errorf("backends: exit %d\n%s", code, out)
	}
}

func TestKernelsEfficiencies(t *testing.T) {
	code, out, _ := runCLI("kernels", "efficiencies", "--gpu", "b200", "--json")
	var r struct {
		Calibration  string `json:"calibration"`
		Efficiencies []struct {
			Class      string `json:"class"`
			DType      string `json:"dtype"`
			Efficiency struct {
				Mem float64 `json:"mem"`
			} `json:"efficiency"`
		} `json:"efficiencies"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// B200 computes NVFP4 natively: three dtypes per class.
	if len(r.Efficiencies) != 8*3 || !(r.Efficiencies[0].Efficiency.Mem > 0) || r.Calibration == "" {
		t.Errorf("%+v", r)
	}
}

func TestKernelsGPUCatalogFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpus.yaml")
	cat := "gpus:\n  - name: testgpu-r100\n    arch: blackwell\n    hbm_gb: 288\n    hbm_tb_per_s: 20\n    tflops: {bf16: 4000, fp8: 17500, nvfp4: 35000}\n    nvlink_gb_per_s: 1800\n    nvlink_domain: 72\n    network_gb_per_s: 200\n"
	if err := os.WriteFile(path, []byte(cat), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI("kernels", "predict", "--gpu-catalog", path, "--gpu", "testgpu-r100", "--op", "copy", "--n", "1000000000", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var p struct {
		LatencyUS float64 `json:"latency_us"`
		Source    string  `json:"source"`
	}
	json.Unmarshal([]byte(out), &p)
	// 2 GB of traffic at 20 TB/s is 100 us at the datasheet rate.
	if p.LatencyUS < 100 || p.LatencyUS > 200 || p.Source != "roofline-carried-over" {
		t.Errorf("%+v", p)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("gpus:\n  - name: x\n    hbm_gb: -1\n"), 0o644)
	if code, _, stderr := runCLI("kernels", "gpus", "--gpu-catalog", bad); code != exitBadInput || !strings.Contains(stderr, "bad.yaml") {
		t.Errorf("bad catalog: exit %d, %q", code, stderr)
	}
}

func TestKernelsBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"kernels"},
		{"kernels", "nope"},
		{"kernels", "predict", "--gpu", "a100", "--op", "gemm", "--m", "1", "--n", "1", "--k", "1"},
		{"kernels", "predict", "--op", "gemm", "--m", "1"},
		{"kernels", "predict", "--op", "collective", "--gpus", "1", "--bytes", "10"},
		{"kernels", "predict", "--op", "gemm", "--dtype", "fp6", "--m", "1", "--n", "1", "--k", "1"},
		{"kernels", "predict", "--gpu-catalog", "/nonexistent.yaml", "--op", "gemm", "--m", "1", "--n", "1", "--k", "1"},
		{"kernels", "validate", "--table", "/nonexistent.csv"},
	} {
		if code, _, _ := runCLI(args...); code != exitBadInput {
			t.Errorf("%v: exit %d, want %d", args, code, exitBadInput)
		}
	}
	// The library's shape and query errors name the flags that set them.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--op", "lm_head", "--m", "0", "--n", "10", "--k", "10"}, "needs positive tokens 0 (--m)"},
		{[]string{"--op", "gdn", "--batch", "1", "--q-len", "1", "--heads", "6", "--kv-heads", "4", "--head-dim", "128"}, "(--heads --kv-heads)"},
		{[]string{"--op", "moe", "--tokens", "1", "--experts", "8", "--topk", "2", "--hidden", "8", "--inter", "8", "--skew", "9"}, "--skew 9: want 0..4"},
		{[]string{"--op", "allreduce", "--bytes", "100"}, "--gpus 0: a collective needs 2 or more"},
	} {
		code, _, stderr := runCLI(append([]string{"kernels", "predict", "--gpu", "h200"}, tc.args...)...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitBadInput, tc.want)
		}
	}
}

// TestKernelsPredictShapeBounds: head counts that do not group and
// dimensions past 2^27 (134217728) exit 2 naming the flag; a GQA-shaped
// GDN (16 value heads over 4 key heads) still prices.
func TestKernelsPredictShapeBounds(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--op", "gdn", "--batch", "1", "--q-len", "1", "--heads", "16", "--kv-heads", "3", "--head-dim", "128"}, "v_heads 16 not divisible by kv_heads 3 (--heads --kv-heads)"},
		{[]string{"--op", "attention", "--batch", "1", "--q-len", "1", "--kv-len", "1024", "--heads", "32", "--kv-heads", "5", "--head-dim", "128"}, "heads 32 not divisible by kv_heads 5 (--heads --kv-heads)"},
		{[]string{"--op", "gemm", "--m", "99999999999", "--n", "4096", "--k", "4096"}, "--m 99999999999: want 0..134217728"},
		{[]string{"--op", "gemm", "--m", "1", "--n", "4096", "--k", "134217729"}, "--k 134217729: want 0..134217728"},
		{[]string{"--op", "gdn", "--batch", "100000000", "--q-len", "100000000", "--heads", "32", "--head-dim", "128"}, "--batch 100000000 x --q-len 100000000 = 10000000000000000 tokens in one forward: want at most 134217728"},
	} {
		code, _, errs := runCLI(append([]string{"kernels", "predict"}, tc.args...)...)
		if code != exitBadInput || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
	if code, _, errs := runCLI("kernels", "predict", "--op", "gdn", "--batch", "1", "--q-len", "1", "--heads", "16", "--kv-heads", "4", "--head-dim", "128"); code != exitOK {
		t.Errorf("16 heads over 4: exit %d: %s", code, errs)
	}
}

// kernels predict refuses NVFP4 weights on a GPU without FP4 tensor cores
// with predict's message, for one shape and for a row of --input.
func TestKernelsPredictRefusesNVFP4OnHopper(t *testing.T) {
	const why = "h200 has no FP4 tensor cores: NVFP4 weights need Blackwell (B200, B300, GB200, GB300); use fp8"
	dir := t.TempDir()
	shapes := filepath.Join(dir, "shapes.csv")
	if err := os.WriteFile(shapes, []byte("op,dtype,m,n,k\ngemm,bf16,64,7168,2048\ngemm,nvfp4,64,7168,2048\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--gpu", "h200", "--op", "gemm", "--dtype", "nvfp4", "--m", "8192", "--n", "7168", "--k", "7168"}, "--dtype nvfp4: " + why},
		{[]string{"--gpu", "h200", "--op", "moe", "--dtype", "nvfp4", "--tokens", "64", "--experts", "64", "--topk", "8", "--hidden", "4096", "--inter", "512"}, "--dtype nvfp4: " + why},
		{[]string{"--gpu", "h200", "--input", shapes}, shapes + ":3: dtype nvfp4: " + why},
	}
	for _, tc := range tests {
		code, out, errOut := runCLI(append([]string{"kernels", "predict"}, tc.args...)...)
		if code != exitBadInput || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
	if code, out, _ := runCLI("kernels", "predict", "--gpu", "b200", "--op", "gemm", "--dtype", "nvfp4", "--m", "64", "--n", "7168", "--k", "2048"); code != exitOK || !strings.Contains(out, "nvfp4") {
		t.Errorf("b200 nvfp4 gemm: exit %d\n%s", code, out)
	}
}

// kernels backends --engine labels what it resolved, for the target and
// the BF16 draft, and keeps the engine's whole table with the chosen
// backends marked.
func TestKernelsBackendsResolution(t *testing.T) {
	type resolved struct {
		Role, DType, Requested, Origin, Backend string
		FellBack                                bool `json:"fell_back"`
	}
	var r struct {
		Engine   string     `json:"engine"`
		GPU      string     `json:"gpu"`
		Resolved []resolved `json:"resolved"`
		Backends []struct {
			Name      string   `json:"name"`
			ChosenFor []string `json:"chosen_for"`
		} `json:"backends"`
	}
	tests := []struct {
		args          []string
		target, draft resolved
		chosen        map[string]string
		backends      int
		textMustHave  []string
	}{
		// No model: auto runs BF16 experts on Triton, and the draft inherits auto.
		{[]string{"--engine", "sglang", "--gpu", "gb300"},
			resolved{Role: "target", DType: "bf16", Requested: "auto", Origin: "engine default (auto)", Backend: "triton"},
			resolved{Role: "draft", DType: "bf16", Requested: "auto", Origin: "inherited from the target: engine default (auto)", Backend: "triton"},
			map[string]string{"triton": "target,draft"}, 9,
			[]string{"resolved on gb300 (blackwell)", "target  bf16", "draft   bf16", "no --architecture"}},
		// An NVFP4 target on CuTe DSL: the BF16 draft inherits the request and falls back to Triton.
		{[]string{"--engine", "sglang", "--gpu", "gb300", "--backend", "flashinfer_cutedsl", "--dtype", "nvfp4"},
			resolved{Role: "target", DType: "nvfp4", Requested: "flashinfer_cutedsl", Origin: "--moe-runner-backend", Backend: "flashinfer_cutedsl"},
			resolved{Role: "draft", DType: "bf16", Requested: "flashinfer_cutedsl", Origin: "inherited from the target: --moe-runner-backend", Backend: "triton", FellBack: true},
			map[string]string{"flashinfer_cutedsl": "target", "triton": "draft"}, 9,
			[]string{"triton (fallback)"}},
		// The model-specific auto rule (server_args.py) with the model named.
		{[]string{"--engine", "sglang", "--gpu", "b200", "--dtype", "fp8", "--architecture", "DeepseekV3ForCausalLM", "--quantization", "fp8"},
			resolved{Role: "target", DType: "fp8", Requested: "flashinfer_trtllm", Origin: "auto resolved to flashinfer_trtllm for DeepseekV3ForCausalLM (fp8) on blackwell", Backend: "flashinfer_trtllm"},
			resolved{Role: "draft", DType: "bf16", Requested: "flashinfer_trtllm", Origin: "inherited from the target: auto resolved to flashinfer_trtllm for DeepseekV3ForCausalLM (fp8) on blackwell", Backend: "flashinfer_trtllm"},
			map[string]string{"flashinfer_trtllm": "target,draft"}, 9, nil},
	}
	for _, tc := range tests {
		code, out, errOut := runCLI(append([]string{"kernels", "backends", "--json"}, tc.args...)...)
		r.Resolved, r.Backends = nil, nil
		if code != exitOK || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("%v: exit %d\n%s%s", tc.args, code, out, errOut)
		}
		if r.Engine != "sglang" || len(r.Resolved) != 2 || r.Resolved[0] != tc.target || r.Resolved[1] != tc.draft {
			t.Errorf("%v: engine %q resolved %+v; want %+v and %+v", tc.args, r.Engine, r.Resolved, tc.target, tc.draft)
		}
		if len(r.Backends) != tc.backends {
			t.Errorf("%v: %d backends, want the engine's %d", tc.args, len(r.Backends), tc.backends)
		}
		for _, b := range r.Backends {
			if got := strings.Join(b.ChosenFor, ","); got != tc.chosen[b.Name] {
				t.Errorf("%v: %s chosen for %q, want %q", tc.args, b.Name, got, tc.chosen[b.Name])
			}
		}
		_, text, _ := runCLI(append([]string{"kernels", "backends"}, tc.args...)...)
		for _, want := range tc.textMustHave {
			if !strings.Contains(text, want) {
				t.Errorf("%v: text lacks %q:\n%s", tc.args, want, text)
			}
		}
	}
}

// kernels backends refuses NVFP4 experts on a GPU without FP4 tensor
// cores, as kernels predict does (review 2 #9: H200 resolved cutlass,
// flashinfer_cutlass and cutlass); on B200 it resolves.
func TestKernelsBackendsRefusesNVFP4OnHopper(t *testing.T) {
	const why = "h200 has no FP4 tensor cores: NVFP4 weights need Blackwell"
	for _, c := range []struct{ engine, flag string }{{"sglang", "--dtype"}, {"vllm", "--dtype"}, {"trtllm", "--dtype"}, {"sglang", "--draft-dtype"}} {
		code, out, errs := runCLI("kernels", "backends", "--gpu", "h200", "--engine", c.engine, c.flag, "nvfp4")
		if code != exitBadInput || !strings.Contains(errs, c.flag+" nvfp4: "+why) || out != "" {
			t.Errorf("%s %s nvfp4 on h200: exit %d %q %q", c.engine, c.flag, code, out, errs)
		}
	}
	if code, _, errs := runCLI("kernels", "predict", "--gpu", "h200", "--op", "moe", "--dtype", "nvfp4"); code != exitBadInput || !strings.Contains(errs, why) {
		t.Errorf("kernels predict no longer refuses: %d %q", code, errs)
	}
	if code, out, errs := runCLI("kernels", "backends", "--gpu", "b200", "--engine", "sglang", "--dtype", "nvfp4"); code != exitOK || !strings.Contains(out, "target  nvfp4") {
		t.Errorf("b200: exit %d %s%s", code, out, errs)
	}
}

// kernels predict --input bounds a row's shape as the flags bound theirs:
// a GEMM row with m = 2^30 was priced (25 s) where --m 1073741824 exits 2.
func TestKernelsPredictInputBoundsDims(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, csv, want string // want: "" for exit 0, else the error's text
	}{
		{"in bounds", "op,dtype,m,n,k\ngemm,fp8,64,7168,2048\n", ""},
		{"m at the bound", "op,dtype,m,n,k\ngemm,fp8,134217728,16,16\n", ""},
		{"m past the bound", "op,dtype,m,n,k\ngemm,fp8,1073741824,7168,2048\n", ":2: column m: 1073741824: want 0..134217728"},
		{"copy bytes", "op,dtype,n\ncopy,bf16,1099511627776\n", ""},
		{"heads past the bound", "op,dtype,batch,q_len,kv_len,heads,kv_heads,head_dim\nattention,bf16,1,1,16,134217729,1,128\n", ":2: column heads: 134217729: want 0..134217728"},
		{"one forward's tokens", "op,dtype,batch,q_len,kv_len,heads,kv_heads,head_dim\nattention,bf16,100000,10000,4096,32,8,128\n", ":2: batch 100000 x q_len 10000 = 1000000000 tokens in one forward: want at most 134217728"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".csv")
		if err := os.WriteFile(path, []byte(tc.csv), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := runCLI("kernels", "predict", "--gpu", "h200", "--input", path, "--json")
		switch {
		case tc.want == "" && code != exitOK:
			t.Errorf("%s: exit %d: %s", tc.name, code, errs)
		case tc.want != "" && (code != exitBadInput || !strings.Contains(errs, path+tc.want) || out != ""):
			t.Errorf("%s: exit %d, stderr %q, want exit 2 and %q", tc.name, code, errs, path+tc.want)
		}
	}
}

// TestKernelsPredictInputWarnsUnreadColumns: a column the table does not
// read (a misspelt kv-len for kv_len would price as 0) is named on stderr;
// a file of known columns gets no warning.
func TestKernelsPredictInputWarnsUnreadColumns(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		csv, want string
	}{
		{"op,dtype,m,n,k,kv-len,note\ngemm,bf16,16,4096,4096,5,x\n", "columns kv-len, note are not read"},
		{"op,dtype,m,n,k\ngemm,bf16,16,4096,4096\n", ""},
	} {
		path := filepath.Join(dir, "shapes.csv")
		if err := os.WriteFile(path, []byte(c.csv), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := runCLI("kernels", "predict", "--gpu", "h200", "--input", path)
		if code != exitOK || c.want == "" && errs != "" || c.want != "" && !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", c.csv, code, errs, c.want)
		}
	}
}
