package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

type recipePredDoc struct {
	Variants []struct {
		Topology string `json:"topology"`
		Steps    int    `json:"steps"`
		Read     []struct {
			Setting, Value, From string
		} `json:"read"`
		Result struct {
			Topology    string  `json:"topology"`
			Steps       int     `json:"steps"`
			TputPerGPU  float64 `json:"tput_per_gpu"`
			OutputPerGP float64 `json:"output_tput_per_gpu"`
			GPUs        int     `json:"gpus"`
		} `json:"result"`
	} `json:"variants"`
}

func readRow(t *testing.T, d recipePredDoc, setting string) (value, from string) {
	t.Helper()
	for _, r := range d.Variants[0].Read {
		if r.Setting == setting {
			return r.Value, r.From
		}
	}
	return "", ""
}

// TestPredictRecipeFixedLengthBenchmark: a recipe whose benchmark is
// sa-bench at isl/osl 1024/1024 is predicted at those lengths, not AgentX.
// Second method: predict with the same deployment as flags (the emitted
// recipe's max-num-seqs 64 as --max-running) gives the same throughput, and
// 1k/1k output is about half the total tokens.
func TestPredictRecipeFixedLengthBenchmark(t *testing.T) {
	code, y, errs := runCLI("recipe", "emit", "--engine", "vllm", "--gpu", "gb300", "--topology", "disagg:1xtp4+1xdep8", "--steps", "3", "--conc", "64", "--isl", "1024", "--osl", "1024")
	if code != exitOK {
		t.Fatalf("emit: %d %s", code, errs)
	}
	f := filepath.Join(t.TempDir(), "v.yaml")
	if err := os.WriteFile(f, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI("predict", "--recipe", f, "--json")
	if code != exitOK {
		t.Fatalf("predict --recipe: %d %s", code, errs)
	}
	var d recipePredDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if v, from := readRow(t, d, "workload"); v != "fixed 1024/1024 tokens" || !strings.Contains(from, "sa-bench") {
		t.Errorf("workload row %q from %q", v, from)
	}
	code, out, errs = runCLI("predict", "--engine", "vllm", "--gpu", "gb300", "--topology", "disagg:1xtp4+1xdep8", "--steps", "3", "--conc", "64", "--isl", "1024", "--osl", "1024", "--max-running", "64", "--json")
	if code != exitOK {
		t.Fatalf("predict: %d %s", code, errs)
	}
	var direct struct {
		TputPerGPU float64 `json:"tput_per_gpu"`
	}
	if err := json.Unmarshal([]byte(out), &direct); err != nil {
		t.Fatal(err)
	}
	r := d.Variants[0].Result
	if math.Abs(r.TputPerGPU-direct.TputPerGPU) > 1e-9*direct.TputPerGPU {
		t.Errorf("recipe %.4f tok/s/GPU, flags %.4f", r.TputPerGPU, direct.TputPerGPU)
	}
	if s := r.OutputPerGP / r.TputPerGPU; math.Abs(s-0.5) > 0.02 {
		t.Errorf("output share %.3f, want ~0.5 at 1k/1k", s)
	}
}

// TestPredictRecipeFlagsWin: explicit flags override what the recipe sets
// (GPU, topology, k, lengths) and the table says so; the recipe's own
// values stay where no flag is given.
func TestPredictRecipeFlagsWin(t *testing.T) {
	r := filepath.Join("..", "..", "testdata", "recipes", "schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml:override_c1")
	code, out, errs := runCLI("predict", "--recipe", r, "--gpu", "b200", "--topology", "agg:tp8", "--steps", "1", "--isl", "1024", "--osl", "1024", "--requests", "48", "--json")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errs)
	}
	var d recipePredDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	res := d.Variants[0].Result
	if res.Topology != "agg:tp8" || res.Steps != 1 || res.GPUs != 8 {
		t.Errorf("result %s k%d on %d GPUs, want agg:tp8 k1 on 8", res.Topology, res.Steps, res.GPUs)
	}
	for setting, want := range map[string]string{"gpu": "overridden by --gpu (the recipe's gb300", "topology": "overridden by --topology (the recipe's agg:tp2)",
		"speculative": "overridden by --steps", "workload": "overridden by --isl/--osl"} {
		if _, from := readRow(t, d, setting); !strings.Contains(from, want) {
			t.Errorf("%s row from %q, want %q", setting, from, want)
		}
	}
	if v, _ := readRow(t, d, "max running requests"); v != "72" {
		t.Errorf("max running %q, want the recipe's 72", v)
	}
	if v, _ := readRow(t, d, "golden AL"); v != "" {
		t.Errorf("golden AL row %q kept for an overridden k", v)
	}
}

