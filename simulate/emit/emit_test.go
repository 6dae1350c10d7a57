package emit

import (
	"strings"
	"testing"

	"github.com/specsim/specsim/audit/recipe"
	"github.com/specsim/specsim/golden"
	"github.com/specsim/specsim/kernels"
	"github.com/specsim/specsim/simulate"
)

func resolved(t *testing.T, engine string) *simulate.Resolved {
	t.Helper()
	curves, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	// Resolve refuses an engine without MoE backends (atom): emit's own
	// refusal is checked on a query resolved for sglang that names it.
	priced := engine
	if engine == "atom" {
		priced = "sglang"
	}
	q := simulate.Query{Model: "Qwen3.5-397B-A17B", Precision: "fp4", GPU: "gb300", Engine: priced, Spec: "mtp",
		Workload: "fixed", ISL: 1024, OSL: 1024, RangeRatio: 0.8, SchedOverhead: -1, SpecOverhead: -1, Seed: 1}
	r, err := q.Resolve(curves, kernels.DefaultCatalog())
	if err != nil {
		t.Fatal(err)
	}
	r.Q.Engine = engine
	return r
}

// A recipe written for a layout reads back (audit/recipe's parser and
// Variant.Settings, an independent reader) as the same layout, draft
// length and concurrency; layouts the engine does not deploy are refused.
func TestRecipeRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		engine, topo string
		k, conc      int
		refuse       string
		prefillDraft bool
	}{
		{"sglang", "agg:tp4", 3, 32, "", false},
		{"sglang", "disagg:1xtp2pp2+1xtp4", 3, 16, "", false},
		{"sglang", "disagg:1xtp4+1xtp4", 3, 16, "", true},
		{"trtllm", "disagg:1xdep4+2xtp4", 3, 16, "", true},
		{"sglang", "agg:tp2pp2", 3, 16, "check_server_args", false},
		{"vllm", "agg:tp8ep8", 2, 16, "", false},
		{"vllm", "disagg:1xdep4+2xtp4", 3, 16, "", false},
		{"vllm", "agg:tp8ep4", 2, 16, "whole instance", false},
		{"trtllm", "agg:tp8ep4", 3, 64, "", false},
		{"trtllm", "agg:tp4pp2", 0, 8, "", false},
		{"atom", "agg:tp4", 3, 8, "recipe emit writes sglang, vllm and trtllm", false},
	} {
		name := tc.engine + " " + tc.topo
		topo, err := simulate.ParseTopology(tc.topo)
		if err != nil {
			t.Fatal(err)
		}
		r := resolved(t, tc.engine)
		r.Q.Server.PrefillDraft = tc.prefillDraft
		text, err := Recipe(r, topo, tc.conc, tc.k, "test", "a note")
		if tc.refuse != "" {
			if err == nil || !strings.Contains(err.Error(), tc.refuse) {
				t.Errorf("%s: err %v, want one naming %q", name, err, tc.refuse)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.Contains(text, "# a note\n") || !strings.Contains(text, "path: "+FillIn) {
			t.Errorf("%s: note or fill-in missing:\n%s", name, text)
		}
		rc, err := recipe.Parse("emitted.yaml", []byte(text), "")
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, text)
		}
		s, err := rc.Variants[0].Settings(nil, recipe.SettingsOptions{Model: "qwen3.5", Conc: 1})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		par := func(l recipe.Layout) simulate.Parallel {
			return simulate.Parallel{TP: l.TP, EP: l.EP, PP: l.PP, DPAttention: l.DPAttention}
		}
		got := simulate.Topology{Agg: par(s.Agg)}
		if s.Disagg {
			got = simulate.Topology{Disagg: true, PrefillWorkers: s.Prefill.Workers, Prefill: par(s.Prefill), DecodeWorkers: s.Decode.Workers, Decode: par(s.Decode)}
		}
		if got.String() != tc.topo || s.Steps != tc.k || s.Conc != tc.conc || s.Engine != tc.engine || s.PrefillDraft != tc.prefillDraft {
			t.Errorf("%s: read back %s k %d conc %d engine %s prefill draft %v", name, got, s.Steps, s.Conc, s.Engine, s.PrefillDraft)
		}
	}
}

