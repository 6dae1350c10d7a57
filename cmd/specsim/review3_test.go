package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/specsim/specsim/simulate"
)

// TestEngineFlagsCheckedUpFront: a misspelled --engine or MoE backend is
// refused before anything is priced, by every command that takes them,
// with the flag, the value and the accepted values; a sweep no longer
// skips every topology and exits 0.
func TestEngineFlagsCheckedUpFront(t *testing.T) {
	const engines = "want sglang, trtllm, vllm"
	const sglangBackends = "want auto, flashinfer_trtllm, flashinfer_trtllm_routed, flashinfer_cutlass, flashinfer_cutedsl, flashinfer_mxfp4, cutlass, deep_gemm, triton, triton_kernel"
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"predict", "--engine", "foo"}, []string{"specsim predict: --engine foo: unknown engine:", engines}},
		{[]string{"sweep", "--engine", "sgl", "--gpus", "2"}, []string{"specsim sweep: --engine sgl: unknown engine:", engines}},
		{[]string{"bestk", "--engine", "foo"}, []string{"specsim bestk: --engine foo:", engines}},
		{[]string{"recipe", "emit", "--engine", "foo"}, []string{"specsim recipe emit: --engine foo:", engines}},
		{[]string{"sweep", "--moe-runner-backend", "foo", "--gpus", "2"}, []string{"specsim sweep: --moe-runner-backend foo:", sglangBackends}},
		{[]string{"sweep", "--speculative-moe-runner-backend", "foo", "--gpus", "2"}, []string{"specsim sweep: --speculative-moe-runner-backend foo:", sglangBackends}},
		{[]string{"predict", "--engine", "trtllm", "--moe-runner-backend", "triton"}, []string{"--moe-runner-backend triton: engine trtllm", "want auto, cutlass, trtllm, deepgemm"}},
		{[]string{"bestk", "--moe-runner-backend", "foo"}, []string{"specsim bestk: --moe-runner-backend foo:", sglangBackends}},
	} {
		code, out, stderr := runCLI(c.args...)
		if code != exitBadInput || out != "" {
			t.Errorf("%v: exit %d, stdout %q", c.args, code, out)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", c.args, stderr, w)
			}
		}
	}
}

// TestKernelsBackendsNamesItsFlags: kernels backends names the flag that
// holds the bad value (--engine, --backend), not SGLang's flag.
func TestKernelsBackendsNamesItsFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "foo"}, "specsim kernels backends: --engine foo: unknown engine: want sglang, trtllm, vllm\n"},
		{[]string{"--engine", "sglang", "--backend", "foo"}, "specsim kernels backends: --backend foo: engine sglang has no MoE backend \"foo\""},
		{[]string{"--engine", "vllm", "--speculative-moe-runner-backend", "foo"}, "specsim kernels backends: --speculative-moe-runner-backend foo: engine vllm has no MoE backend \"foo\""},
	} {
		code, _, stderr := runCLI(append([]string{"kernels", "backends"}, c.args...)...)
		if code != exitBadInput || !strings.HasPrefix(stderr, c.want) || strings.Contains(stderr, "--moe-runner-backend") {
			t.Errorf("%v: exit %d, stderr %q, want prefix %q", c.args, code, stderr, c.want)
		}
	}
}

