package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/specsim/specsim/simulate"
)

// withStdin runs f with os.Stdin reading data.
func withStdin(t *testing.T, data string, f func()) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "stdin")
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	old := os.Stdin
	os.Stdin = in
	defer func() { os.Stdin = old }()
	f()
}

// recipe emit | recipe check - exits 0, and predict --recipe on what emit
// wrote deploys the topology, k and caps emit was given.
func TestRecipeEmitCheckPredict(t *testing.T) {
	for _, tc := range []struct {
		topo string
		k    string
		al   float64 // golden qwen3.5 thinking-on curve at k
	}{{"agg:tp4", "3", 3.39}, {"disagg:1xdep4+2xtp4", "4", 3.97}} {
		code, text, stderr := runCLI("recipe", "emit", "--topology", tc.topo, "--steps", tc.k, "--conc", "32", "--cuda-graph-max-bs", "48")
		if code != exitOK {
			t.Fatalf("emit %s: exit %d, %s", tc.topo, code, stderr)
		}
		if !strings.Contains(text, "schema: 2") || !strings.Contains(text, "path: FILL-IN") || !strings.Contains(text, "account: FILL-IN") {
			t.Errorf("emitted recipe lacks schema 2 or FILL-IN marks:\n%s", text)
		}
		withStdin(t, text, func() {
			if code, out, stderr := runCLI("recipe", "check", "-"); code != exitOK {
				t.Errorf("recipe check - on emitted %s: exit %d\n%s%s", tc.topo, code, out, stderr)
			}
		})
		f := filepath.Join(t.TempDir(), "r.yaml")
		os.WriteFile(f, []byte(text), 0o644)
		code, out, stderr := runCLI("predict", "--recipe", f, "--conc", "32", "--json")
		if code != exitOK {
			t.Fatalf("predict --recipe: exit %d, %s", code, stderr)
		}
		var got struct {
			Variants []struct {
				Topology string   `json:"topology"`
				Steps    int      `json:"steps"`
				GoldenAL *float64 `json:"golden_al"`
				Read     []struct{ Setting, Value string }
				Result   struct {
					Sim string `json:"sim"`
				} `json:"result"`
			} `json:"variants"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		v := got.Variants[0]
		if v.Topology != tc.topo || v.Steps != int(tc.k[0]-'0') || v.GoldenAL == nil || *v.GoldenAL != tc.al || v.Result.Sim != "event" {
			t.Errorf("predict --recipe on emitted %s: %+v", tc.topo, v)
		}
		graph := ""
		for _, s := range v.Read {
			if s.Setting == "cuda graph max bs" {
				graph = s.Value
			}
		}
		if graph != "48" {
			t.Errorf("cuda graph max bs read %q, want 48", graph)
		}
	}
	// Models without a golden curve: emit writes the --al into the
	// speculative role (SGLang SGLANG_SIMULATE_ACC_LEN, vLLM
	// synthetic_acceptance_length, TensorRT-LLM forced drafts = AL-1),
	// and predict --recipe runs at that AL and lists where it read it.
	for _, model := range []string{"DeepSeek-V3", "GLM-5", "MiniMax-M2.5"} {
		for _, tc := range []struct{ engine, key string }{
			{"sglang", "roles.agg SGLANG_SIMULATE_ACC_LEN"},
			{"vllm", "roles.agg speculative-config.synthetic_acceptance_length"},
			{"trtllm", "roles.agg TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"},
		} {
			code, text, stderr := runCLI("recipe", "emit", "--model", model, "--al", "2.5", "--engine", tc.engine, "--gpu", "b200", "--precision", "fp8",
				"--topology", "agg:tp8", "--steps", "3", "--isl", "1024", "--osl", "256", "--conc", "4")
			if code != exitOK {
				t.Fatalf("emit %s %s: exit %d, %s", model, tc.engine, code, stderr)
			}
			f := filepath.Join(t.TempDir(), "r.yaml")
			os.WriteFile(f, []byte(text), 0o644)
			code, out, stderr := runCLI("predict", "--recipe", f, "--json")
			if code != exitOK {
				t.Fatalf("predict --recipe on emitted %s %s: exit %d, %s", model, tc.engine, code, stderr)
			}
			var got struct {
				Variants []struct {
					Steps  int
					Read   []struct{ Setting, Value, From string }
					Result struct{ AL float64 }
				}
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			v := got.Variants[0]
			read := false
			for _, s := range v.Read {
				read = read || s.Setting == "acceptance length" && s.Value == "2.5" && strings.HasPrefix(s.From, tc.key)
			}
			if v.Steps != 3 || v.Result.AL != 2.5 || !read {
				t.Errorf("%s %s: predict --recipe ran k %d at AL %g, read %+v; want k 3 at the recipe's AL 2.5 read from %s", model, tc.engine, v.Steps, v.Result.AL, v.Read, tc.key)
			}
		}
	}
}

// predict --recipe runs on the testdata recipes it can model and says what
// it read and what it did not model; the others fail with the file named.
func TestPredictRecipeTestdata(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "recipes")
	for _, tc := range []struct {
		file, want string
		ok         bool
	}{
		{"schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml:override_c24", "host KV tier          90% of host DRAM per GPU", true},
		{"schema2_qwen3.5_sglang_gb300-fp4_agentx_disagg-variants.yaml:override_tp4_tp4_c8", "cuda graph max bs     64", true},
		// The concurrency is written only in the override's name.
		{"schema2_qwen3.5_sglang_gb300-fp4_agentx_disagg-variants.yaml:override_tp2_tp2_c72", "disagg:1xtp2+1xtp2 conc 72 ", true},
		{"schema2_qwen3.5_sglang_gb300-fp4_agentx_disagg-variants.yaml:override_tp4_tp4_c128", "disagg:1xtp4+1xtp4 conc 128 ", true},
		{"schema1_sglang_qwen3.5_gb300-fp4_agentic_agg-tp2-c1-mtp-hicache.yaml", "agg:tp2", true},
		{"schema1_trtllm_qwen3.5_gb300-fp4_agentx_disagg-3p2d-dep4-dep4-c704-mtp.yaml", "not modelled", true},
		{"schema1_sglang_deepseek-v4_agentic_disagg-2p1d-dep8-tp4-c80-mtp.yaml", "pass --model", false},
	} {
		code, out, stderr := runCLI("predict", "--recipe", filepath.Join(dir, tc.file))
		if tc.ok && (code != exitOK || !strings.Contains(out, tc.want) || !strings.Contains(out, "read from the recipe") || !strings.Contains(out, "prediction:")) {
			t.Errorf("%s: exit %d, want %q in\n%s%s", tc.file, code, tc.want, out, stderr)
		}
		if !tc.ok && (code != exitBadInput || !strings.Contains(stderr, tc.want)) {
			t.Errorf("%s: exit %d, %s", tc.file, code, stderr)
		}
	}
}

// recipe emit writes vLLM, TensorRT-LLM and pipeline-parallel layouts that
// recipe check passes and predict --recipe reads back as the same topology
// and k; layouts an engine does not deploy are refused with the reason.
func TestRecipeEmitEngines(t *testing.T) {
	for _, tc := range []struct {
		engine, topo, k string
		refuse          string // "" = emits
	}{
		{"sglang", "disagg:1xtp2pp2+1xtp4", "3", ""},
		{"sglang", "agg:tp2pp2", "0", ""},
		{"sglang", "agg:tp2pp2", "3", "check_server_args"},
		{"vllm", "agg:tp4", "3", ""},
		{"vllm", "disagg:1xdep4+2xtp4", "3", ""},
		{"vllm", "agg:tp8ep8", "2", ""},
		{"vllm", "agg:tp2pp2", "0", ""},
		{"vllm", "agg:tp8ep4", "2", "whole instance"},
		{"trtllm", "agg:tp8ep4", "3", ""},
		{"trtllm", "disagg:1xdep4+2xtp4", "3", ""},
		{"trtllm", "agg:tp4pp2", "0", ""},
	} {
		name := tc.engine + " " + tc.topo + " k" + tc.k
		code, text, stderr := runCLI("recipe", "emit", "--engine", tc.engine, "--topology", tc.topo, "--steps", tc.k, "--conc", "16")
		if tc.refuse != "" {
			if code != exitBadInput || !strings.Contains(stderr, tc.refuse) {
				t.Errorf("%s: exit %d, want 2 naming %q: %s", name, code, tc.refuse, stderr)
			}
			continue
		}
		if code != exitOK || !strings.Contains(text, "engine: "+tc.engine) {
			t.Errorf("%s: exit %d, %s", name, code, stderr)
			continue
		}
		withStdin(t, text, func() {
			if code, out, stderr := runCLI("recipe", "check", "-"); code != exitOK {
				t.Errorf("recipe check - on %s: exit %d\n%s%s", name, code, out, stderr)
			}
		})
		f := filepath.Join(t.TempDir(), "r.yaml")
		os.WriteFile(f, []byte(text), 0o644)
		code, out, stderr := runCLI("predict", "--recipe", f, "--json")
		if code != exitOK {
			t.Errorf("predict --recipe on %s: exit %d, %s", name, code, stderr)
			continue
		}
		var got struct {
			Variants []struct {
				Topology string `json:"topology"`
				Conc     int    `json:"conc"`
				Steps    int    `json:"steps"`
			} `json:"variants"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if v := got.Variants[0]; v.Topology != tc.topo || v.Steps != int(tc.k[0]-'0') || v.Conc != 16 {
			t.Errorf("predict --recipe on emitted %s: %+v", name, v)
		}
	}
}

// sweep --emit writes a recipe per interactivity frontier point and each
// passes recipe check.
func TestSweepEmit(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := runCLI("sweep", "--gpu", "b200", "--gpus", "2", "--isl", "1024", "--osl", "1024", "--steps", "0-1", "--conc", "4,32",
		"--requests", "48", "--scope", "agg", "--emit", dir)
	if code != exitOK {
		t.Fatalf("sweep --emit: exit %d, %s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) == 0 || strings.Count(out, "recipe written to") != len(files) {
		t.Fatalf("%d recipes written, output:\n%s", len(files), out)
	}
	for _, f := range files {
		if code, out, stderr := runCLI("recipe", "check", f); code != exitOK {
			t.Errorf("recipe check %s: exit %d\n%s%s", f, code, out, stderr)
		}
	}
}

// recipe emit and sweep --emit under --al (DeepSeek-R1 has no golden
// curve) write recipes that say the AL is the user's, and exit 0.
func TestEmitFixedAL(t *testing.T) {
	code, out, stderr := runCLI("recipe", "emit", "--model", "deepseek-r1", "--precision", "fp8", "--gpu", "h200", "--topology", "agg:tp8", "--steps", "3", "--al", "2.4")
	if code != exitOK || !strings.Contains(out, "at the AL 2.40 (given with --al") {
		t.Errorf("recipe emit --al: exit %d\n%s%s", code, out, stderr)
	}
	dir := t.TempDir()
	code, out, stderr = runCLI("sweep", "--model", "deepseek-r1", "--precision", "fp8", "--gpu", "h200", "--gpus", "8", "--isl", "1024", "--osl", "1024",
		"--steps", "3", "--al", "2.4", "--conc", "1,4", "--topologies", "agg:tp8", "--requests", "16", "--emit", dir)
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if code != exitOK || len(files) == 0 {
		t.Fatalf("sweep --al --emit: exit %d, %d recipes\n%s%s", code, len(files), out, stderr)
	}
	for _, f := range files {
		if b, err := os.ReadFile(f); err != nil || !strings.Contains(string(b), "(given with --al") {
			t.Errorf("%s: %v\n%s", f, err, b)
		}
	}
}

// merge --emit writes the recipes sweep --emit writes for the same sweep
// unsharded: the same files, byte for byte.
func TestMergeEmit(t *testing.T) {
	dir := t.TempDir()
	base := []string{"sweep", "--gpu", "b200", "--gpus", "2", "--isl", "1024", "--osl", "1024", "--steps", "0-1", "--conc", "4,32",
		"--requests", "48", "--scope", "agg"}
	whole := filepath.Join(dir, "whole")
	if code, _, stderr := runCLI(append(base, "--emit", whole)...); code != exitOK {
		t.Fatalf("sweep --emit: exit %d, %s", code, stderr)
	}
	var shards []string
	for i := range 2 {
		code, part, stderr := runCLI(append(base, "--json", "--shard", fmt.Sprintf("%d/2", i))...)
		if code != exitOK {
			t.Fatalf("shard %d: exit %d, %s", i, code, stderr)
		}
		f := filepath.Join(dir, fmt.Sprintf("shard%d.json", i))
		if err := os.WriteFile(f, []byte(part), 0o644); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, f)
	}
	merged := filepath.Join(dir, "merged")
	if code, _, stderr := runCLI(append([]string{"merge", "--emit", merged}, shards...)...); code != exitOK {
		t.Fatalf("merge --emit: exit %d, %s", code, stderr)
	}
	want, _ := filepath.Glob(filepath.Join(whole, "*.yaml"))
	got, _ := filepath.Glob(filepath.Join(merged, "*.yaml"))
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("sweep wrote %d recipes, merge %d", len(want), len(got))
	}
	for i := range want {
		a, _ := os.ReadFile(want[i])
		b, _ := os.ReadFile(got[i])
		if filepath.Base(want[i]) != filepath.Base(got[i]) || string(a) != string(b) {
			t.Errorf("%s differs from %s", got[i], want[i])
		}
	}
}