// TestPredictRecipeStdin: predict --recipe - reads the recipe from standard
// input, as recipe check - does, and predicts what the file would.
func TestPredictRecipeStdin(t *testing.T) {
	f := filepath.Join("..", "..", "testdata", "recipes", "schema1_sglang_qwen3.5_gb300-fp4_agentic_agg-tp2-c1-mtp-hicache.yaml")
	_, want, _ := runCLI("predict", "--recipe", f, "--json")
	in, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	old := os.Stdin
	os.Stdin = in
	defer func() { os.Stdin = old }()
	code, got, errs := runCLI("predict", "--recipe", "-", "--json")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errs)
	}
	var a, b recipePredDoc
	if json.Unmarshal([]byte(want), &a) != nil || json.Unmarshal([]byte(got), &b) != nil || len(b.Variants) != 1 {
		t.Fatalf("bad JSON\n%s", got)
	}
	if a.Variants[0].Result.TputPerGPU != b.Variants[0].Result.TputPerGPU || b.Variants[0].Result.TputPerGPU == 0 {
		t.Errorf("stdin %.3f, file %.3f", b.Variants[0].Result.TputPerGPU, a.Variants[0].Result.TputPerGPU)
	}
}

// TestPredictRefusesUndeployedLayouts: predict refuses what sweep skips and
// recipe emit refuses (simulate.EngineRuns), naming the rule it breaks and
// its source; the same layouts without the broken condition run.
func TestPredictRefusesUndeployedLayouts(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		refuse string // "" = runs
		not    string // a clause the refusal must not carry
	}{
		{[]string{"predict", "--engine", "sglang", "--topology", "agg:tp2pp2", "--steps", "3"}, "check_server_args", ""},
		{[]string{"predict", "--engine", "sglang", "--topology", "agg:tp2pp2", "--spec", "none"}, "", ""},
		{[]string{"predict", "--engine", "vllm", "--topology", "agg:tp8ep4", "--steps", "2"}, "FusedMoEParallelConfig", "pipeline"},
		{[]string{"predict", "--engine", "vllm", "--topology", "agg:tp2pp2", "--steps", "2"}, "pipeline parallel", "expert"},
		{[]string{"predict", "--engine", "trtllm", "--topology", "agg:tp8ep4", "--steps", "2"}, "", ""},
		{[]string{"recipe", "emit", "--engine", "vllm", "--topology", "agg:tp2pp2", "--steps", "3"}, "pipeline parallel", "expert"},
	} {
		args := tc.args
		if args[0] == "predict" {
			args = append(args, "--conc", "4")
		}
		code, _, errs := runCLI(args...)
		switch {
		case tc.refuse == "" && code != exitOK:
			t.Errorf("%v: exit %d %s", tc.args, code, errs)
		case tc.refuse != "" && (code != exitBadInput || !strings.Contains(errs, tc.refuse)):
			t.Errorf("%v: exit %d, want 2 naming %q: %s", tc.args, code, tc.refuse, errs)
		case tc.not != "" && strings.Contains(errs, tc.not):
			t.Errorf("%v: refusal carries an unrelated %q clause: %s", tc.args, tc.not, errs)
		}
	}
}

