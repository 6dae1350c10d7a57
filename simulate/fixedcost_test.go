package simulate

import (
	"encoding/csv"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/specsim/specsim/simulate/acceptance"
)

// readLaunchTable reads one of kernels/data/h200/launch*.csv as
// kernel/n -> columns.
func readLaunchTable(t *testing.T, file string) map[string]map[string]float64 {
	t.Helper()
	b, err := os.ReadFile("../kernels/data/h200/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(strings.Join(lines, "\n"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for _, r := range rows[1:] {
		m := map[string]float64{}
		for i, h := range rows[0][2:] {
			v, err := strconv.ParseFloat(r[i+2], 64)
			if err != nil {
				t.Fatal(err)
			}
			m[h] = v * 1e-6
		}
		out[r[0]+"/"+r[1]] = m
	}
	return out
}

// TestLaunchConstantsMatchTables: the launch prices are the measured tables'
// figures (the 1000-launch rows; the graph replay's cost beyond its nodes is
// the intercept of the line through the 1000- and 3000-node replays).
func TestLaunchConstantsMatchTables(t *testing.T) {
	l := readLaunchTable(t, "launch.csv")
	r := readLaunchTable(t, "launch_replay.csv")
	r1, r3 := r["triton_1block/1000"]["replay_gpu_us"], r["triton_1block/3000"]["replay_gpu_us"]
	intercept := r1 - 1000*(r3-r1)/2000
	ch := readLaunchTable(t, "chain.csv") // batch/layers -> columns
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range ch {
		lo, hi = math.Min(lo, row["gap_per_op_us"]), math.Max(hi, row["gap_per_op_us"])
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"chain gap min", h200ChainGapMin, lo},
		{"chain gap max", h200ChainGapMax, hi},
		{"graph node", h200GraphNode, l["triton_1block/1000"]["graph_node_us"]},
		{"graph replay", h200GraphLaunch, intercept},
		{"eager cuBLAS", h200EagerGEMM, l["torch_linear_bf16_1x4096x256/1000"]["eager_launch_us"]},
		{"eager Triton", h200EagerTriton, l["triton_1block/1000"]["eager_launch_us"]},
		{"eager torch", h200EagerTorch, l["torch_add_1elem/1000"]["eager_launch_us"]},
	} {
		if math.Abs(c.got-c.want) > 0.01e-6 {
			t.Errorf("%s: %.3f us in the code, %.3f us in the table", c.name, c.got*1e6, c.want*1e6)
		}
	}
}