// TestRecipeEmitCheckEveryPreset: recipe emit | recipe check - exits 0 for
// every preset and engine, at the golden AL and under --al 2.5 (third
// review: a DeepSeek recipe emitted with --al failed model-unknown). The
// expected AL check reports is the golden value at k=3 read off
// golden/data (Qwen3.5 sizes borrow the 397B's curve, as predict does);
// a model without a curve has its speculative role force the --al itself
// (SGLang 2.50, vLLM synthetic_acceptance_length 2.50, TensorRT-LLM 1.50
// accepted drafts) and check warns that no golden value confirms it.
func TestRecipeEmitCheckEveryPreset(t *testing.T) {
	golden := map[string]float64{ // thinking on, k=3
		"Qwen3.5-397B-A17B": 3.39, "Qwen3.5-122B-A10B": 3.39, "Qwen3.5-35B-A3B": 3.39, // qwen3.5_mtp.yaml
		"Kimi-K2.5": 2.88, // kimik2.5_eagle3.yaml
	}
	forced := map[string]string{
		"sglang": "SGLANG_SIMULATE_ACC_LEN: '2.50'",
		"vllm":   `"rejection_sample_method": "synthetic", "synthetic_acceptance_length": 2.50`,
		"trtllm": "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: '1.50'",
	}
	presets := simulate.Presets()
	if len(presets) != 7 {
		t.Errorf("%d presets; the table above names 4 with a golden curve of the 7 this test was written for", len(presets))
	}
	for _, p := range presets {
		want, hasCurve := golden[p.Name]
		for _, engine := range []string{"sglang", "vllm", "trtllm"} {
			for _, al := range []string{"", "2.5"} {
				if al == "" && !hasCurve {
					continue // emit refuses: no golden AL and no --al
				}
				args := []string{"recipe", "emit", "--model", p.Name, "--engine", engine, "--topology", "agg:tp8", "--steps", "3"}
				if al != "" {
					args = append(args, "--al", al)
				}
				name := fmt.Sprintf("%s %s --al %q", p.Name, engine, al)
				code, text, stderr := runCLI(args...)
				if code != exitOK {
					t.Errorf("%s: emit exit %d %s", name, code, stderr)
					continue
				}
				if got := strings.Contains(text, forced[engine]); got == hasCurve {
					t.Errorf("%s: recipe forces the AL itself: %v, want %v\n%s", name, got, !hasCurve, text)
				}
				withStdin(t, text, func() {
					code, out, stderr := runCLI("recipe", "check", "-", "--json")
					if code != exitOK {
						t.Errorf("%s: check exit %d\n%s%s", name, code, out, stderr)
						return
					}
					var rep struct {
						Variants []struct {
							Roles []struct {
								ExpectedAL *float64 `json:"expected_al"`
							} `json:"roles"`
							Findings []struct{ Code, Severity string } `json:"findings"`
						} `json:"variants"`
					}
					if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Variants) != 1 || len(rep.Variants[0].Roles) != 1 {
						t.Fatalf("%s: %v\n%s", name, err, out)
					}
					v := rep.Variants[0]
					if got := v.Roles[0].ExpectedAL; hasCurve && (got == nil || *got != want) {
						t.Errorf("%s: expected AL %v, want the golden %v", name, got, want)
					}
					warned := false
					for _, f := range v.Findings {
						warned = warned || f.Code == "model-unknown" && f.Severity == "warning"
					}
					if warned == hasCurve {
						t.Errorf("%s: model-unknown warning %v, want %v (%+v)", name, warned, !hasCurve, v.Findings)
					}
				})
			}
		}
	}
}