// Frontier names one file per frontier point and says why a point has none.
func TestFrontier(t *testing.T) {
	so := &simulate.SweepOutput{SweepResult: &simulate.SweepResult{}}
	pt := func(topo string, conc, k int, tput, inter float64) simulate.Point {
		var p simulate.Point
		p.Topology, p.Conc, p.Steps, p.TputPerGPU, p.Interactivity = topo, conc, k, tput, inter
		return p
	}
	so.Frontier = []simulate.Point{pt("agg:tp4", 8, 3, 1234.5, 98.76), pt("agg:tp8ep4", 8, 2, 2000, 50)}
	files, err := Frontier(so, resolved(t, "vllm"), "test")
	if err != nil || len(files) != 2 {
		t.Fatalf("%d files, %v", len(files), err)
	}
	if files[0].Name != "01-agg-tp4-c8-k3.yaml" || files[0].Err != nil || !strings.Contains(files[0].Text, "predicted 1230 tok/s/GPU at 98.8 tok/s/user") {
		t.Errorf("point 1: %s %v\n%s", files[0].Name, files[0].Err, files[0].Text)
	}
	if files[1].Err == nil || files[1].Text != "" || !strings.Contains(files[1].Err.Error(), "whole instance") {
		t.Errorf("point 2: want a layout refusal, got %v", files[1].Err)
	}
}

// A recipe for a fixed --al (a model without a golden curve, such as
// DeepSeek-R1) or a histogram says where its AL came from instead of
// reading a golden curve that is not there. Without a golden curve AgentX
// has no AL to inject, so the speculative role forces --al itself (SGLang
// env); with one, the comment says AgentX injects the curve's AL, not --al,
// on an AgentX benchmark, and on sa-bench that nothing injects it (3.39:
// the qwen3.5 thinking-on golden curve at k = 3).
func TestRecipeAcceptanceSource(t *testing.T) {
	curves, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		q     simulate.Query
		topo  string
		k     int
		wants []string
	}{
		{"deepseek-r1 --al", simulate.Query{Model: "deepseek-r1", Precision: "fp8", GPU: "h200", AL: 2.4}, "agg:tp8", 3,
			[]string{"at the AL 2.40 (given with --al, not a golden curve)", "No golden curve exists for\n# DeepSeek-V3",
				"    env:\n      SGLANG_SIMULATE_ACC_LEN: '2.40'\n      SGLANG_SIMULATE_ACC_METHOD: match-expected\n      SGLANG_SIMULATE_ACC_TOKEN_MODE: real-draft-token\n"}},
		{"qwen3.5 --al agentx", simulate.Query{Model: "Qwen3.5-397B-A17B", Precision: "fp4", GPU: "gb300", AL: 3, Workload: "agentx"}, "agg:tp4", 6,
			[]string{"sized at the AL 3.00 (given with --al, not a golden curve)", "injects the golden AL of qwen3.5-397b-a17b-nvfp4 at this draft length instead"}},
		{"qwen3.5 golden agentx", simulate.Query{Model: "Qwen3.5-397B-A17B", Precision: "fp4", GPU: "gb300", Workload: "agentx"}, "agg:tp4", 3,
			[]string{"AgentX synthetic acceptance injects the AL 3.39\n# (golden AL, golden/data/qwen3.5_mtp.yaml (embedded))"}},
		// sa-bench is not AgentX: nothing injects, the AL is an expectation.
		{"qwen3.5 --al sa-bench", simulate.Query{Model: "Qwen3.5-397B-A17B", Precision: "fp4", GPU: "gb300", AL: 3}, "agg:tp4", 6,
			[]string{"nothing injects an AL and the\n# engine measures real acceptance; the prediction assumes the AL 3.00\n# (given with --al, not a golden curve), an expectation, not injected."}},
		{"qwen3.5 golden sa-bench", simulate.Query{Model: "Qwen3.5-397B-A17B", Precision: "fp4", GPU: "gb300"}, "agg:tp4", 3,
			[]string{"assumes the AL 3.39\n# (golden AL, golden/data/qwen3.5_mtp.yaml (embedded)), an expectation, not injected."}},
	} {
		q := tc.q
		q.Engine, q.Spec, q.RangeRatio, q.SchedOverhead, q.SpecOverhead, q.Seed = "sglang", "mtp", 0.8, -1, -1, 1
		if q.Workload == "" {
			q.Workload, q.ISL, q.OSL = "fixed", 1024, 1024
		}
		r, err := q.Resolve(curves, kernels.DefaultCatalog())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		topo, err := simulate.ParseTopology(tc.topo)
		if err != nil {
			t.Fatal(err)
		}
		text, err := Recipe(r, topo, 8, tc.k, "test", "")
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		for _, w := range tc.wants {
			if !strings.Contains(text, w) {
				t.Errorf("%s: no %q in\n%s", tc.name, w, text)
			}
		}
	}
}