// TestEmitCUDAGraphPerRank: vLLM's max-num-seqs is per DP engine and
// TensorRT-LLM's max_batch_size per attention-DP rank, so emit writes the
// per-rank cap of a closed loop (one request per session; conc 16 over
// dep4: 16/4 = 4, conc 64 over dep8: 64/8 = 8) and the CUDA graph size the simulation replays (256 per rank), which
// recipe check accepts; a vLLM DEP recipe whose per-engine cap (8)
// exceeds its capture size (edited to 4) is warned.
// predict --recipe reads the per-rank cap back as the instance's (4 x 4,
// 8 x 8).
func TestEmitCUDAGraphPerRank(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		engine, topo, conc string
		running, graph     string
		instance           string
		edit               [2]string
		warn               bool
	}{
		{"trtllm", "agg:dep4", "16", "      max_batch_size: 4\n", "        max_batch_size: 256", "16 (4 per DP rank x 4 ranks)", [2]string{}, false},
		{"vllm", "disagg:1xtp4+1xdep8", "64", "max-num-seqs: 8", "max-cudagraph-capture-size: 256", "64 (8 per DP rank x 8 ranks)", [2]string{}, false},
		{"vllm", "disagg:1xtp4+1xdep8", "64", "", "", "", [2]string{"max-cudagraph-capture-size: 256", "max-cudagraph-capture-size: 4"}, true},
	} {
		code, y, errs := runCLI("recipe", "emit", "--engine", tc.engine, "--gpu", "gb300", "--topology", tc.topo, "--steps", "3", "--conc", tc.conc, "--isl", "1024", "--osl", "1024")
		if code != exitOK {
			t.Fatalf("%s %s: emit %d %s", tc.engine, tc.topo, code, errs)
		}
		if tc.edit[0] != "" {
			if !strings.Contains(y, tc.edit[0]) {
				t.Fatalf("emitted recipe lacks %q", tc.edit[0])
			}
			y = strings.Replace(y, tc.edit[0], tc.edit[1], 1)
		}
		for _, w := range []string{tc.running, tc.graph} {
			if w != "" && !strings.Contains(y, w) {
				t.Errorf("%s %s: recipe lacks %q\n%s", tc.engine, tc.topo, w, y)
			}
		}
		f := filepath.Join(dir, tc.engine+".yaml")
		if err := os.WriteFile(f, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		_, out, _ := runCLI("recipe", "check", f)
		if got := strings.Contains(out, "cuda-graph-below-running-cap"); got != tc.warn {
			t.Errorf("%s %s: cuda-graph warning %v, want %v\n%s", tc.engine, tc.topo, got, tc.warn, out)
		}
		if tc.warn && !strings.Contains(out, "max-num-seqs 8 per DP engine") {
			t.Errorf("warning does not name the per-engine cap:\n%s", out)
		}
		if tc.instance == "" {
			continue
		}
		code, out, errs = runCLI("predict", "--recipe", f, "--json")
		if code != exitOK {
			t.Fatalf("predict --recipe: %d %s", code, errs)
		}
		var d recipePredDoc
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		if v, _ := readRow(t, d, "max running requests"); v != tc.instance {
			t.Errorf("%s: max running read %q, want %q", tc.engine, v, tc.instance)
		}
	}
}

