package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specsim/specsim/audit/checkpointtest"
)

// hostile2 is one reproducer of the second hardening round (issue 14): the
// files it writes into a fresh directory, the command, and what must come
// back: the exit code and text stderr must hold (with {dir} replaced by the
// directory).
type hostile2 struct {
	name  string
	files map[string]string
	args  []string
	code  int
	want  []string
}

func runHostile2(t *testing.T, cases []hostile2) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = strings.ReplaceAll(a, "{dir}", dir)
			}
			type result struct {
				code        int
				out, stderr string
			}
			done := make(chan result, 1)
			go func() {
				code, out, errs := runCLI(args...)
				done <- result{code, out, errs}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("%v: no answer after 20 s", args)
			}
			if r.code != tc.code || strings.Contains(r.stderr, "internal error") {
				t.Errorf("%v: exit %d, stderr %q; want exit %d", args, r.code, r.stderr, tc.code)
			}
			for _, w := range tc.want {
				if w = strings.ReplaceAll(w, "{dir}", dir); !strings.Contains(r.stderr, w) {
					t.Errorf("%v: stderr %q lacks %q", args, r.stderr, w)
				}
			}
		})
	}
}

func TestHostileLogs(t *testing.T) {
	two := "Decode batch, #running-req: 4, accept len: 1.0\nDecode batch, #running-req: 4, accept len: 1e20\n"
	runHostile2(t, []hostile2{
		{"accept len 1e20 (makeslice panic)", map[string]string{"d.log": two}, []string{"logs", "{dir}/d.log"}, exitBadInput,
			[]string{"{dir}/d.log: line 2: accept len 1e+20 outside [1, 65]"}},
		{"accept len beyond --steps", map[string]string{"d.log": "Decode batch, #running-req: 4, accept len: 4.5\n"},
			[]string{"logs", "{dir}/d.log", "--model", "qwen3.5", "--steps", "3"}, exitBadInput, []string{"{dir}/d.log: line 1: accept len 4.5 outside [1, 4]"}},
		{"running overflows int", map[string]string{"d.log": "Decode batch, #running-req: 1e20, accept len: 2\n"},
			[]string{"logs", "{dir}/d.log"}, exitBadInput, []string{"{dir}/d.log: line 1: #running-req 1e+20"}},
	})
}

func TestHostileWork(t *testing.T) {
	runHostile2(t, []hostile2{
		// ran for hours: 1000007 requests of 6717 uncached tokens (agentx:
		// 64000 x e^(0.9^2/2) = 95949 mean prompt, 7% of it uncached), one
		// token per forward
		{"predict --chunk 1 --requests 1000000", nil, []string{"predict", "--workload", "agentx-synthetic", "--chunk", "1", "--requests", "1000000"}, exitBadInput,
			[]string{"1000007 requests x ceil(6717 uncached prompt tokens / --chunk 1)", "raise --chunk or lower --requests"}},
		{"fixed lengths, chunk 1", nil, []string{"predict", "--isl", "1000", "--osl", "10", "--range-ratio", "1", "--chunk", "1", "--requests", "1000000", "--conc", "1"}, exitBadInput,
			[]string{"1000001 requests x ceil(1000 uncached prompt tokens / --chunk 1) = 1000001 x 1000"}},
		{"sweep --chunk 1", nil, []string{"sweep", "--chunk", "1", "--gpus", "2"}, exitBadInput, []string{"this sweep would price", "--chunk 1"}},
	})
}

