package simulate

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// frontierSweep is one deployment InferenceX swept for a frontier row.
// The fields after Concs, where set, replace the row's for this deployment:
// a published frontier can pool the runs of several engines (InferenceX's
// compare pages pool every framework of one GPU and precision).
type frontierSweep struct {
	Topology       string  `yaml:"topology"`
	Concs          []int   `yaml:"concs"`
	Engine         string  `yaml:"engine"`
	MoEBackend     string  `yaml:"moe_runner_backend"`
	CUDAGraphMaxBS int     `yaml:"cuda_graph_max_bs"` // per attention rank; 0: the concurrency, as SGLang's recipes set it
	Chunk          int     `yaml:"chunk"`
	MemFraction    float64 `yaml:"mem_fraction"`
}

// frontierCache keeps each swept frontier (one per model, GPU, precision
// and arm) for the rows that read it.
var frontierCache = map[string][]Point{}

func frontierKey(r publishedRow) string {
	return fmt.Sprint(r.Model, r.Precision, r.GPU, r.Steps, r.AL, r.Frontier)
}

// sweepFrontier runs every (deployment, concurrency) of r the way the
// benchmark ran them and returns InferenceX's interactivity frontier. Each
// point measures 10 x concurrency requests, as InferenceX's scripts ask of
// its client (benchmarks/single_node/fixed_seq_len/qwen3.5_*.sh,
// benchmark_lib.sh run_benchmark_serving --num-prompts CONC*10); with
// fewer, the point reads optimistic. The client's --num-warmups 2*CONC is
// not modelled: utils/bench_serving/benchmark_serving.py benchmark() sends
// those requests (copies of the first prompt) and awaits them all before
// the measured run, which then starts on an idle server with CONC requests
// at once and times all 10 x CONC to the last one's end. They only warm the
// server (graphs, caches), which the simulator does not model. The harness
// differs from that measured run: it discards its own first CONC requests
// and keeps CONC sessions busy until the last measured request ends
// (Plan.simulate), so neither the synchronized start nor the closing tail
// is in its window.
func sweepFrontier(r publishedRow) ([]Point, error) {
	key := frontierKey(r)
	if f, ok := frontierCache[key]; ok {
		return f, nil
	}
	var pts []Point
	for _, d := range r.Frontier {
		topo, err := ParseTopology(d.Topology)
		if err != nil {
			return nil, err
		}
		for _, c := range d.Concs {
			q := Query{Model: r.Model, Precision: r.Precision, GPU: r.GPU, Topology: d.Topology, GPUsPerNode: r.GPUsPerNode,
				Workload: "fixed", ISL: r.ISL, OSL: r.OSL, RangeRatio: positiveOr(r.RangeRatio, 1), Spec: "none",
				MaxRunning: r.MaxRunning, CUDAGraphMaxBS: c, Chunk: r.Chunk, MemFraction: r.MemFraction,
				KVDType: r.KVDType, Engine: r.Engine, SchedOverhead: -1, SpecOverhead: -1,
				Requests: 10 * c, Seed: 1, MambaSSMDType: r.MambaSSMDType,
				AllReduceFusion: r.AllReduceFusion, SpecV2: r.SpecV2, MoEBackend: r.MoEBackend}
			if r.MaxRunningIsConc {
				q.MaxRunning = c
			}
			if d.Engine != "" {
				q.Engine, q.MoEBackend, q.SpecV2 = d.Engine, d.MoEBackend, false
			}
			if d.CUDAGraphMaxBS > 0 {
				q.CUDAGraphMaxBS = d.CUDAGraphMaxBS
			}
			if d.Chunk > 0 {
				q.Chunk = d.Chunk
			}
			if d.MemFraction > 0 {
				q.MemFraction = d.MemFraction
			}
			if r.Steps > 0 {
				q.Spec, q.AL = "mtp", r.AL
			}
			res, err := q.Resolve(testCurves, testCatalog)
			if err != nil {
				return nil, err
			}
			out, err := Predict(res, topo, c, r.Steps)
			if err != nil {
				return nil, fmt.Errorf("%s conc %d: %w", d.Topology, c, err)
			}
			pts = append(pts, Point{Result: *out})
		}
	}
	f := Frontier(pts, ByInteractivity, true)
	if len(f) == 0 {
		return nil, fmt.Errorf("no frontier point")
	}
	frontierCache[key] = f
	return f, nil
}