// recipe emit refuses what predict refuses, with predict's message: the
// same flags must not give a recipe that cannot start. The running hint's
// 142 is checked by a second method: emit with --max-running 142 writes
// that cap, 143 is refused.
func TestRecipeEmitRefusesWhatPredictRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "Kimi-K2.5"}, "the weights alone do not fit"},
		{[]string{"--gpu", "b200", "--topology", "agg:tp2", "--conc", "256", "--isl", "1024", "--osl", "1024", "--steps", "3"}, "pass --max-running 142"},
		{[]string{"--model", "DeepSeek-V3", "--al", "2.5", "--topology", "agg:tp1", "--gpu", "h100", "--precision", "fp8"}, "the weights alone do not fit"},
	} {
		code, out, emitErr := runCLI(append([]string{"recipe", "emit"}, tc.args...)...)
		if code != exitBadInput || out != "" {
			t.Errorf("emit %v: exit %d, %d bytes written; want exit 2 and no recipe", tc.args, code, len(out))
		}
		pcode, _, predErr := runCLI(append([]string{"predict"}, tc.args...)...)
		if pcode != exitBadInput {
			t.Errorf("predict %v: exit %d, want 2", tc.args, pcode)
		}
		if got, want := strings.TrimPrefix(emitErr, "specsim recipe emit: "), strings.TrimPrefix(predErr, "specsim predict: "); got != want || !strings.Contains(got, tc.want) {
			t.Errorf("emit %v says\n%s\npredict says\n%s\nwant the same message, with %q", tc.args, got, want, tc.want)
		}
	}
	base := []string{"recipe", "emit", "--gpu", "b200", "--topology", "agg:tp2", "--conc", "256", "--isl", "1024", "--osl", "1024", "--steps", "3"}
	if code, _, stderr := runCLI(append(base, "--max-running", "143")...); code != exitBadInput || !strings.Contains(stderr, "does not fit") {
		t.Errorf("--max-running 143: exit %d, %s; want a refusal", code, stderr)
	}
	code, out, stderr := runCLI(append(base, "--max-running", "142")...)
	if code != exitOK || !strings.Contains(out, "max-running-requests: 142\n") {
		t.Errorf("--max-running 142: exit %d, %s\n%s", code, stderr, out)
	}
}