// TestEmitPredictRoundTripSettings: what recipe emit writes, predict
// --recipe reads back (not "not modelled") and shows in specsim's layout
// spelling: the emitted KV dtype fp8, memory share 0.9 and chunk 16384
// (emit's defaults), the decode layout dep8 / dep4, and no SGLang-only
// "draft tokens" for vLLM and TRT-LLM.
func TestEmitPredictRoundTripSettings(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		engine, topo, decode string
		memFrom, chunkFrom   string
	}{
		{"vllm", "disagg:1xtp4+1xdep8", "dep8, 1 worker(s)", "gpu-memory-utilization", "max-num-batched-tokens"},
		{"trtllm", "disagg:1xtp4+1xdep4", "dep4, 1 worker(s)", "kv_cache_config.free_gpu_memory_fraction", "max_num_tokens"},
	} {
		code, y, errs := runCLI("recipe", "emit", "--engine", tc.engine, "--gpu", "gb300", "--topology", tc.topo, "--steps", "3", "--conc", "16")
		if code != exitOK {
			t.Fatalf("%s: emit %d %s", tc.engine, code, errs)
		}
		f := filepath.Join(dir, tc.engine+".yaml")
		if err := os.WriteFile(f, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := runCLI("predict", "--recipe", f, "--json")
		if code != exitOK {
			t.Fatalf("%s: predict %d %s", tc.engine, code, errs)
		}
		var d struct {
			Variants []struct {
				Read []struct {
					Setting, Value, From string
				} `json:"read"`
				Unsupported []string `json:"unsupported"`
			} `json:"variants"`
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		rows := map[string][2]string{}
		for _, r := range d.Variants[0].Read {
			rows[r.Setting] = [2]string{r.Value, r.From}
		}
		for setting, want := range map[string][2]string{
			"decode topology": {tc.decode, ""}, "prefill topology": {"tp4, 1 worker(s)", ""},
			"kv cache dtype": {"fp8", ""}, "mem fraction": {"0.9", tc.memFrom}, "chunked prefill": {"16384", tc.chunkFrom},
		} {
			got := rows[setting]
			if got[0] != want[0] || !strings.Contains(got[1], want[1]) {
				t.Errorf("%s %s: %q from %q, want %q from ...%s", tc.engine, setting, got[0], got[1], want[0], want[1])
			}
		}
		if strings.Contains(rows["speculative"][0], "draft tokens") {
			t.Errorf("%s speculative %q", tc.engine, rows["speculative"][0])
		}
		for _, u := range d.Variants[0].Unsupported {
			for _, key := range []string{"kv-cache-dtype", "gpu-memory-utilization", "max-num-batched-tokens", "max-cudagraph-capture-size", "max_num_tokens", "kv_cache_config.dtype", "free_gpu_memory_fraction"} {
				if strings.Contains(u, key+"=") {
					t.Errorf("%s: %s listed as not modelled: %s", tc.engine, key, u)
				}
			}
		}
	}
}

// csvTables splits CSV output into its tables (a blank line between two).
func csvTables(t *testing.T, out string) [][][]string {
	t.Helper()
	var tabs [][][]string
	for _, block := range strings.Split(strings.TrimSpace(out), "\n\n") {
		rows, err := csv.NewReader(strings.NewReader(block)).ReadAll()
		if err != nil {
			t.Fatalf("not CSV: %v\n%s", err, block)
		}
		tabs = append(tabs, rows)
	}
	return tabs
}

// TestRecipeCSV: predict --recipe --format csv writes the read settings,
// the not-modelled list and the prediction as tables (the prediction row
// carries the JSON's throughput); recipe check --format csv writes one
// roles and one findings table with a variant column: the disagg bundle
// has six override_tp4_* sections (c8 c16 c32 c64 c96 c128), two roles each.
func TestRecipeCSV(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "recipes")
	r := filepath.Join(dir, "schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml:override_c1")
	code, out, errs := runCLI("predict", "--recipe", r, "--format", "csv")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errs)
	}
	tabs := csvTables(t, out)
	if len(tabs) != 3 || tabs[0][0][0] != "variant" || tabs[1][0][1] != "not_modelled_listed_not_applied" || tabs[2][0][6] != "tput_per_gpu" || tabs[2][0][11] != "notes" {
		t.Fatalf("tables %v", tabs)
	}
	_, js, _ := runCLI("predict", "--recipe", r, "--json")
	var d recipePredDoc
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatal(err)
	}
	// The CSV carries the JSON's figure itself, as plain predict's CSV does.
	if got, want := tabs[2][1][6], strconv.FormatFloat(d.Variants[0].Result.TputPerGPU, 'g', -1, 64); got != want || tabs[2][1][0] != "override_c1" {
		t.Errorf("prediction row %v, want tput_per_gpu %s", tabs[2][1], want)
	}
	_, out, _ = runCLI("recipe", "check", filepath.Join(dir, "schema2_qwen3.5_sglang_gb300-fp4_agentx_disagg-variants.yaml:override_tp4_*"), "--format", "csv")
	tabs = csvTables(t, out)
	if len(tabs) != 2 || tabs[0][0][0] != "variant" || tabs[1][0][0] != "variant" {
		t.Fatalf("tables %v", tabs)
	}
	seen := map[string]int{}
	for _, row := range tabs[0][1:] {
		seen[row[0]]++
	}
	if len(seen) != 6 || len(tabs[0]) != 1+12 || seen["override_tp4_tp4_c96"] != 2 {
		t.Errorf("roles table variants %v (%d rows)", seen, len(tabs[0])-1)
	}
}