// interactivityAt reads the interactivity a frontier reaches at throughput
// tput per GPU: linear in log throughput between the two frontier points
// around it, extrapolated from the end segment outside them (floored at a
// tenth of the end point's interactivity).
func interactivityAt(f []Point, tput float64) float64 {
	pts := append([]Point(nil), f...)
	sort.Slice(pts, func(a, b int) bool { return pts[a].TputPerGPU < pts[b].TputPerGPU })
	if len(pts) == 1 {
		return pts[0].Interactivity
	}
	i := sort.Search(len(pts), func(i int) bool { return pts[i].TputPerGPU >= tput })
	i = min(max(i, 1), len(pts)-1)
	a, b := pts[i-1], pts[i]
	u := (math.Log(tput) - math.Log(a.TputPerGPU)) / (math.Log(b.TputPerGPU) - math.Log(a.TputPerGPU))
	v := a.Interactivity + u*(b.Interactivity-a.Interactivity)
	floor := 0.1 * math.Min(a.Interactivity, b.Interactivity)
	return math.Max(v, floor)
}

func predictFrontierRow(r publishedRow) (float64, error) {
	if len(r.Frontier) == 0 || r.TputPerGPU <= 0 {
		return 0, fmt.Errorf("interactivity_at_tput needs frontier and tput_per_gpu")
	}
	f, err := sweepFrontier(r)
	if err != nil {
		return 0, err
	}
	return interactivityAt(f, r.TputPerGPU), nil
}

// modelFamily groups published rows for the per-family medians.
func modelFamily(model string) string {
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "deepseek"):
		return "deepseek"
	case strings.HasPrefix(m, "qwen3.5"):
		return "qwen3.5"
	}
	return m
}

// tputAt reads the throughput per GPU a frontier reaches at interactivity
// x (linear in log throughput against interactivity, as interactivityAt),
// extrapolated from the end segment.
func tputAt(f []Point, x float64) float64 {
	pts := append([]Point(nil), f...)
	sort.Slice(pts, func(a, b int) bool { return pts[a].Interactivity < pts[b].Interactivity })
	if len(pts) == 1 {
		return pts[0].TputPerGPU
	}
	i := sort.Search(len(pts), func(i int) bool { return pts[i].Interactivity >= x })
	i = min(max(i, 1), len(pts)-1)
	a, b := pts[i-1], pts[i]
	u := (x - a.Interactivity) / (b.Interactivity - a.Interactivity)
	return math.Exp(math.Log(a.TputPerGPU) + u*(math.Log(b.TputPerGPU)-math.Log(a.TputPerGPU)))
}

// frontierGain pairs each MTP frontier row with the no-speculation row of
// the same page at the same interactivity and returns the published and
// predicted throughput gain of MTP there (the model's side read off both
// predicted frontiers), keyed by the MTP row's id.
type frontierGainRow struct {
	id, set   string
	want, got float64
}

func frontierGains(rows []publishedRow) ([]frontierGainRow, error) {
	off := map[string]publishedRow{}
	key := func(r publishedRow) string { return fmt.Sprint(r.URL, r.Measured) }
	for _, r := range rows {
		if r.Metric == "interactivity_at_tput" && r.Steps == 0 {
			off[key(r)] = r
		}
	}
	var out []frontierGainRow
	for _, r := range rows {
		o, ok := off[key(r)]
		if r.Metric != "interactivity_at_tput" || r.Steps == 0 || !ok {
			continue
		}
		fm, err := sweepFrontier(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.ID, err)
		}
		fo, err := sweepFrontier(o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.ID, err)
		}
		set := "tune"
		if r.HeldOut {
			set = "held"
		}
		out = append(out, frontierGainRow{r.ID, set, r.TputPerGPU / o.TputPerGPU, tputAt(fm, r.Measured) / tputAt(fo, r.Measured)})
	}
	return out, nil
}