func TestHostileFlags(t *testing.T) {
	log := map[string]string{"d.log": "Decode batch, #running-req: 4, accept len: 3.0\n"}
	runHostile2(t, []hostile2{
		{"logs --al nan (exited 1)", log, []string{"logs", "{dir}/d.log", "--al", "nan"}, exitBadInput, []string{"--al NaN"}},
		{"logs --al inf --json (did not encode)", log, []string{"logs", "{dir}/d.log", "--al", "inf", "--json"}, exitBadInput, []string{"--al +Inf"}},
		{"predict --mem-fraction 0 (became 0.9)", nil, []string{"predict", "--mem-fraction", "0"}, exitBadInput, []string{"--mem-fraction 0: want a share of HBM in (0, 1]"}},
		{"predict --range-ratio nan with agentx (ignored)", nil, []string{"predict", "--range-ratio", "nan"}, exitBadInput, []string{"--range-ratio NaN"}},
		{"sample --al inf (said must be >= 1)", nil, []string{"sample", "--steps", "3", "--al", "Inf"}, exitBadInput, []string{"--al +Inf: must be a finite number of tokens, at least 1"}},
		{"recipe without a subcommand (named only check)", nil, []string{"recipe"}, exitBadInput, []string{`"recipe check FILE[:selector]" or "recipe emit [flags]"`}},
		{"predict --requests with agentx (ignored)", nil, []string{"predict", "--requests", "5"}, exitBadInput, []string{"--requests applies to --isl/--osl and agentx-synthetic workloads", "--agentx duration="}},
		{"sweep --mem-fraction 0", nil, []string{"sweep", "--gpus", "2", "--mem-fraction", "0"}, exitBadInput, []string{"--mem-fraction 0"}},
		{"predict --al 0 (ran the golden AL)", nil, []string{"predict", "--al", "0"}, exitBadInput, []string{"--al 0: want an acceptance length of at least 1"}},
		{"predict --spec none --al 0 (ran)", nil, []string{"predict", "--spec", "none", "--al", "0"}, exitBadInput, []string{"--al 0"}},
		{"sweep --al 0 (swept the golden AL)", nil, []string{"sweep", "--gpus", "2", "--al", "0"}, exitBadInput, []string{"--al 0"}},
		{"recipe emit --al 0", nil, []string{"recipe", "emit", "--al", "0"}, exitBadInput, []string{"--al 0"}},
		{"predict --conc 65536 agentx without speculation (advised --requests, synthetic lengths)", nil, []string{"predict", "--conc", "65536", "--spec", "none"}, exitBadInput, []string{"65536 session trees x 5 requests", "430 output tokens", "lower --conc"}},
		{"predict --max-running 2000000", nil, []string{"predict", "--max-running", "2000000"}, exitBadInput, []string{"--max-running 2000000: want 0..1048576"}},
		{"audit --draft-quantization unknown", nil, []string{"audit", "{dir}", "--draft-quantization", "nvfp4_onlin"}, exitBadInput, []string{`--draft-quantization nvfp4_onlin: SGLang accepts`, "nvfp4_online"}},
		{"audit --moe-backend unknown", nil, []string{"audit", "{dir}", "--moe-backend", "trtion"}, exitBadInput, []string{`--moe-backend: engine sglang has no MoE backend "trtion"`, "triton"}},
		{"audit --draft-quantization with vllm", nil, []string{"audit", "{dir}", "--engine", "vllm", "--draft-quantization", "fp8"}, exitBadInput, []string{"vllm has no such flag"}},
	})
}

func TestHostileRecipeEngine(t *testing.T) {
	base, err := os.ReadFile("../../audit/recipe/testdata/planted_sglang.yaml")
	if err != nil {
		t.Fatal(err)
	}
	typo := strings.Replace(string(base), "  engine: sglang\n", "  engine: sglng\n", 1)
	runHostile2(t, []hostile2{
		{"engine: sglng (skipped every check, exit 0)", map[string]string{"r.yaml": typo}, []string{"recipe", "check", "{dir}/r.yaml"}, exitBadInput,
			[]string{"{dir}/r.yaml", `line 8: engine "sglng" is not an engine specsim knows`}},
	})
}

// Tensor names and dtypes with terminal controls reached the terminal raw in
// text and markdown (issue 14, item 7).
func TestHostileEscapes(t *testing.T) {
	dir := t.TempDir()
	const cfg = "../../testdata/configs/nvidia--Qwen3.5-397B-A17B-NVFP4"
	main, mtp, err := checkpointtest.Qwen35MoE(cfg+"_config.json", checkpointtest.Options{MainLayers: 2})
	if err != nil {
		t.Fatal(err)
	}
	mtp = append(mtp,
		checkpointtest.Tensor{Name: "mtp.layers.0.\x1b]0;owned\x07evil\x1b[2J.weight", DType: "BF16", Shape: []int64{8, 8}},
		checkpointtest.Tensor{Name: "mtp.layers.0.odd.weight", DType: "X\x1b[31m\u202e", Shape: []int64{8}})
	c, _ := os.ReadFile(cfg + "_config.json")
	q, _ := os.ReadFile(cfg + "_hf_quant_config.json")
	if err := checkpointtest.WriteCheckpoint(dir, append(main, mtp...), 2, c, q); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "markdown", "json"} {
		code, out, errs := runCLI("audit", dir, "--format", format)
		if code == exitBadInput {
			t.Fatalf("%s: exit 2: %s", format, errs)
		}
		for _, s := range []string{out, errs} {
			if strings.ContainsAny(s, "\x1b\x07\u202e") {
				t.Errorf("%s: raw control characters reached the terminal: %q", format, s)
			}
		}
		if !strings.Contains(out+errs, `\u001b`) {
			t.Errorf("%s: the escaped name is not shown", format)
		}
	}
}