// TestPredictRecipeNameOnce: a schema-1 recipe's variant and job name are
// the same string and the concurrency row names it once; a schema-2
// override names its section and its job.
func TestPredictRecipeNameOnce(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "recipes")
	for _, tc := range []struct{ file, want string }{
		{"schema1_sglang_qwen3.5_gb300-fp4_agentic_agg-tp2-c1-mtp-hicache.yaml", "the variant's name (agg-gb300-tp2-c1-mtp-hicache-jid2530006):"},
		{"schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml:override_c1", "the variant's name (override_c1 / agg-gb300-tp2-c1-mtp-hicache-jid2530006):"},
	} {
		code, out, errs := runCLI("predict", "--recipe", filepath.Join(dir, tc.file), "--json")
		if code != exitOK {
			t.Fatalf("%s: %d %s", tc.file, code, errs)
		}
		var d recipePredDoc
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		if _, from := readRow(t, d, "concurrency"); !strings.HasPrefix(from, tc.want) {
			t.Errorf("%s: concurrency from %q, want %q...", tc.file, from, tc.want)
		}
	}
}

// predict --recipe sizes the host KV tier, the mamba cache and the page
// size from the recipe. Values by hand: Qwen3.5-397B on TP2 with FP8 KV
// holds 16 full-attention layers (15 target + 1 MTP) x 1 KV head per rank
// x 256 dims x 2 (K and V) x 1 byte = 8192 bytes per token per rank; a
// GB300 GPU has 240 GB of host DRAM, of which AgentX's launcher gives
// HiCache 90%: 216e9 / 8192 = 26367187 tokens. hicache-size 100 (GB per
// rank): 100e9 / 8192 = 12207031. No HiCache: none. The recipe's
// max-mamba-cache-size 360 at DP 1 is 360 slots per rank.
func TestPredictRecipeHostTier(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "recipes", "schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const hc = "        enable-hierarchical-cache: true\n        hicache-ratio: 0.9\n"
	if !strings.Contains(string(src), hc) {
		t.Fatal("testdata recipe changed: no HiCache lines")
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name, replace string
		extra         []string
		host, mamba   int
		unsupported   string
	}{
		{"as published", hc, nil, 26367187, 360, ""},
		{"no hicache", "", nil, 0, 360, ""},
		{"hicache-size 100", hc + "        hicache-size: 100\n", nil, 12207031, 360, ""},
		{"--hicache-ratio 0 wins", hc, []string{"--hicache-ratio", "0"}, 0, 360, ""},
		{"--max-mamba-cache-size wins", hc, []string{"--max-mamba-cache-size", "200"}, 26367187, 200, ""},
	} {
		f := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".yaml")
		if err := os.WriteFile(f, []byte(strings.Replace(string(src), hc, tc.replace, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := runCLI(append([]string{"predict", "--recipe", f + ":override_c24", "--json"}, tc.extra...)...)
		if code != exitOK {
			t.Fatalf("%s: exit %d %s", tc.name, code, errs)
		}
		var d struct {
			Variants []struct {
				Unsupported []string `json:"unsupported"`
				Result      struct {
					Limits []struct {
						Host  int `json:"hicache_tokens_per_rank"`
						Mamba int `json:"mamba_slots_per_rank"`
					} `json:"limits"`
				} `json:"result"`
			} `json:"variants"`
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.Variants) != 1 || len(d.Variants[0].Result.Limits) != 1 {
			t.Fatalf("%s: %v\n%s", tc.name, err, out)
		}
		l := d.Variants[0].Result.Limits[0]
		if l.Host != tc.host || l.Mamba != tc.mamba {
			t.Errorf("%s: host tokens %d mamba slots %d, want %d and %d", tc.name, l.Host, l.Mamba, tc.host, tc.mamba)
		}
		un := strings.Join(d.Variants[0].Unsupported, "\n")
		for _, k := range []string{"enable-hierarchical-cache", "hicache-ratio=", "max-mamba-cache-size", "page-size"} {
			if strings.Contains(un, k) {
				t.Errorf("%s: %s listed as not modelled: %s", tc.name, k, un)
			}
		}
	}
}

// predict --recipe takes the AL from the golden curve of the model the
// recipe serves (deepseek-v4-pro here), also when --model simulates one
// without a curve of its own: golden/data/dsv4_mtp.yaml gives 2.49 at k = 3
// with thinking on and 2.97 with it off; --al wins. The recipe is schema 1
// and sets SGLANG_SIMULATE_ACC_LEN 2.49 itself, which it runs with
// whatever the thinking mode; the curve applies to a copy that sets none.
func TestPredictRecipeServedModelCurve(t *testing.T) {
	f := filepath.Join("..", "..", "testdata", "recipes", "schema1_sglang_deepseek-v4_agentic_disagg-2p1d-dep8-tp4-c80-mtp.yaml")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	unforced := filepath.Join(t.TempDir(), "unforced.yaml")
	const forced = "    SGLANG_SIMULATE_ACC_LEN: '2.49'\n"
	if !strings.Contains(string(b), forced) {
		t.Fatalf("%s no longer sets %q", f, forced)
	}
	if err := os.WriteFile(unforced, []byte(strings.Replace(string(b), forced, "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		recipe string
		extra  []string
		al     float64
	}{
		{f, nil, 2.49},
		{f, []string{"--thinking", "off"}, 2.49},
		{unforced, nil, 2.49},
		{unforced, []string{"--thinking", "off"}, 2.97},
		{f, []string{"--al", "2.5"}, 2.5},
	} {
		code, out, errs := runCLI(append([]string{"predict", "--recipe", tc.recipe, "--model", "DeepSeek-V3", "--json"}, tc.extra...)...)
		if code != exitOK {
			t.Errorf("%v: exit %d %s", tc.extra, code, errs)
			continue
		}
		var d struct {
			Variants []struct {
				Steps  int      `json:"steps"`
				Notes  []string `json:"notes"`
				Result struct {
					AL float64 `json:"al"`
				} `json:"result"`
			} `json:"variants"`
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.Variants) != 1 {
			t.Fatalf("%v: %v", tc.extra, err)
		}
		if v := d.Variants[0]; v.Steps != 3 || math.Abs(v.Result.AL-tc.al) > 1e-9 {
			t.Errorf("%v: k %d AL %g, want k 3 AL %g", tc.extra, v.Steps, v.Result.AL, tc.al)
		}
		// dep8 on GB300 (4 GPUs a host) spans two hosts.
		if n := d.Variants[0].Notes; len(n) == 0 || n[0] != "multi-node" {
			t.Errorf("%v: notes %v, want multi-node first", tc.extra, n)
		}
	}
}

// predict --recipe --json and bestk --json echo inputs as plain predict
// --json does: the recipe's deployment (and the query settings read from
// it), bestk's concurrencies and draft-length range.
func TestInputsEcho(t *testing.T) {
	f := filepath.Join("..", "..", "testdata", "recipes", "schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml:override_c24")
	code, out, errs := runCLI("predict", "--recipe", f, "--json")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errs)
	}
	var d struct {
		Variants []struct {
			Inputs struct {
				SpecsimVersion string   `json:"specsim_version"`
				GPU            string   `json:"gpu"`
				Topology       string   `json:"topology"`
				Workload       string   `json:"workload"`
				Conc           int      `json:"conc"`
				Steps          int      `json:"steps"`
				AL             *float64 `json:"al"`
				Query          struct {
					MaxRunning int `json:"max_running"`
					Server     struct {
						MambaCache int `json:"mamba_cache"`
						PageSize   int `json:"page_size"`
					} `json:"server"`
				} `json:"query"`
			} `json:"inputs"`
		} `json:"variants"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.Variants) != 1 {
		t.Fatalf("%v", err)
	}
	in := d.Variants[0].Inputs
	if in.SpecsimVersion == "" || in.GPU != "gb300" || in.Topology != "agg:tp2" || in.Workload != "agentx" || in.Conc != 24 || in.Steps != 3 ||
		in.AL == nil || *in.AL != 3.39 || in.Query.MaxRunning != 72 || in.Query.Server.MambaCache != 360 || in.Query.Server.PageSize != 64 {
		t.Errorf("predict --recipe inputs %+v", in)
	}
	code, out, errs = runCLI("bestk", "--gpu", "b200", "--topology", "agg:tp4", "--conc", "1,4", "--steps", "0-2", "--isl", "1024", "--osl", "1024", "--json")
	if code != exitOK {
		t.Fatalf("bestk: exit %d %s", code, errs)
	}
	var b struct {
		Inputs map[string]any `json:"inputs"`
	}
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal([]any{b.Inputs["model"], b.Inputs["gpu"], b.Inputs["topology"], b.Inputs["concs"], b.Inputs["steps"], b.Inputs["conc"]})
	if string(got) != `["Qwen3.5-397B-A17B","b200","agg:tp4",[1,4],[0,2],null]` || b.Inputs["specsim_version"] == "" {
		t.Errorf("bestk inputs %s (%v)", got, b.Inputs)
	}
}

// predict --recipe takes the prefix cache and the host tier of the role
// that prefills from the engine's own settings (review 2, #1): SGLang
// disable-radix-cache and TensorRT-LLM kv_cache_config.enable_block_reuse
// false are --no-prefix-cache (second method: the same recipe without the
// setting and with the flag predicts the same figures); TensorRT-LLM
// kv_cache_config.host_cache_size 137438953472 bytes per rank is
// 137.438953472 GB, which at 15 full-attention layers x 2 KV heads x 256
// dims x 2 (K, V) x 1 byte (FP8) = 15360 bytes per token on a DEP rank
// holds floor(137438953472 / 15360) = 8947848 host tokens.
func TestPredictRecipePrefixCacheAndHostTier(t *testing.T) {
	const (
		sgl = "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml"
		trt = "../../testdata/recipes/schema1_trtllm_qwen3.5_gb300-fp4_agentx_disagg-3p2d-dep4-dep4-c704-mtp.yaml"
	)
	type doc struct {
		Variants []struct {
			Read []struct {
				Setting, Value, From string
			} `json:"read"`
			Unsupported []string `json:"unsupported"`
			Result      struct {
				TputPerGPU float64 `json:"tput_per_gpu"`
				TTFT       float64 `json:"ttft_p90_ms"`
				Limits     []struct {
					Role string `json:"role"`
					Host int    `json:"hicache_tokens_per_rank"`
				} `json:"limits"`
			} `json:"result"`
		} `json:"variants"`
	}
	dir := t.TempDir()
	edit := func(file, from, to string) string {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), from) {
			t.Fatalf("%s has no %q", file, from)
		}
		f := filepath.Join(dir, strings.NewReplacer(" ", "_", "\n", "_", ":", "").Replace(strings.TrimSpace(to))+".yaml")
		if err := os.WriteFile(f, []byte(strings.Replace(string(b), from, to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	predict := func(args ...string) doc {
		t.Helper()
		code, out, errs := runCLI(append([]string{"predict", "--json"}, args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d %s", args, code, errs)
		}
		var d doc
		if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.Variants) != 1 {
			t.Fatalf("%v: %v", args, err)
		}
		return d
	}
	row := func(d doc, setting string) string {
		for _, r := range d.Variants[0].Read {
			if r.Setting == setting {
				return r.Value + " <- " + r.From
			}
		}
		return ""
	}
	for _, tc := range []struct {
		name, file, from, to, key string
	}{
		{"sglang disable-radix-cache", sgl, "        page-size: 64\n", "        page-size: 64\n        disable-radix-cache: true\n", "roles.agg.args.disable-radix-cache"},
		{"trtllm enable_block_reuse false", trt, "enable_block_reuse: true", "enable_block_reuse: false", "backend.trtllm_config.prefill.kv_cache_config.enable_block_reuse"},
	} {
		off := edit(tc.file, tc.from, tc.to)
		sel := map[bool]string{true: ":override_c24", false: ""}[tc.file == sgl]
		got := predict("--recipe", off+sel)
		want := predict("--recipe", tc.file+sel, "--no-prefix-cache")
		if r := row(got, "prefix cache"); r != "off <- "+tc.key {
			t.Errorf("%s: prefix cache row %q, want off from %s", tc.name, r, tc.key)
		}
		g, w := got.Variants[0].Result, want.Variants[0].Result
		if g.TputPerGPU != w.TputPerGPU || g.TTFT != w.TTFT {
			t.Errorf("%s: %.0f tok/s/GPU TTFT %.0f ms, want --no-prefix-cache's %.0f and %.0f", tc.name, g.TputPerGPU, g.TTFT, w.TputPerGPU, w.TTFT)
		}
		if strings.Contains(strings.Join(got.Variants[0].Unsupported, "\n"), tc.key[strings.LastIndex(tc.key, ".")+1:]+"=") {
			t.Errorf("%s: still listed as not modelled: %q", tc.name, got.Variants[0].Unsupported)
		}
	}
	d := predict("--recipe", trt)
	if r := row(d, "host KV tier"); r != "137.4 GB per GPU <- backend.trtllm_config.prefill.kv_cache_config.host_cache_size (bytes per rank)" {
		t.Errorf("host KV tier row %q", r)
	}
	if l := d.Variants[0].Result.Limits; len(l) != 2 || l[0].Role != "prefill" || l[0].Host != 8947848 || l[1].Host != 0 {
		t.Errorf("limits %+v, want prefill 8947848 host tokens, decode none", l)
	}
}

// TestPredictRecipeMarkdown: predict --recipe --format markdown writes
// the read-from-the-recipe table as a Markdown table, as plain predict
// --format markdown does, with no column-aligned text table (a dashed
// rule under a header); text stays the aligned table.
func TestPredictRecipeMarkdown(t *testing.T) {
	r := filepath.Join("..", "..", "testdata", "recipes", "schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml:override_c1")
	for _, tc := range []struct {
		format           string
		markdown, dashes bool
	}{
		{"markdown", true, false},
		{"text", false, true},
	} {
		code, out, errs := runCLI("predict", "--recipe", r, "--format", tc.format)
		if code != exitOK {
			t.Fatalf("%s: exit %d %s", tc.format, code, errs)
		}
		md := strings.Contains(out, "\n| setting | value | from |\n|---|---|---|\n")
		dashes := strings.Contains(out, "\n--------------------  ")
		if md != tc.markdown || dashes != tc.dashes {
			t.Errorf("%s: Markdown table %v (want %v), text table rule %v (want %v):\n%s", tc.format, md, tc.markdown, dashes, tc.dashes, out)
		}
		if tc.markdown && !strings.Contains(out, "\n- roles.agg.args: not modelled:") {
			t.Errorf("markdown: the not-modelled list is not a Markdown list:\n%s", out)
		}
	}
}

// TestPredictRecipeNamesRecipeKey: a setting the recipe gives out of range
// is refused at the recipe key it was read from, not at a flag the user
// never passed; given as a flag, the flag is named.
func TestPredictRecipeNamesRecipeKey(t *testing.T) {
	code, y, errs := runCLI("recipe", "emit", "--topology", "agg:tp4", "--steps", "3", "--conc", "16")
	if code != exitOK {
		t.Fatalf("emit: %d %s", code, errs)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		edit  [2]string
		flags []string
		want  string
	}{
		{[2]string{"speculative-num-steps: 3", "speculative-num-steps: 1000000"}, nil, "roles.agg.args.speculative-num-steps 1000000: draft length outside 1..64 (read as --steps)"},
		{[2]string{"concurrencies: [16]", "concurrencies: [99999999]"}, nil, "benchmark 99999999: want 1..65536 sessions (read as --conc)"},
		{[2]string{"concurrencies: [16]", "concurrencies: [16]"}, []string{"--conc", "99999999"}, "--conc 99999999: want 1..65536 sessions"},
	} {
		f := filepath.Join(dir, "r.yaml")
		if err := os.WriteFile(f, []byte(strings.Replace(y, c.edit[0], c.edit[1], 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := runCLI(append([]string{"predict", "--recipe", f}, c.flags...)...)
		if code != exitBadInput || !strings.Contains(errs, c.want) {
			t.Errorf("%v %v: exit %d %q, want 2 naming %q", c.edit, c.flags, code, errs, c.want)
		}
	}
}

// TestPredictRecipeNamesPrefillKey: a server setting out of range (the
// prefill role's cap) is refused at its recipe key too.
func TestPredictRecipeNamesPrefillKey(t *testing.T) {
	code, y, errs := runCLI("recipe", "emit", "--topology", "disagg:1xtp4+1xtp4", "--prefill-draft", "--steps", "3", "--conc", "16")
	if code != exitOK {
		t.Fatalf("emit: %d %s", code, errs)
	}
	at := strings.Index(y, "disaggregation-mode: prefill")
	cap := regexp.MustCompile(`max-running-requests: \d+`).FindStringIndex(y[at:])
	if at < 0 || cap == nil {
		t.Fatalf("no prefill cap in\n%s", y)
	}
	y = y[:at+cap[0]] + "max-running-requests: 2000000" + y[at+cap[1]:]
	f := filepath.Join(t.TempDir(), "r.yaml")
	if err := os.WriteFile(f, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "roles.prefill.args.max-running-requests 2000000: want 0..1048576 (read as --prefill-max-running)"
	if code, _, errs := runCLI("predict", "--recipe", f); code != exitBadInput || !strings.Contains(errs, want) {
		t.Errorf("exit %d %q, want 2 naming %q", code, errs, want)
	}
}