// TestSweepTopologiesDeduplicated: a topology listed twice is priced once;
// the list keeps its first-seen order, as --conc does.
func TestSweepTopologiesDeduplicated(t *testing.T) {
	evaluated := map[string]int{}
	for _, c := range []struct {
		list string
		want []string
	}{
		{"agg:tp2", []string{"agg:tp2"}},
		{"agg:dep2", []string{"agg:dep2"}},
		{"agg:tp2,agg:tp2", []string{"agg:tp2"}},
		{"agg:dep2,agg:tp2,agg:dep2,agg:tp2", []string{"agg:dep2", "agg:tp2"}},
	} {
		code, out, stderr := runCLI("sweep", "--topologies", c.list, "--gpus", "2", "--conc", "4,16", "--json")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.list, code, stderr)
		}
		var r struct {
			Inputs struct {
				Topologies []string `json:"topologies"`
			} `json:"inputs"`
			Evaluated int `json:"evaluated"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Inputs.Topologies, c.want) {
			t.Errorf("%s: topologies %v, want %v", c.list, r.Inputs.Topologies, c.want)
		}
		if c.list == c.want[0] {
			evaluated[c.list] = r.Evaluated
			continue
		}
		want := 0
		for _, tp := range c.want {
			want += evaluated[tp]
		}
		if r.Evaluated != want {
			t.Errorf("%s: %d configurations evaluated, want %d (each topology once)", c.list, r.Evaluated, want)
		}
	}
	if evaluated["agg:tp2"] == 0 {
		t.Fatal("agg:tp2 alone evaluated nothing")
	}
}

// TestFixedALNamesTheStepsRange: --al (or --histogram) applies to every k
// of a --steps range; a value that does not fit one says which k and the
// range, and the k from which it fits (AL 3 needs k + 1 >= 3).
func TestFixedALNamesTheStepsRange(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "hist.csv")
	if err := os.WriteFile(hist, []byte("length,count\n1,10\n2,10\n3,10\n4,10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "--steps", "0-8", "--al", "3", "--gpus", "2"},
			"specsim sweep: --al 3 applies to every draft length k of --steps 0-8 and does not fit k = 1: outside [1, 2]: at 1 draft steps at most k+1 tokens are accepted; it fits k = 2 and up: --steps 2-8\n"},
		{[]string{"sweep", "--steps", "1-4", "--al", "4.5", "--gpus", "2"},
			"specsim sweep: --al 4.5 applies to every draft length k of --steps 1-4 and does not fit k = 1: outside [1, 2]: at 1 draft steps at most k+1 tokens are accepted; it fits k = 4 and up: --steps 4-4\n"},
		{[]string{"bestk", "--al", "3"},
			"specsim bestk: --al 3 applies to every draft length k of the default --steps 0-8 and does not fit k = 1: outside [1, 2]: at 1 draft steps at most k+1 tokens are accepted; it fits k = 2 and up: --steps 2-8\n"},
		{[]string{"bestk", "--steps", "2-3", "--al", "5"},
			"specsim bestk: --al 5 applies to every draft length k of --steps 2-3 and does not fit k = 2: outside [1, 3]: at 2 draft steps at most k+1 tokens are accepted\n"},
		{[]string{"sweep", "--steps", "0-6", "--method", "empirical", "--histogram", hist, "--gpus", "2"},
			"specsim sweep: --histogram " + hist + " applies to every draft length k of --steps 0-6 and does not fit k = 1: lengths up to 4 do not fit 1 draft steps (at most k+1 = 2); it fits k = 3 and up: --steps 3-6\n"},
	} {
		code, _, stderr := runCLI(c.args...)
		if code != exitBadInput || stderr != c.want {
			t.Errorf("%v: exit %d\n got %q\nwant %q", c.args, code, stderr, c.want)
		}
	}
}

// TestBandWordingIsAFactor: the band is applied as a factor, v/(1+w) to
// v(1+w) (JSON lo/hi), so the band lines print the factor and the
// asymmetric percentages it spans, never a symmetric ±w.
func TestBandWordingIsAFactor(t *testing.T) {
	wl := []string{"--isl", "1024", "--osl", "128", "--conc", "4"}
	code, out, stderr := runCLI(append([]string{"predict", "--json"}, wl...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var p struct {
		Tput float64 `json:"tput_per_gpu"`
		Band struct {
			Relative struct{ Throughput, Latency float64 } `json:"relative"`
			Tput     struct{ Lo, Hi float64 }              `json:"tput_per_gpu"`
		} `json:"band"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	wt, wlat := p.Band.Relative.Throughput, p.Band.Relative.Latency
	if wt <= 0 || math.Abs(p.Band.Tput.Lo*(1+wt)-p.Tput) > 1e-6*p.Tput || math.Abs(p.Band.Tput.Hi/(1+wt)-p.Tput) > 1e-6*p.Tput {
		t.Fatalf("band %+v of %v with width %v is not the factor 1+w either way", p.Band.Tput, p.Tput, wt)
	}
	factor := func(w float64) string {
		return fmt.Sprintf("×/÷ %.2f (-%d%%/+%d%%)", 1+w, int(math.Round(100*(1-1/(1+w)))), int(math.Round(100*w)))
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"predict"}, "band: throughput " + factor(wt) + ", latency " + factor(wlat) + "; "},
		{[]string{"sweep", "--topologies", "agg:tp2", "--steps", "3"}, "band: every throughput " + factor(wt) + ", every latency " + factor(wlat) + " ("},
		{[]string{"bestk", "--steps", "2-3"}, "band: throughputs " + factor(wt) + ", latencies " + factor(wlat) + " ("},
	} {
		code, out, stderr := runCLI(append(c.args, wl...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		if !strings.Contains(out, c.want) || strings.Contains(out, "±") || !strings.Contains(out, "p80 of the error factor max(predicted/measured, measured/predicted)") {
			t.Errorf("%v: output lacks %q (or still says ±):\n%s", c.args, c.want, out)
		}
	}
	for _, c := range []struct {
		w    float64
		prec int
		want string
	}{
		{0.82, 0, "×/÷ 1.82 (-45%/+82%)"},
		{3.28, 0, "×/÷ 4.28 (-77%/+328%)"},
		{0.1, 1, "×/÷ 1.100 (-9.1%/+10.0%)"},
	} {
		if got := simulate.BandText(c.w, c.prec); got != c.want {
			t.Errorf("BandText(%v, %d) = %q, want %q", c.w, c.prec, got, c.want)
		}
	}
}

// TestRecipeCheckErrorsFirstInEveryFormat: the override_tp4_tp4_c8 variant
// has a cuda-graph-below-running-cap warning, which the checks find first,
// and an fp8-nextn-moe error; every format lists the error first.
func TestRecipeCheckErrorsFirstInEveryFormat(t *testing.T) {
	const variant = "testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_disagg-variants.yaml:override_tp4_tp4_c8"
	for _, c := range []struct {
		format         string
		error, warning string
	}{
		{"text", "\nerror     fp8-nextn-moe", "\nwarning   cuda-graph-below-running-cap"},
		{"json", `"code": "fp8-nextn-moe"`, `"code": "cuda-graph-below-running-cap"`},
		{"markdown", "| error | fp8-nextn-moe |", "| warning | cuda-graph-below-running-cap |"},
		{"csv", "\noverride_tp4_tp4_c8,error,fp8-nextn-moe,", "\noverride_tp4_tp4_c8,warning,cuda-graph-below-running-cap,"},
	} {
		code, out, stderr := runCLI("recipe", "check", "--format", c.format, "../../"+variant)
		if code != exitOK && code != exitFindings {
			t.Fatalf("%s: exit %d: %s", c.format, code, stderr)
		}
		e, w := strings.Index(out, c.error), strings.Index(out, c.warning)
		if e < 0 || w < 0 || e > w {
			t.Errorf("%s: error at %d, warning at %d, want both, the error first:\n%s", c.format, e, w, out)
		}
	}
}

// TestPredictSchema1RecipeRunsAsWritten: a schema-1 recipe gets nothing
// injected, so predict --recipe simulates the AL it forces itself:
// SGLANG_SIMULATE_ACC_LEN (bonus token included, clamped to k+1 = 4,
// off at <= 0, its method multinomial where set), TensorRT-LLM's
// forced accepted drafts + 1; with none, the golden AL (3.39 at k = 3),
// saying so; --steps 2 gives the golden AL at 2 (2.73, golden lookup).
func TestPredictSchema1RecipeRunsAsWritten(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile("../../testdata/recipes/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	sgl := read("schema1_sglang_qwen3.5_gb300-fp4_agentic_agg-tp2-c1-mtp-hicache.yaml")
	trt := read("schema1_trtllm_qwen3.5_gb300-fp4_agentx_disagg-3p2d-dep4-dep4-c704-mtp.yaml")
	const sglLen = "    SGLANG_SIMULATE_ACC_LEN: '3.39'\n"
	const sglMethod = "    SGLANG_SIMULATE_ACC_METHOD: match-expected\n"
	dir := t.TempDir()
	for _, c := range []struct {
		name, recipe string
		args         []string
		al           float64
		method       string // inputs.query.method
		from         string // the "acceptance length" row's from
	}{
		{"sglang 2.50", strings.Replace(sgl, sglLen, "    SGLANG_SIMULATE_ACC_LEN: '2.50'\n", 1), nil, 2.5, "",
			"roles.agg SGLANG_SIMULATE_ACC_LEN 2.5 (bonus token included), match-expected (a schema-1 recipe runs as written)"},
		{"sglang as shipped", sgl, nil, 3.39, "", "roles.agg SGLANG_SIMULATE_ACC_LEN 3.39 (bonus token included)"},
		{"sglang above k+1", strings.Replace(sgl, sglLen, "    SGLANG_SIMULATE_ACC_LEN: '9'\n", 1), nil, 4, "", "SGLANG_SIMULATE_ACC_LEN 9 (bonus token included), match-expected; clamped to k+1 = 4"},
		{"sglang multinomial", strings.Replace(strings.Replace(sgl, sglLen, "    SGLANG_SIMULATE_ACC_LEN: '2.50'\n", 1), sglMethod, "    SGLANG_SIMULATE_ACC_METHOD: multinomial\n", 1), nil, 2.5, "sglang-multinomial", "2.5 (bonus token included), multinomial"},
		{"sglang method default", strings.Replace(strings.Replace(sgl, sglLen, "    SGLANG_SIMULATE_ACC_LEN: '2.50'\n", 1), sglMethod, "", 1), nil, 2.5, "", "2.5 (bonus token included), match-expected"},
		{"sglang off", strings.Replace(sgl, sglLen, "    SGLANG_SIMULATE_ACC_LEN: '0'\n", 1), nil, 3.39, "",
			`the golden AL, the expectation of real acceptance: roles.agg SGLANG_SIMULATE_ACC_LEN is "0", which turns SGLang's simulated acceptance off`},
		{"sglang none", strings.Replace(sgl, sglLen, "", 1), nil, 3.39, "", "the golden AL, the expectation of real acceptance: the recipe forces no acceptance"},
		{"sglang 2.50 at --steps 2", strings.Replace(sgl, sglLen, "    SGLANG_SIMULATE_ACC_LEN: '2.50'\n", 1), []string{"--steps", "2"}, 2.73, "", ""},
		{"trtllm 1.5 drafts", strings.ReplaceAll(trt, "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: '3.80'", "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: '1.5'"), nil, 2.5, "",
			"roles.decode TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS 1.5 accepted drafts + the bonus token"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".yaml")
		if err := os.WriteFile(path, []byte(c.recipe), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runCLI(append([]string{"predict", "--recipe", path, "--isl", "1024", "--osl", "128", "--requests", "20", "--json"}, c.args...)...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.name, code, stderr)
		}
		var r struct {
			Variants []struct {
				Read   []struct{ Setting, Value, From string } `json:"read"`
				Result struct {
					AL float64 `json:"al"`
				} `json:"result"`
				Inputs struct {
					Query struct {
						Method string `json:"method"`
					} `json:"query"`
				} `json:"inputs"`
			} `json:"variants"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Variants) != 1 {
			t.Fatalf("%s: %v %s", c.name, err, out)
		}
		v := r.Variants[0]
		if math.Abs(v.Result.AL-c.al) > 1e-9 || v.Inputs.Query.Method != c.method {
			t.Errorf("%s: AL %v method %q, want %v %q", c.name, v.Result.AL, v.Inputs.Query.Method, c.al, c.method)
		}
		var from []string
		for _, s := range v.Read {
			if strings.Contains(s.From, "injected by AgentX") {
				t.Errorf("%s: %s row says %q", c.name, s.Setting, s.From)
			}
			if s.Setting == "acceptance length" {
				from = append(from, s.From)
			}
		}
		switch {
		case c.from == "" && len(from) > 0:
			t.Errorf("%s: acceptance length rows %q, want none (the recipe's AL is for its own k)", c.name, from)
		case c.from != "" && (len(from) != 1 || !strings.Contains(from[0], c.from)):
			t.Errorf("%s: acceptance length rows %q, want one with %q", c.name, from, c.from)
		}
	}
}