// TestHybridKernelCounts: the per-layer kernels no op prices, as counted at
// SGLang v0.5.14's source (hybridKernels), for the FP8 Qwen3.5 release on
// the Triton MoE path: a GDN layer has the split, the gated norm and
// out_proj's activation quant (3), a full-attention layer the q copy, the KV
// write, the output gate and o_proj's quant (4); the MoE adds the gate's
// mul-add, moe_align and the intermediate quant (3). 45 GDN and 15 full
// layers plus embed and final norm: 45*6 + 15*7 + 2 = 377 nodes.
func TestHybridKernelCounts(t *testing.T) {
	m, err := LookupPreset("Qwen3.5-397B-A17B")
	if err != nil {
		t.Fatal(err)
	}
	g := gpu(t, "h200")
	e, err := NewEngine(m, g, Parallel{TP: 8, EP: 8, PP: 1}, EngineConfig{Precision: FP8, MoEBackend: "triton", SchedOverhead: -1, SpecOverhead: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !e.countedFixed() {
		t.Fatal("Qwen3.5 on SGLang should take the counted path")
	}
	if got := e.hybridLayer(false, e.Target, "triton").unpriced; got != 6 {
		t.Errorf("GDN layer: %v unpriced kernels, want 6", got)
	}
	if got := e.hybridLayer(true, e.Target, "triton").unpriced; got != 7 {
		t.Errorf("full-attention layer: %v unpriced kernels, want 7", got)
	}
	counted, total, _, nodes := e.layerGapSplit()
	if nodes != 377 || !near(counted, 377*h200GraphNode, 1e-12) || !near(total, 60*layerGap, 1e-12) {
		t.Errorf("split: %d nodes, %.3f of %.3f ms; want 377 nodes", nodes, counted*1e3, total*1e3)
	}
	// critical paths: 45 GDN+MoE layers x 18 kernels + 15 full+MoE x 21
	if got := e.criticalKernels(); got != 45*18+15*21 {
		t.Errorf("critical-path kernels %v, want 1125", got)
	}
	// a decode forward in a graph pays one measured replay for launches
	var b Breakdown
	e.addForwardFixed(&b, shape{seqs: 16, q: 1, ctx: 1024, logits: 16})
	if !near(b.Launch, h200GraphLaunch, 1e-15) || !near(b.Gap, 60*layerGap, 1e-15) {
		t.Errorf("graph forward: launch %.2f us gap %.3f ms", b.Launch*1e6, b.Gap*1e3)
	}
}

// TestFixedCostsPerEngine: DeepSeek (not counted) and TensorRT-LLM keep the
// launch model the fitted layer gap was fitted with.
func TestFixedCostsPerEngine(t *testing.T) {
	q, _ := LookupPreset("Qwen3.5-397B-A17B")
	d, err := LookupPreset("DeepSeek-R1")
	if err != nil {
		t.Fatal(err)
	}
	g := gpu(t, "h200")
	for _, c := range []struct {
		name   string
		m      *Model
		engine string
	}{{"deepseek sglang", d, "sglang"}, {"qwen trtllm", q, "trtllm"}} {
		e, err := NewEngine(c.m, g, Parallel{TP: 8, EP: 8, PP: 1}, EngineConfig{Precision: FP8, EngineName: c.engine, SchedOverhead: -1, SpecOverhead: -1})
		if err != nil {
			t.Fatal(err)
		}
		if e.countedFixed() {
			t.Errorf("%s: counted path taken", c.name)
		}
		s := shape{seqs: 8, q: 1, ctx: 1024, logits: 8}
		var b Breakdown
		e.addForwardFixed(&b, s)
		if want := e.launch(c.m.Layers*14+6, s); !near(b.Launch, want, 1e-15) {
			t.Errorf("%s: launch %.2f us, want %.2f", c.name, b.Launch*1e6, want*1e6)
		}
	}
}

// TestCostNotesNameSources: predict's source lines say which MoE shard an
// SGLang EP rank is priced from, that SGLang gathers the whole vocabulary's
// logits, and, under another engine, that its Qwen3.5 GDN and MoE are
// SGLang's kernels with none of its own measured; the default sampler is
// the engine's own.
func TestCostNotesNameSources(t *testing.T) {
	for _, tc := range []struct {
		engine, gpu, precision, topo, backend string
		want                                  []string
		method                                string
	}{
		{"sglang", "h200", "fp8", "agg:tp8ep8", "triton", []string{
			"one EP8 rank: 64 of 512 experts at the full inter 1024",
			"busiest of 8 ranks, derived from per-rank measurements (kernels/collect/merge_ep.py)",
			"(kernels/data/h200/moe_triton_ep8.csv)",
			"SGLang all-gathers every row's BF16 logits over the whole vocabulary",
			"logits_processor.py", "_copy_logits_to_buffer"}, acceptance.SGLangMatchExpected},
		{"trtllm", "b200", "fp4", "agg:dep8", "cutlass", []string{
			"gdn: no trtllm kernel for this model was measured; priced with SGLang's",
			"moe: no trtllm MoE kernel for this model was measured"}, acceptance.TRTLLM},
	} {
		q := Query{Model: "Qwen3.5-397B-A17B", Precision: tc.precision, GPU: tc.gpu, Topology: tc.topo, Workload: "fixed",
			ISL: 1024, OSL: 1024, Spec: "mtp", AL: 3.39, Engine: tc.engine, MoEBackend: tc.backend, SchedOverhead: -1, SpecOverhead: -1}
		r, err := q.Resolve(testCurves, testCatalog)
		if err != nil {
			t.Fatal(err)
		}
		topo, err := ParseTopology(tc.topo)
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(r.CostNotes(topo), "\n")
		for _, w := range tc.want {
			if !strings.Contains(notes, w) {
				t.Errorf("%s %s: notes lack %q:\n%s", tc.engine, tc.topo, w, notes)
			}
		}
		if r.Target.Method != tc.method {
			t.Errorf("%s: default sampler %q, want %q", tc.engine, r.Target.Method, tc.method)
		}
	}
}