// A fixed-length (sa-bench) recipe claims no injection: recipe check calls
// it not-agentic, emit's header says real acceptance with the golden AL
// as the expectation, and predict --recipe reads the golden AL as that;
// an AgentX recipe still says AgentX injects it. The AL 4.80 at k = 6 is
// the qwen3.5 thinking-on golden curve's (golden/data/qwen3.5_mtp.yaml).
func TestRecipeEmitFixedLengthNotInjected(t *testing.T) {
	for _, tc := range []struct {
		args         []string
		agentic      bool
		header, from string
	}{
		{[]string{"--isl", "1024", "--osl", "1024", "--conc", "8"}, false, "nothing injects an AL and the\n# engine measures real acceptance; the prediction assumes the AL 4.80", "nothing injects it"},
		{[]string{"--conc", "8"}, true, "AgentX synthetic acceptance injects the AL 4.80", "injected by AgentX synthetic acceptance"},
	} {
		code, text, stderr := runCLI(append([]string{"recipe", "emit"}, tc.args...)...)
		if code != exitOK {
			t.Fatalf("emit %v: exit %d, %s", tc.args, code, stderr)
		}
		if !strings.Contains(text, tc.header) || !tc.agentic && strings.Contains(text, "AgentX synthetic acceptance injects") {
			t.Errorf("emit %v header:\n%s\nwant %q", tc.args, text[:strings.Index(text, "schema:")], tc.header)
		}
		f := filepath.Join(t.TempDir(), "r.yaml")
		os.WriteFile(f, []byte(text), 0o644)
		_, out, _ := runCLI("recipe", "check", f, "--json")
		if got := strings.Contains(out, `"not-agentic"`); got == tc.agentic {
			t.Errorf("emit %v: recipe check not-agentic %v, want %v", tc.args, got, !tc.agentic)
		}
		code, out, stderr = runCLI("predict", "--recipe", f, "--json")
		if code != exitOK {
			t.Fatalf("predict --recipe: exit %d, %s", code, stderr)
		}
		var got struct {
			Variants []struct {
				Read []struct{ Setting, Value, From string }
			}
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		ok := false
		for _, s := range got.Variants[0].Read {
			ok = ok || s.Setting == "golden AL" && s.Value == "4.8" && strings.HasSuffix(s.From, tc.from)
		}
		if !ok {
			t.Errorf("emit %v: predict --recipe read %+v; want golden AL 4.8 from ...%q", tc.args, got.Variants[0].Read, tc.from)
		}
	}
}

// TestSweepEmitRoundTrip: every recipe sweep --emit writes, read back
// with predict --recipe, figures its frontier point as predict with the
// swept flags and the sweep itself do (all at the same AgentX window): layouts, workers,
// running caps, CUDA graph sizes, mem fraction, chunk, host tier, k and
// AL round-trip exactly.
func TestSweepEmitRoundTrip(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI("sweep", "--gpus", "8", "--max-refine", "50", "--emit", dir, "--json")
	if code != exitOK {
		t.Fatalf("sweep: exit %d %s", code, errs)
	}
	type figures struct {
		TputPerGPU    float64 `json:"tput_per_gpu"`
		Interactivity float64 `json:"interactivity"`
		TTFTp90       float64 `json:"ttft_ms_p90"`
		TPOTp90       float64 `json:"tpot_ms_p90"`
	}
	var sw struct {
		Frontier []struct {
			Topology    string `json:"topology"`
			Conc, Steps int
			figures
		} `json:"frontier"`
		Stopped bool `json:"refine_budget_reached"`
	}
	if err := json.Unmarshal([]byte(out), &sw); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) != len(sw.Frontier) || len(files) == 0 {
		t.Fatalf("%d recipes for %d frontier points (%v)", len(files), len(sw.Frontier), err)
	}
	for i, pt := range sw.Frontier {
		f := files[i]
		name := strings.NewReplacer(":", "-", "+", "-").Replace(pt.Topology) + fmt.Sprintf("-c%d-k%d.yaml", pt.Conc, pt.Steps)
		if !strings.HasSuffix(f, name) {
			t.Fatalf("point %d %v: file %s", i, pt, f)
		}
		y, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(y), "`specsim predict --recipe "+filepath.Base(f)+" --agentx duration=900` reproduces it") {
			t.Errorf("%s: the header does not say how to reproduce the point (%v)", f, err)
		}
		if strings.Contains(string(y), "stopped at its --max-refine budget") != sw.Stopped {
			t.Errorf("%s: the header's unsettled-sweep warning does not match refine_budget_reached %v", f, sw.Stopped)
		}
		code, out, errs := runCLI("predict", "--recipe", f, "--agentx", "duration=900", "--json")
		if code != exitOK {
			t.Fatalf("%s: exit %d %s", f, code, errs)
		}
		var rd struct {
			Variants []struct {
				Result figures `json:"result"`
			} `json:"variants"`
		}
		if err := json.Unmarshal([]byte(out), &rd); err != nil || len(rd.Variants) != 1 {
			t.Fatalf("%s: %v %s", f, err, out)
		}
		code, out, errs = runCLI("predict", "--topology", pt.Topology, "--conc", strconv.Itoa(pt.Conc), "--steps", strconv.Itoa(pt.Steps), "--agentx", "duration=900", "--json")
		if code != exitOK {
			t.Fatalf("%v: exit %d %s", pt, code, errs)
		}
		var want figures
		if err := json.Unmarshal([]byte(out), &want); err != nil {
			t.Fatal(err)
		}
		if got := rd.Variants[0].Result; got != want || got != pt.figures {
			t.Errorf("%s: predict --recipe %+v, predict %+v, sweep %+v", filepath.Base(f), got, want, pt.figures)
		}
	}
}
