package simulate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/specsim/specsim/audit/model"
	"github.com/specsim/specsim/simulate/agentx"
)

// smallSweep is a sweep small enough for a unit test (4 x B200, 1k/1k).
func smallSweep(t *testing.T, shard Shard, workers int, sla SLA) (*Resolved, SweepSpace, *SweepResult) {
	t.Helper()
	r := resolved(t, Query{GPU: "b200", ISL: 1024, OSL: 1024, Requests: 48})
	space := SweepSpace{GPUs: 4, Concs: []int{2, 16, 128}, StepsLo: 0, StepsHi: 2, Shard: shard, Workers: workers, SLA: sla, Top: 2}
	res, err := Sweep(r, space, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r, space, res
}

func TestSweepFrontiersAreEventSimulated(t *testing.T) {
	sla := SLA{MaxTTFTms: 150}
	_, _, res := smallSweep(t, Shard{}, 2, sla)
	if res.Refined == 0 || len(res.Frontier) == 0 {
		t.Fatalf("refined %d, frontier %d points", res.Refined, len(res.Frontier))
	}
	if n := res.Unchecked(); n != 0 {
		t.Errorf("%d frontier points are mean-field", n)
	}
	for _, f := range [][]Point{res.Frontier, res.FrontierE2EL, res.FrontierNormalized, res.FrontierMTP, res.FrontierNone, res.Top} {
		for _, p := range f {
			if p.TTFTp90ms > sla.MaxTTFTms {
				t.Errorf("%s conc %d: p90 TTFT %.0f ms above the 150 ms SLA", p.Topology, p.Conc, p.TTFTp90ms)
			}
		}
	}
	// The SLA's count is the points above the limit, counted independently.
	above := 0
	for _, p := range res.Points {
		if p.TTFTp90ms > sla.MaxTTFTms {
			above++
		}
	}
	if len(res.Removed) != 1 || res.Removed[0].Removed != above || above == 0 {
		t.Errorf("removed %+v, want one limit removing %d points (and more than none)", res.Removed, above)
	}
	// Each removed point says so in its notes; no other point does.
	for _, p := range res.Points {
		noted := slices.Contains(p.Notes, fmt.Sprintf("outside SLA: --max-ttft-ms %g", sla.MaxTTFTms))
		if out := p.TTFTp90ms > sla.MaxTTFTms; noted != out {
			t.Errorf("%s conc %d k %d: p90 TTFT %.0f ms, noted outside SLA %v", p.Topology, p.Conc, p.Steps, p.TTFTp90ms, noted)
		}
	}
	// Stable: no unrefined point beats a frontier point's throughput at
	// its interactivity (the frontier would have to be refined further).
	for _, p := range res.Points {
		if p.Sim == "event" || p.TTFTp90ms > sla.MaxTTFTms {
			continue
		}
		for _, f := range res.Frontier {
			if p.Interactivity >= f.Interactivity && p.TputPerGPU > f.TputPerGPU {
				t.Errorf("mean-field %s conc %d k %d dominates frontier %s conc %d k %d", p.Topology, p.Conc, p.Steps, f.Topology, f.Conc, f.Steps)
			}
		}
	}
}

func TestShardsMergeToTheUnshardedFrontier(t *testing.T) {
	// The unsharded sweep runs on 1 worker, the shards on 2: neither
	// sharding nor workers may change the frontiers.
	r, _, whole := smallSweep(t, Shard{}, 1, SLA{})
	const n = 3
	var names []string
	var outs []*SweepOutput
	for i := range n {
		_, sp, part := smallSweep(t, Shard{Index: i, Count: n}, 2, SLA{})
		in := NewSweepInputs("test", r, sp)
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(SweepOutput{Inputs: in, SweepResult: part}); err != nil {
			t.Fatal(err)
		}
		o, err := ReadSweepOutput("shard", &buf)
		if err != nil {
			t.Fatal(err)
		}
		names, outs = append(names, "shard"), append(outs, o)
	}
	// Merge in a shuffled order.
	outs[0], outs[2] = outs[2], outs[0]
	resolves := 0
	m, err := Merge(names, outs, func(SweepInputs) (*Resolved, error) { resolves++; return r, nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The merge runs the unsharded sweep's refinement rounds over the
	// union: the whole result is the unsharded one, points (refined or
	// not), frontiers, refinement counts and all.
	got, _ := json.Marshal(m.SweepResult)
	wantF, _ := json.Marshal(whole)
	if !bytes.Equal(got, wantF) {
		t.Errorf("merged result differs from the unsharded one (%d resolves):\n%s\n%s", resolves, got, wantF)
	}
	// A candidate the rounds need that no shard simulated is simulated on
	// the rebuilt query: take one shard's simulation away.
	reverted := false
	for _, o := range outs {
		for i := range o.Points {
			if p := &o.Points[i]; !reverted && p.Estimate != nil {
				p.Result, p.Estimate, reverted = *p.Estimate, nil, true
			}
		}
	}
	if !reverted {
		t.Fatal("no shard refined a point")
	}
	if _, err := Merge(names, outs, nil, nil); err == nil || !strings.Contains(err.Error(), "no shard simulated it") {
		t.Errorf("merge without a query for a missing simulation: %v", err)
	}
	resolves = 0
	m2, err := Merge(names, outs, func(SweepInputs) (*Resolved, error) { resolves++; return r, nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(m2.SweepResult); !bytes.Equal(got, wantF) || resolves != 1 {
		t.Errorf("merge that simulates a point itself (%d resolves) differs from the unsharded result", resolves)
	}
	if m.Evaluated != whole.Evaluated || len(m.Points) != len(whole.Points) {
		t.Errorf("merged %d evaluated / %d points, unsharded %d / %d", m.Evaluated, len(m.Points), whole.Evaluated, len(whole.Points))
	}
	// A missing shard and a foreign shard are refused.
	if _, err := Merge(names[:2], outs[:2], nil, nil); err == nil || !strings.Contains(err.Error(), "missing shard") {
		t.Errorf("merge of 2 of 3 shards: %v", err)
	}
	outs[1].Points[0].TputPerGPU = -5
	if _, err := Merge([]string{"a.json", "b.json", "c.json"}, outs, nil, nil); err == nil || !strings.Contains(err.Error(), "b.json: point") || !strings.Contains(err.Error(), "tput_per_gpu -5") {
		t.Errorf("merge of a negative figure: %v", err)
	}
	outs[1].Points[0].TputPerGPU = 5
	outs[1].Inputs.Seed++
	if _, err := Merge(names, outs, nil, nil); err == nil || !strings.Contains(err.Error(), "inputs.seed is 2 there, 1 in") {
		t.Errorf("merge of a foreign shard: %v", err)
	}
}

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		ok   bool
	}{
		{"0/4", Shard{0, 4}, true}, {"3/4", Shard{3, 4}, true}, {"0/1", Shard{0, 1}, true},
		{"4/4", Shard{}, false}, {"-1/4", Shard{}, false}, {"1/0", Shard{}, false}, {"1", Shard{}, false},
		{"a/b", Shard{}, false}, {"1/4097", Shard{}, false}, {" 1/4", Shard{}, false}, {"1/4x", Shard{}, false},
	} {
		got, err := ParseShard(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestSLAFilter(t *testing.T) {
	pts := []Point{
		{Result: Result{TTFTp90ms: 6000, TPOTp90ms: 10, Interactivity: 100}}, // TTFT
		{Result: Result{TTFTp90ms: 6000, TPOTp90ms: 90, Interactivity: 100}}, // TTFT first
		{Result: Result{TTFTp90ms: 100, TPOTp90ms: 90, Interactivity: 100}},  // TPOT
		{Result: Result{TTFTp90ms: 100, TPOTp90ms: 10, Interactivity: 5}},    // interactivity
		{Result: Result{TTFTp90ms: 5000, TPOTp90ms: 50, Interactivity: 20}},  // kept: limits are inclusive
	}
	kept, rm := SLA{MaxTTFTms: 5000, MaxTPOTms: 50, MinInteractivity: 20}.Filter(pts)
	if len(kept) != 1 || kept[0].TTFTp90ms != 5000 {
		t.Errorf("kept %+v", kept)
	}
	want := []SLARemoval{{"max-ttft-ms", 5000, 2, 2}, {"max-tpot-ms", 50, 1, 1}, {"min-interactivity", 20, 1, 1}} // none simulated: all on estimates
	if len(rm) != len(want) {
		t.Fatalf("removed %+v", rm)
	}
	for i := range want {
		if rm[i] != want[i] {
			t.Errorf("removed[%d] = %+v, want %+v", i, rm[i], want[i])
		}
	}
	if err := (SLA{MaxTTFTms: -1}).Validate(); err == nil {
		t.Error("negative limit accepted")
	}
}

// The echoed inputs have the documented snake_case keys, no sentinel for
// a default overhead (null), no agentic block on a fixed workload, and a
// trace replay's corpus by name and hash rather than its contents; the
// query they echo is the query given.
func TestSweepInputsEcho(t *testing.T) {
	q := Query{Model: "Qwen3.5-397B-A17B", Precision: "fp4", GPU: "b200", Workload: "fixed", ISL: 1024, OSL: 1024, RangeRatio: 0.8,
		Spec: "mtp", MoESkew: 1.2, KVDType: "fp8", MambaSSMDType: "bfloat16", SpecMoEBackend: "triton"}
	q.Server.HiCacheGiB = 64
	r := resolved(t, q)
	r.Q.SpecOverhead = 0.5 // resolved sets both to the default
	in := NewSweepInputs("test", r, SweepSpace{GPUs: 8})
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	qm := m["query"].(map[string]any)
	for _, k := range []string{"moe_skew", "kv_dtype", "mamba_ssm_dtype", "speculative_moe_runner_backend", "sched_overhead_ms", "spec_overhead_ms", "server"} {
		if _, ok := qm[k]; !ok {
			t.Errorf("query has no %q: %s", k, b)
		}
	}
	if qm["sched_overhead_ms"] != nil || qm["spec_overhead_ms"] != 0.5 || qm["server"].(map[string]any)["hicache_gib"] != 64.0 {
		t.Errorf("overheads %v %v, server %v", qm["sched_overhead_ms"], qm["spec_overhead_ms"], qm["server"])
	}
	wp := m["workload_params"].(map[string]any)
	if _, ok := wp["agentx"]; ok || wp["isl"] != 1024.0 || wp["range_ratio"] != 0.8 {
		t.Errorf("fixed workload_params %v", wp)
	}
	var back SweepInputs
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Query.ToQuery(); got.SchedOverhead != -1 || got.SpecOverhead != 0.5 || got.MoESkew != 1.2 || got.Server.HiCacheGiB != 64 || got.SpecMoEBackend != "triton" {
		t.Errorf("query read back %+v", got)
	}

	// The embedded corpus: named and hashed; its hash is the embedded
	// file's (it is the compact encoding of its own traces).
	q = Query{Model: "Qwen3.5-397B-A17B", Precision: "fp4", GPU: "b200", Workload: "agentx", Spec: "mtp"}
	in = NewSweepInputs("test", resolved(t, q), SweepSpace{GPUs: 8})
	b, _ = json.Marshal(in)
	tr := in.WorkloadParams.Trace
	raw, err := os.ReadFile("agentx/data/kv-cache-tester.agx.gz")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	if tr == nil || tr.Source != agentx.DefaultCorpusName || tr.SHA256 != hex.EncodeToString(sum[:]) || tr.Traces == 0 || len(b) > 4096 {
		t.Errorf("trace echo %+v (%d bytes of inputs), want the corpus named with sha256 %x", tr, len(b), sum)
	}
}

func TestSweepScope(t *testing.T) {
	for _, sc := range []Scope{ScopeAgg, ScopeDisagg} {
		ts, err := SweepTopologies(SweepSpace{GPUs: 8, Scope: sc}, "sglang", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tp := range ts {
			if tp.Disagg != (sc == ScopeDisagg) {
				t.Errorf("scope %s kept %s", sc, tp)
			}
		}
	}
	if _, err := ParseScope("both"); err == nil {
		t.Error("--scope both accepted")
	}
}

// TestSweepRefineBudget: a budget smaller than the settled sweep needs
// stops refinement at exactly that many simulations, says so, and still
// prints only event-simulated points; an unbounded run refines more and
// does not report a stop.
func TestSweepRefineBudget(t *testing.T) {
	r := resolved(t, Query{GPU: "b200", ISL: 1024, OSL: 1024, Requests: 48})
	space := SweepSpace{GPUs: 4, Concs: []int{2, 16, 128}, StepsLo: 0, StepsHi: 2, Workers: 2, MaxRefine: -1}
	full, err := Sweep(r, space, nil)
	if err != nil {
		t.Fatal(err)
	}
	if full.RefineStopped || full.Refined < 4 {
		t.Fatalf("unbounded sweep: stopped %v after %d refinements; want a settled sweep of at least 4", full.RefineStopped, full.Refined)
	}
	space.MaxRefine = 3
	res, err := Sweep(r, space, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.RefineStopped || res.Refined != 3 {
		t.Errorf("budget 3: stopped %v after %d refinements, want stopped after exactly 3", res.RefineStopped, res.Refined)
	}
	if n := res.Unchecked(); n != 0 || len(res.Frontier) == 0 {
		t.Errorf("budget 3: %d mean-field frontier points, %d frontier points; want none and some", n, len(res.Frontier))
	}
}

// TestSweepWorkersByteIdentical: the sweep's JSON does not depend on how
// many goroutines price and refine it.
func TestSweepWorkersByteIdentical(t *testing.T) {
	_, _, serial := smallSweep(t, Shard{}, 1, SLA{})
	_, _, par := smallSweep(t, Shard{}, 3, SLA{})
	a, err := json.Marshal(serial)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(par)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("sweep JSON differs between 1 and 3 workers (%d vs %d bytes)", len(a), len(b))
	}
	if serial.Refined == 0 {
		t.Error("nothing refined: the test compares no event simulation")
	}
}

// TestSweepPricingWorkersByteIdentical: an AgentX sweep's estimates, whose
// prefill moments the workers share, do not depend on how many goroutines
// price them.
func TestSweepPricingWorkersByteIdentical(t *testing.T) {
	q := Query{GPU: "gb300", Workload: "agentx", Model: "Qwen3.5-397B-A17B", Precision: "fp4", SchedOverhead: -1, SpecOverhead: -1, Seed: 1}
	var out [][]byte
	for _, workers := range []int{1, 3} {
		space := SweepSpace{GPUs: 8, Concs: []int{4, 64, 512}, StepsLo: 6, StepsHi: 6, Workers: workers, MaxRefine: 1}
		res, err := Sweep(resolved(t, q), space, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res.Points)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Errorf("sweep points differ between 1 and 3 workers (%d vs %d bytes)", len(out[0]), len(out[1]))
	}
}

// TestEngineTopologySpace: each engine's enumeration holds the layouts its
// source admits (by hand from layoutsOf's citations) and no other.
func TestEngineTopologySpace(t *testing.T) {
	has := func(ts []Topology, s string) bool {
		for _, tp := range ts {
			if tp.String() == s {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		engine  string
		present []string
		absent  []string
	}{
		{"sglang", []string{"agg:tp8", "agg:tp8ep8", "agg:dep8", "agg:tp2pp4", "disagg:1xtp2pp2+1xtp4"}, []string{"agg:tp8ep4", "disagg:1xtp4+1xtp2pp2"}},
		{"vllm", []string{"agg:tp8ep8", "agg:dep8"}, []string{"agg:tp8ep4", "agg:tp8ep2"}},
		{"trtllm", []string{"agg:tp8ep4", "agg:tp8ep2", "agg:tp8ep8", "agg:dep8"}, []string{"disagg:1xtp4+1xtp2pp2"}},
	} {
		ts := EnumerateTopologies(c.engine, 8, nil, 0)
		for _, s := range c.present {
			if !has(ts, s) {
				t.Errorf("%s: %s not enumerated", c.engine, s)
			}
		}
		for _, s := range c.absent {
			if has(ts, s) {
				t.Errorf("%s: %s enumerated", c.engine, s)
			}
		}
	}
	// Expert parallelism on a model without experts is plain TP.
	dense := &Model{Name: "dense", Architecture: model.Architecture{Layers: 60, Heads: 32}}
	if ts := EnumerateTopologies("sglang", 8, dense, 0); has(ts, "agg:tp4ep4") || !has(ts, "agg:tp4") {
		t.Error("dense model: tp4ep4 enumerated or tp4 missing")
	}
	// Speculation with PP: SGLang only on disaggregated prefill workers.
	l := layoutsOf("sglang")
	for s, want := range map[string]bool{"agg:tp2pp2": false, "disagg:1xtp2pp2+1xtp2": true, "disagg:1xtp2+1xtp2pp2": false} {
		tp, err := ParseTopology(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.runs(tp, 3); got != want {
			t.Errorf("sglang runs %s at k 3 = %v, want %v", s, got, want)
		}
		if !strings.Contains(s, "+1xtp2pp2") && !l.runs(tp, 0) {
			t.Errorf("sglang does not run %s at k 0", s)
		}
	}
}

// TestMinPoolGPUs: --min-pool-gpus leaves out every deployment with a pool
// smaller than the minimum, keeps the rest in enumeration order, and
// refuses a minimum above --gpus.
func TestMinPoolGPUs(t *testing.T) {
	all := EnumerateTopologies("sglang", 16, nil, 0)
	min4 := EnumerateTopologies("sglang", 16, nil, 4)
	var want []Topology
	for _, tp := range all {
		ok := tp.GPUs() >= 4
		if tp.Disagg {
			ok = tp.PrefillWorkers*tp.Prefill.GPUs() >= 4 && tp.DecodeWorkers*tp.Decode.GPUs() >= 4
		}
		if ok {
			want = append(want, tp)
		}
	}
	if len(min4) != len(want) || len(min4) == len(all) {
		t.Fatalf("min pool 4: %d topologies, want %d (of %d)", len(min4), len(want), len(all))
	}
	for i := range want {
		if min4[i] != want[i] {
			t.Fatalf("min pool 4: [%d] = %s, want %s", i, min4[i], want[i])
		}
	}
	if _, err := SweepTopologies(SweepSpace{GPUs: 8, MinPoolGPUs: 9}, "sglang", nil); err == nil {
		t.Error("--min-pool-gpus 9 with --gpus 8 accepted")
	}
	// An explicit list is held to the minimum too: refused, not dropped.
	// disagg:1xtp1+1xtp4's prefill pool is 1 GPU; 2xtp2+1xtp4's are 4 and 4.
	for _, c := range []struct {
		topos string
		min   int
		want  string
	}{
		{"agg:tp2,agg:tp4", 4, "--topologies agg:tp2 has a pool of 2 GPUs, fewer than --min-pool-gpus 4"},
		{"agg:tp4", 4, ""},
		{"disagg:1xtp1+1xtp4", 2, "--topologies disagg:1xtp1+1xtp4 has a pool of 1 GPUs, fewer than --min-pool-gpus 2"},
		{"disagg:2xtp2+1xtp4", 4, ""},
	} {
		var ts []Topology
		for _, s := range strings.Split(c.topos, ",") {
			tp, err := ParseTopology(s)
			if err != nil {
				t.Fatal(err)
			}
			ts = append(ts, tp)
		}
		_, err := SweepTopologies(SweepSpace{GPUs: 8, MinPoolGPUs: c.min, Topologies: ts}, "sglang", nil)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)) {
			t.Errorf("%s min %d: %v, want %q", c.topos, c.min, err, c.want)
		}
	}
}

// TestNodeSpan: an instance is multi-node when it holds more GPUs than one
// host (GB300 NVL72 trays of 4, HGX of 8), whatever the deployment's total.
func TestNodeSpan(t *testing.T) {
	for _, c := range []struct {
		topo string
		node int
		want int
	}{
		{"agg:tp4", 4, 1}, {"agg:tp8", 4, 2}, {"agg:tp8", 8, 1}, {"agg:dep16", 8, 2},
		{"disagg:8xtp4+8xtp4", 4, 1}, {"disagg:1xtp4+1xdep16", 4, 4}, {"disagg:1xtp2pp4+1xtp4", 4, 2},
	} {
		tp, err := ParseTopology(c.topo)
		if err != nil {
			t.Fatal(err)
		}
		if got := nodeSpan(tp, c.node); got != c.want {
			t.Errorf("nodeSpan(%s, %d) = %d, want %d", c.topo, c.node, got, c.want)
		}
	}
}

// TestSweepNotRun: with speculation, SGLang's aggregated PP layouts are
// counted as not run (tp1pp2, tp1pp4, tp2pp2 at 4 GPUs, one conc each),
// not priced.
func TestSweepNotRun(t *testing.T) {
	r := resolved(t, Query{GPU: "b200", ISL: 1024, OSL: 1024, Requests: 48})
	res, err := Sweep(r, SweepSpace{GPUs: 4, Concs: []int{2}, StepsLo: 1, StepsHi: 1, Scope: ScopeAgg, Workers: 2, MaxRefine: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.NotRun != 3 || !strings.Contains(res.NotRunWhy, "check_server_args") {
		t.Errorf("not run %d (%q), want 3 naming check_server_args", res.NotRun, res.NotRunWhy)
	}
	for _, p := range res.Points {
		if strings.Contains(p.Topology, "pp") {
			t.Errorf("%s priced at k %d", p.Topology, p.Steps)
		}
	}
}

// Notes flags a point whose roles admit fewer requests than the sessions
// they serve (by hand: disagg 1 prefill + 2 decode workers at conc 512
// serve 256 sessions per decode worker), for AgentX only when the wait
// shows in the latency, and an unsteady AgentX window.
func TestPointNotes(t *testing.T) {
	pt := func(topo string, conc int, caps []RunningCap, ttftMS, e2elS float64, ax *AgentXReport, multi bool) Point {
		var p Point
		p.Topology, p.Conc, p.Limits, p.TTFTp90ms, p.E2EL.P90, p.AgentX, p.MultiNode = topo, conc, caps, ttftMS, e2elS, ax, multi
		return p
	}
	dec := func(n int) []RunningCap {
		return []RunningCap{{Role: "prefill", Running: 2000}, {Role: "decode", Running: n}}
	}
	for _, tc := range []struct {
		name    string
		p       Point
		agentic bool
		want    string
	}{
		{"decode admits all 256", pt("disagg:1xtp4+2xtp4", 512, dec(256), 100, 10, nil, false), false, ""},
		{"decode admits 255 of 256", pt("disagg:1xtp4+2xtp4", 512, dec(255), 100, 10, nil, false), false, "queued: decode runs 255 of 256"},
		{"agg multi-node", pt("agg:tp8", 64, []RunningCap{{Role: "agg", Running: 32}}, 100, 10, nil, true), false, "multi-node; queued: agg runs 32 of 64"},
		{"agentx wait small", pt("agg:tp8", 64, []RunningCap{{Role: "agg", Running: 32}}, 1000, 10, &AgentXReport{Steady: true}, false), true, ""},
		{"agentx wait dominates", pt("disagg:1xtp2+1xtp4", 1024, dec(216), 2519291, 2521, &AgentXReport{Steady: true}, false), true, "queued: decode runs 216 of 1024"},
		{"agentx unsteady", pt("agg:tp8", 8, nil, 100, 10, &AgentXReport{}, false), true, "unsteady"},
	} {
		if got := strings.Join(tc.p.NotesFor(tc.agentic), "; "); got != tc.want {
			t.Errorf("%s: notes %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A sweep of an AgentX replay simulates a 900 s window (the shortest
// --benchmark-duration of the inferencex-agentx-mvp scenario), whatever
// longer duration the query asks; its echo says so, and predict over that
// window gives the sweep's point exactly. A shorter asked window is kept.
func TestSweepAgentXWindowEchoed(t *testing.T) {
	q := Query{Model: "Qwen3.5-397B-A17B", Precision: "fp4", GPU: "b200", Workload: "agentx", Spec: "mtp"}
	for _, c := range []struct {
		agentx              string
		window, asked, echo float64
	}{{"", 900, 3600, 900}, {"duration=1800", 900, 1800, 900}, {"duration=600", 600, 600, 600}} {
		q.AgentX = c.agentx
		r := resolved(t, q)
		w, a := SweepReplayWindow(r)
		in := NewSweepInputs("test", r, SweepSpace{GPUs: 8})
		if w != c.window || a != c.asked || in.WorkloadParams.Trace.Replay.DurationS != c.echo {
			t.Errorf("--agentx %q: window %g asked %g echo %g, want %g %g %g", c.agentx, w, a, in.WorkloadParams.Trace.Replay.DurationS, c.window, c.asked, c.echo)
		}
	}
	q.AgentX = ""
	topo, _ := ParseTopology("agg:tp8")
	res, err := Sweep(resolved(t, q), SweepSpace{GPUs: 8, Topologies: []Topology{topo}, Concs: []int{4}, StepsLo: 3, StepsHi: 3, Workers: 1}, nil)
	if err != nil || len(res.Points) != 1 || res.Points[0].Sim != "event" {
		t.Fatalf("sweep %v %+v", err, res)
	}
	q.AgentX = "duration=900"
	want, err := Predict(resolved(t, q), topo, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Points[0]; got.TputPerGPU != want.TputPerGPU || got.TTFTp90ms != want.TTFTp90ms {
		t.Errorf("sweep point %g tok/s/GPU TTFT p90 %g ms; predict --agentx duration=900: %g, %g", got.TputPerGPU, got.TTFTp90ms, want.TputPerGPU, want.TTFTp90ms)
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// merge's reader checks the inputs, which a sweep writes first, before
// any point: a large JSON without them is refused after its first bytes,
// and a sweep file is held to the configurations its inputs enumerate
// (1 topology x 1 k x 1 conc: 1 point; an 8-GPU SGLang enumeration holds
// no agg:tp999).
func TestReadSweepOutputBounded(t *testing.T) {
	big := `{"points":[` + strings.Repeat(`{"index":0,"conc":1},`, 500000) + `{"index":0}]}`
	cr := &countingReader{r: strings.NewReader(big)}
	if _, err := ReadSweepOutput("big.json", cr); err == nil || !strings.Contains(err.Error(), "big.json: no inputs section") {
		t.Errorf("no-inputs file: %v", err)
	}
	if cr.n > 64<<10 {
		t.Errorf("read %d of %d bytes before refusing a file without inputs", cr.n, len(big))
	}
	r := resolved(t, Query{GPU: "b200", Spec: "mtp"})
	topo, _ := ParseTopology("agg:tp8")
	file := func(space SweepSpace, pts ...Point) string {
		b, err := json.Marshal(SweepOutput{Inputs: NewSweepInputs("test", r, space), SweepResult: &SweepResult{Points: pts, Skipped: []string{}}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	pt := func(topo string, conc, k int) Point {
		p := Point{}
		p.Topology, p.Conc, p.Steps, p.Sim = topo, conc, k, "estimate"
		return p
	}
	one := SweepSpace{GPUs: 8, Topologies: []Topology{topo}, Concs: []int{4}, StepsLo: 3, StepsHi: 3}
	enum := SweepSpace{GPUs: 8, Concs: []int{4}, StepsLo: 3, StepsHi: 3}
	for _, c := range []struct {
		name, json, want string
	}{
		{"ok", file(one, pt("agg:tp8", 4, 3)), ""},
		{"enumerated ok", file(enum, pt("disagg:1xtp4+1xdep4", 4, 3)), ""},
		{"over bound", file(one, pt("agg:tp8", 4, 3), pt("agg:tp8", 4, 3)), "points: more than the 1 points the inputs enumerate"},
		{"bogus", file(one, pt("bogus", 4, 3)), `points: point 0: topology "bogus"`},
		{"not listed", file(one, pt("agg:tp4", 4, 3)), "topology agg:tp4 is not in inputs.topologies"},
		{"too large", file(enum, pt("agg:tp999", 4, 3)), "topology agg:tp999 is not a sglang deployment of at most 8 GPUs"},
		{"conc", file(one, pt("agg:tp8", 5, 3)), "conc 5 is not in inputs.concs"},
		{"k", file(one, pt("agg:tp8", 4, 2)), "k 2 is outside inputs.steps [3 3]"},
		{"inputs not first", `{"points":[],"inputs":{}}`, "no inputs section first"},
	} {
		_, err := ReadSweepOutput("f.json", strings.NewReader(c.json))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), "f.json: "+c.want) && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// A merge names a file given twice, or a configuration held twice by one
// file, as such.
func TestMergeDuplicateMessages(t *testing.T) {
	o := &SweepOutput{Inputs: SweepInputs{SpecsimVersion: "x", Model: "m"}, SweepResult: &SweepResult{}}
	if _, err := Merge([]string{"a.json", "a.json"}, []*SweepOutput{o, o}, nil, nil); err == nil || err.Error() != "a.json is given twice" {
		t.Errorf("file twice: %v", err)
	}
	p := Point{}
	p.Topology, p.Conc, p.Steps = "agg:tp8", 4, 3
	o.Points = []Point{p, p}
	if _, err := Merge([]string{"a.json"}, []*SweepOutput{o}, nil, nil); err == nil || err.Error() != "a.json holds configuration 0 (agg:tp8 conc 4 k 3) twice" {
		t.Errorf("point twice: %v", err)
	}
}

// Sig3 keeps three significant figures, worked by hand.
func TestSig3(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{0, "0"}, {1, "1.00"}, {0.012345, "0.0123"}, {12.345, "12.3"}, {123.45, "123"},
		{1234.5, "1230"}, {98765, "98800"}, {-4.567, "-4.57"},
	} {
		if got := Sig3(tc.x); got != tc.want {
			t.Errorf("Sig3(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
}

// frontierRef is Frontier as InferenceX's rule reads, written the plain
// way (a stable sort of copies): the second method frontierOf is checked
// against.
func frontierRef(points []Point, x func(*Point) float64, higherX bool) []Point {
	var cs []Point
	for i := range points {
		xv, yv := x(&points[i]), points[i].TputPerGPU
		if xv > 0 && yv > 0 && !math.IsInf(xv, 0) && !math.IsInf(yv, 0) {
			cs = append(cs, points[i])
		}
	}
	key := func(p *Point) float64 {
		if higherX {
			return -x(p)
		}
		return x(p)
	}
	sort.SliceStable(cs, func(a, b int) bool {
		if key(&cs[a]) != key(&cs[b]) {
			return key(&cs[a]) < key(&cs[b])
		}
		return cs[a].TputPerGPU > cs[b].TputPerGPU
	})
	var out []Point
	maxY := math.Inf(-1)
	for _, c := range cs {
		plateau := len(out) > 0 && c.TputPerGPU == maxY && key(&c) > key(&out[len(out)-1])
		if c.TputPerGPU > maxY || plateau {
			if len(out) > 0 && key(&c) == key(&out[len(out)-1]) {
				out[len(out)-1] = c
			} else {
				out = append(out, c)
			}
			maxY = c.TputPerGPU
		}
	}
	return out
}

// TestFrontierMatchesReference: on points drawn from a coarse grid (ties
// in x, in y and in both, zeros and infinities), Frontier, TopPoints and
// a sweep's finish give the points the plain stable-sort method gives,
// and nextIfLost the candidates finish gives once the points it leaves
// out are dropped.
func TestFrontierMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + rng.IntN(60)
		pts := make([]Point, n)
		for i := range pts {
			v := func() float64 {
				switch rng.IntN(12) {
				case 0:
					return 0
				case 1:
					return math.Inf(1)
				}
				return float64(1 + rng.IntN(8))
			}
			sim := ""
			if rng.IntN(3) == 0 {
				sim = "event"
			}
			pts[i] = Point{Index: 3 * i, Result: Result{Topology: "agg:tp1", Conc: i + 1, Steps: rng.IntN(2), Sim: sim,
				Interactivity: v(), TputPerGPU: v(), NormalizedInteractivity: v(), E2EL: Percentiles{P90: v()}}}
		}
		idx := func(ps []Point) []int {
			out := []int{}
			for _, p := range ps {
				out = append(out, p.Index)
			}
			return out
		}
		for _, c := range []struct {
			x       func(*Point) float64
			higherX bool
		}{{ByInteractivity, true}, {ByE2ELp90, false}, {ByNormalizedInteractivity, true}} {
			if got, want := idx(Frontier(pts, c.x, c.higherX)), idx(frontierRef(pts, c.x, c.higherX)); !slices.Equal(got, want) {
				t.Fatalf("trial %d: frontier %v, reference %v", trial, got, want)
			}
		}
		ref := slices.Clone(pts)
		sort.SliceStable(ref, func(a, b int) bool { return ref[a].TputPerGPU > ref[b].TputPerGPU })
		if got, want := idx(TopPoints(pts, 5)), idx(ref[:min(5, n)]); !slices.Equal(got, want) {
			t.Fatalf("trial %d: top %v, reference %v", trial, got, want)
		}
		res := &SweepResult{Points: pts}
		need := res.finish(SLA{}, 3, true, rankEstimate)
		var mtp []Point
		for _, p := range pts {
			if p.Steps > 0 {
				mtp = append(mtp, p)
			}
		}
		if !slices.Equal(idx(res.FrontierMTP), idx(frontierRef(mtp, ByInteractivity, true))) || !slices.Equal(idx(res.FrontierE2EL), idx(frontierRef(pts, ByE2ELp90, false))) {
			t.Fatalf("trial %d: finish's frontiers differ from the reference", trial)
		}
		// nextIfLost against finish over the points need leaves.
		rest := &SweepResult{}
		var pos []int
		for i, p := range pts {
			if !slices.Contains(need, i) {
				rest.Points = append(rest.Points, p)
				pos = append(pos, i)
			}
		}
		var want []int
		for _, i := range rest.finish(SLA{}, 3, true, rankEstimate) {
			want = append(want, pos[i])
		}
		if got := res.nextIfLost(SLA{}, 3, true, rankEstimate, need); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("trial %d: nextIfLost %v, finish without %v: %v", trial, got, need, want)
		}
	}
}

// TestEnumerateFitsModel: shapes the model cannot hold are not enumerated
// (32 heads: tp64 does not divide them; DP attention runs attention TP 1).
func TestEnumerateFitsModel(t *testing.T) {
	m := &Model{Name: "m", Architecture: model.Architecture{Layers: 60, Heads: 32, Experts: 64, MoEInter: 1024}}
	ts := EnumerateTopologies("sglang", 64, m, 0)
	has := func(s string) bool {
		for _, tp := range ts {
			if tp.String() == s {
				return true
			}
		}
		return false
	}
	for s, want := range map[string]bool{"agg:tp64": false, "agg:tp64ep64": false, "agg:tp32": true, "agg:dep64": true, "disagg:1xtp32+1xtp32": true} {
		if has(s) != want {
			t.Errorf("%s enumerated %v, want %v", s, has(s), want)
		}
	}
}

// TestRunOn: every job of the order runs once, on one of the copies,
// whatever the number of copies and jobs.
func TestRunOn(t *testing.T) {
	for _, c := range []struct{ copies, jobs int }{{1, 0}, {1, 5}, {2, 1}, {2, 100}, {3, 7}, {8, 3}} {
		rws := make([]*Resolved, c.copies)
		for i := range rws {
			rws[i] = new(Resolved)
		}
		order := make([]int, c.jobs)
		for i := range order {
			order[i] = c.jobs - 1 - i
		}
		var mu sync.Mutex
		ran := make([]int, c.jobs)
		runOn(rws, order, func(rw *Resolved, j int) {
			if !slices.Contains(rws, rw) {
				t.Errorf("job %d ran on a copy not given", j)
			}
			mu.Lock()
			ran[j]++
			mu.Unlock()
		})
		for j, n := range ran {
			if n != 1 {
				t.Errorf("%d copies, %d jobs: job %d ran %d times", c.copies, c.jobs, j, n)
			}
		}
	}
}

// TestInterleave: the runs taken in turn, by hand, and every job once.
func TestInterleave(t *testing.T) {
	for _, c := range []struct {
		n, k int
		want []int
	}{
		{0, 2, []int{}},
		{1, 2, []int{0}},
		{5, 1, []int{0, 1, 2, 3, 4}},
		{5, 2, []int{0, 3, 1, 4, 2}},
		{6, 2, []int{0, 3, 1, 4, 2, 5}},
		{7, 3, []int{0, 3, 6, 1, 4, 2, 5}},
		{3, 8, []int{0, 1, 2}},
	} {
		if got := interleave(c.n, c.k); !slices.Equal(got, c.want) {
			t.Errorf("interleave(%d, %d) = %v, want %v", c.n, c.k, got, c.want)
		}
	}
}