// TestReplayArgs: the --agentx argument a sweep-emitted recipe's header
// gives predict --recipe: the query's keys, its duration replaced by the
// sweep's window (at most SweepAgentXWindow) unless that is predict's
// default 3600 s; nothing for a fixed-length workload.
func TestReplayArgs(t *testing.T) {
	curves, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ workload, agentx, want string }{
		{"fixed", "", ""},
		{"agentx", "", "duration=900"},
		{"agentx", "max-traces=100", "max-traces=100,duration=900"},
		{"agentx", "duration=600", "duration=600"},
		{"agentx", "duration=1800, seed=7", "seed=7,duration=900"},
	} {
		q := simulate.Query{Model: "Qwen3.5-397B-A17B", Precision: "fp4", GPU: "gb300", Workload: c.workload, AgentX: c.agentx, Seed: 1}
		if c.workload == "fixed" {
			q.ISL, q.OSL = 1024, 1024
		}
		r, err := q.Resolve(curves, kernels.DefaultCatalog())
		if err != nil {
			t.Fatal(err)
		}
		if got := replayArgs(r); got != c.want {
			t.Errorf("%s --agentx %q: %q, want %q", c.workload, c.agentx, got, c.want)
		}
	}
}

// TestEmitEagerBatchComment: a role whose batches the simulation ran
// above the CUDA graph size says so, whether its cap is written (the
// closed loop's one a session, which recipe check then warns about) or
// left to SGLang's default (an AgentX decode role without speculation,
// whose KV pool at the mean context runs 265 requests on TP8 for the 35B
// model, above 256).
func TestEmitEagerBatchComment(t *testing.T) {
	curves, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q          simulate.Query
		topo       string
		conc       int
		want, warn bool
	}{
		{simulate.Query{Model: "Qwen3.5-35B-A3B", Workload: "agentx"}, "disagg:1xtp4+1xtp8", 1024, true, false},
		{simulate.Query{Model: "Qwen3.5-397B-A17B", Workload: "fixed", ISL: 1000, OSL: 100}, "agg:tp8", 600, true, true},
		{simulate.Query{Model: "Qwen3.5-397B-A17B", Workload: "fixed", ISL: 1000, OSL: 100}, "agg:tp8", 200, false, false},
	} {
		q := c.q
		q.Precision, q.GPU, q.Seed = "fp4", "gb300", 1
		r, err := q.Resolve(curves, kernels.DefaultCatalog())
		if err != nil {
			t.Fatal(err)
		}
		tp, err := simulate.ParseTopology(c.topo)
		if err != nil {
			t.Fatal(err)
		}
		y, err := Recipe(r, tp, c.conc, 0, "test", "")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(y, "run without CUDA graphs, as simulated"); got != c.want {
			t.Errorf("%s %s c%d: eager-batch comment %v, want %v", q.Model, c.topo, c.conc, got, c.want)
		}
		if got := strings.Contains(y, "(recipe check warns)"); got != c.warn {
			t.Errorf("%s %s c%d: says recipe check warns %v, want %v", q.Model, c.topo, c.conc, got, c.warn)
		}
	}
}