func TestHostileHeaderTotal(t *testing.T) {
	big := string(binary.LittleEndian.AppendUint64(nil, 50_000_000)) + `{"a"`
	runHostile2(t, []hostile2{
		{"three 50 MB headers", map[string]string{"a.safetensors": big, "b.safetensors": big, "c.safetensors": big},
			[]string{"audit", "{dir}"}, exitBadInput, []string{"{dir}: shard headers add up to more than 134217728 bytes"}},
	})
}

func TestHostileHeavy(t *testing.T) {
	runHostile2(t, []hostile2{
		{"config.json of empty objects", map[string]string{"m/config.json": `{"a":[` + strings.Repeat("{},", 200_000) + `{}]}`, "m/model.safetensors": "x"},
			[]string{"audit", "{dir}/m"}, exitBadInput, []string{"{dir}/m/config.json: more than 100000 JSON objects and arrays"}},
		{"duplicate kernel-table rows", map[string]string{"t.csv": "op,dtype,m,n,k,latency_us\ngemm,bf16,1,4096,7168,10\ngemm,bf16,1,4096,7168,12\n"},
			[]string{"kernels", "validate", "--table", "{dir}/t.csv"}, exitBadInput, []string{"{dir}/t.csv:3: same op, dtype and shape as line 2"}},
		{"latency 1e300 us", map[string]string{"t.csv": "op,dtype,m,n,k,latency_us\ngemm,bf16,1,4096,7168,1e300\n"},
			[]string{"kernels", "validate", "--table", "{dir}/t.csv"}, exitBadInput, []string{"{dir}/t.csv:2: column latency_us"}},
	})
}

func TestHostileSymlink(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "secret")
	if err := os.WriteFile(outside, []byte("0123456789abcdef"), 0o600); err != nil {
		t.Fatal(err)
	}
	ck := qwenFixture(t)
	if err := os.Symlink(outside, filepath.Join(ck, "zz.safetensors")); err != nil {
		t.Skip(err)
	}
	code, out, errs := runCLI("audit", ck)
	if code != exitFindings || !strings.Contains(out, "symlink-outside-dir") || strings.Contains(out+errs, "header length") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and the symlink finding", code, out, errs)
	}
}

func TestHostileModelDims(t *testing.T) {
	cfg := func(extra string) map[string]string {
		return map[string]string{"m/config.json": `{"architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe", "text_config": {"hidden_size": 4096, "num_hidden_layers": 60, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936, "num_experts": 512, "moe_intermediate_size": 1024, "num_experts_per_tok": 10, ` + extra + `}}`}
	}
	runHostile2(t, []hostile2{
		{"mtp_num_hidden_layers 2^52 (predict looped for ever)", cfg(`"mtp_num_hidden_layers": 4503599627370496`),
			[]string{"predict", "--model", "{dir}/m", "--al", "3", "--steps", "3"}, exitBadInput,
			[]string{"{dir}/m/config.json", "mtp_num_hidden_layers: 4503599627370496 is beyond any real model"}},
		{"shared experts product wrapped", cfg(`"n_shared_experts": 512, "shared_expert_intermediate_size": 17592186044417`),
			[]string{"predict", "--model", "{dir}/m", "--al", "3", "--steps", "3"}, exitBadInput,
			[]string{"{dir}/m/config.json", "shared_expert_intermediate_size: 17592186044417"}},
	})
}

// --golden-dir errors named "." or the bare file name (issue 14, item 11).
func TestHostileGoldenDirPath(t *testing.T) {
	runHostile2(t, []hostile2{
		{"bad file in --golden-dir", map[string]string{"g/bad_mtp.yaml": "m:\n  thinking_on:\n    1: [\n"},
			[]string{"golden", "list", "--golden-dir", "{dir}/g"}, exitBadInput, []string{"golden file {dir}/g/bad_mtp.yaml"}},
	})
}
