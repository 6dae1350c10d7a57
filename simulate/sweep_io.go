package simulate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/specsim/specsim/simulate/agentx"
)

// SweepInputs echoes everything a sweep was asked, beside its results, so
// that an output file says how to reproduce it and shards can be checked
// against each other before they are merged.
type SweepInputs struct {
	SpecsimVersion string `json:"specsim_version"`
	// Resolved names.
	Model     string `json:"model"`
	Precision string `json:"precision"`
	GPU       string `json:"gpu"`
	Engine    string `json:"engine"`
	Workload  string `json:"workload"`
	// WorkloadParams is the resolved workload: lengths, distributions, or
	// the trace corpus by name and content hash.
	WorkloadParams WorkloadInputs `json:"workload_params"`
	// Query is the query as given (a zero value, left out, is the
	// default); ResolveSweepInputs rebuilds the query from it.
	Query QueryInputs `json:"query"`
	Seed  uint64      `json:"seed"`
	GPUs  int         `json:"gpus"`
	// GPUsPerNode is the host size multi-node points are judged by.
	GPUsPerNode int `json:"gpus_per_node"`
	// MinPoolGPUs is --min-pool-gpus (0: none).
	MinPoolGPUs int      `json:"min_pool_gpus,omitempty"`
	Concs       []int    `json:"concs"`
	Steps       [2]int   `json:"steps"`
	Topologies  []string `json:"topologies,omitempty"`
	Scope       Scope    `json:"scope"`
	SLA         SLA      `json:"sla"`
	Top         int      `json:"top,omitempty"`
	// MaxRefine is the refinement budget in effect (-1: none).
	MaxRefine int    `json:"max_refine"`
	Shard     *Shard `json:"shard,omitempty"`
}

// NewSweepInputs fills SweepInputs from a resolved query and a sweep space.
func NewSweepInputs(version string, r *Resolved, space SweepSpace) SweepInputs {
	in := SweepInputs{SpecsimVersion: version, Model: r.Model.Name, Precision: string(r.Precision), GPU: r.GPU.GPU.Name,
		Engine: orDefault(r.Q.Engine, "sglang"), Workload: r.Workload.Name, WorkloadParams: newWorkloadInputs(&r.Workload),
		Query: newQueryInputs(r.Q), Seed: r.Q.Seed, GPUs: space.GPUs, GPUsPerNode: r.GPU.Node(), MinPoolGPUs: space.MinPoolGPUs, Concs: space.Concs, Steps: [2]int{space.StepsLo, space.StepsHi},
		Scope: space.Scope, SLA: space.SLA, Top: space.Top, MaxRefine: space.MaxRefine}
	switch {
	case in.MaxRefine == 0:
		in.MaxRefine = DefaultMaxRefine
	case in.MaxRefine < 0:
		in.MaxRefine = -1
	}
	if len(in.Concs) == 0 {
		in.Concs = DefaultConcs()
	}
	if in.Scope == "" {
		in.Scope = ScopeAll
	}
	for _, t := range space.Topologies {
		in.Topologies = append(in.Topologies, t.String())
	}
	if !space.Shard.whole() {
		sh := space.Shard
		in.Shard = &sh
	}
	return in
}

// QueryInputs is a Query as a sweep echoes it: the query's own keys, and
// the host overheads in milliseconds, null for the engine's default.
type QueryInputs struct {
	Query
	SchedOverheadMS *float64 `json:"sched_overhead_ms"`
	SpecOverheadMS  *float64 `json:"spec_overhead_ms"`
}

func newQueryInputs(q Query) QueryInputs {
	in := QueryInputs{Query: q}
	if q.SchedOverhead >= 0 {
		in.SchedOverheadMS = &q.SchedOverhead
	}
	if q.SpecOverhead >= 0 {
		in.SpecOverheadMS = &q.SpecOverhead
	}
	return in
}

// ToQuery is the query the inputs echo.
func (in QueryInputs) ToQuery() Query {
	q := in.Query
	q.SchedOverhead, q.SpecOverhead = -1, -1
	if in.SchedOverheadMS != nil {
		q.SchedOverhead = *in.SchedOverheadMS
	}
	if in.SpecOverheadMS != nil {
		q.SpecOverhead = *in.SpecOverheadMS
	}
	return q
}

// WorkloadInputs is the resolved workload as a sweep echoes it: fixed
// lengths, the synthetic agentic distributions, or the replayed trace
// corpus (by name or path and content hash, not its contents).
type WorkloadInputs struct {
	ISL            int         `json:"isl,omitempty"`
	OSL            int         `json:"osl,omitempty"`
	CachedFraction float64     `json:"cached_fraction,omitempty"`
	RangeRatio     float64     `json:"range_ratio,omitempty"`
	AgentX         *AgentX     `json:"agentx,omitempty"`
	Trace          *TraceInput `json:"trace,omitempty"`
}

// TraceInput names a replayed trace corpus: Source is the embedded
// corpus's name or the --agentx-trace path; SHA256 is the hash of the
// traces in specsim's compact corpus encoding (agentx.EncodeCorpus), so
// that two runs replayed the same traces exactly when it is equal.
type TraceInput struct {
	Source string      `json:"source"`
	SHA256 string      `json:"sha256"`
	Traces int         `json:"traces"`
	Replay ReplayInput `json:"replay"`
}

// ReplayInput is the AgentX client configuration (agentx.Config) of a
// replay; TraceIdleCapS is null when the cap is off.
type ReplayInput struct {
	DurationS      float64  `json:"duration_s"`
	StartMin       float64  `json:"start_min_ratio"`
	StartMax       float64  `json:"start_max_ratio"`
	WarmupPerLane  int      `json:"warmup_requests_per_lane"`
	SystemIdleCapS float64  `json:"system_idle_gap_cap_s"`
	TraceIdleCapS  *float64 `json:"trace_idle_gap_cap_s"`
	MaxContext     int      `json:"max_context_length"`
	MaxTraces      int      `json:"num_dataset_entries"`
	Seed           uint64   `json:"random_seed"`
}

func newWorkloadInputs(w *Workload) WorkloadInputs {
	if w.Name == "fixed" {
		return WorkloadInputs{ISL: w.ISL, OSL: w.OSL, CachedFraction: w.CachedFraction, RangeRatio: w.RangeRatio}
	}
	tw := w.Trace
	if tw == nil {
		a := w.AgentX
		return WorkloadInputs{AgentX: &a}
	}
	c := tw.Replay
	ri := ReplayInput{DurationS: c.Duration, StartMin: c.StartMin, StartMax: c.StartMax, WarmupPerLane: c.WarmupPerLane,
		SystemIdleCapS: c.SystemIdleCap, MaxContext: c.MaxContext, MaxTraces: c.MaxTraces, Seed: c.Seed}
	if !math.IsInf(c.TraceIdleCap, 0) {
		ri.TraceIdleCapS = &c.TraceIdleCap
	}
	return WorkloadInputs{Trace: &TraceInput{Source: tw.Source, SHA256: tw.contentHash(), Traces: len(tw.Traces), Replay: ri}}
}

// SweepOutput is what `specsim sweep --json` prints and `specsim merge`
// reads: the inputs and the result side by side.
type SweepOutput struct {
	Inputs SweepInputs `json:"inputs"`
	*SweepResult
	// Band is the uncertainty every point carries (see BandWidthsFor).
	Band *SweepBand `json:"band,omitempty"`
	// Calibration names the calibration applied, if any.
	Calibration string `json:"calibration,omitempty"`
}

// SweepBand is a sweep's relative uncertainty band and where it comes from.
type SweepBand struct {
	Relative BandWidths `json:"relative"`
	Source   string     `json:"source"`
}

// maxSweepFile bounds one sweep file read by merge.
const maxSweepFile = 1 << 30

// ReadSweepOutput decodes one `sweep --json` file; name is for errors.
func ReadSweepOutput(name string, r io.Reader) (*SweepOutput, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxSweepFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > maxSweepFile {
		return nil, fmt.Errorf("%s: larger than %d MiB; not a sweep output", name, maxSweepFile>>20)
	}
	out := &SweepOutput{SweepResult: &SweepResult{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return nil, fmt.Errorf("%s: not a `specsim sweep --json` output: %v", name, err)
	}
	if out.Inputs.SpecsimVersion == "" || out.Inputs.Model == "" {
		return nil, fmt.Errorf("%s: no inputs section; write it with `specsim sweep --json`", name)
	}
	if out.Inputs.SLA.Validate() != nil || out.Inputs.Top < 0 || out.Inputs.Top > 1000 {
		return nil, fmt.Errorf("%s: inputs.sla or inputs.top out of range", name)
	}
	if sh := out.Inputs.Shard; sh != nil && (sh.Count < 1 || sh.Count > 4096 || sh.Index < 0 || sh.Index >= sh.Count) {
		return nil, fmt.Errorf("%s: inputs.shard %d/%d: want 0 <= I < N <= 4096", name, sh.Index, sh.Count)
	}
	return out, nil
}

// Merge joins the outputs of the shards of one sweep (same inputs, shards
// 0..N-1 of the same N, each once) into the result the unsharded sweep
// gives: every frontier point of the whole sweep is on its own shard's
// frontier, where it was event-simulated, so no simulation is needed here.
func Merge(names []string, outs []*SweepOutput) (*SweepOutput, error) {
	if len(outs) == 0 {
		return nil, fmt.Errorf("merge: no files")
	}
	key := func(in SweepInputs) string {
		in.Shard = nil
		b, _ := json.Marshal(in)
		return string(b)
	}
	want := key(outs[0].Inputs)
	n := 1
	if outs[0].Inputs.Shard != nil {
		n = outs[0].Inputs.Shard.Count
	}
	have := map[int]string{}
	for i, o := range outs {
		if key(o.Inputs) != want {
			return nil, fmt.Errorf("merge: %s was swept with other inputs than %s (model, GPU, workload, flags or specsim version differ)", names[i], names[0])
		}
		sh := Shard{Index: 0, Count: 1}
		if o.Inputs.Shard != nil {
			sh = *o.Inputs.Shard
		}
		if sh.Count != n {
			return nil, fmt.Errorf("merge: %s is shard %d/%d but %s is of %d shards", names[i], sh.Index, sh.Count, names[0], n)
		}
		if prev, dup := have[sh.Index]; dup {
			return nil, fmt.Errorf("merge: %s and %s are both shard %d/%d", prev, names[i], sh.Index, n)
		}
		have[sh.Index] = names[i]
	}
	var missing []string
	for i := range n {
		if _, ok := have[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("merge: missing shard(s) %s", strings.Join(missing, ", "))
	}
	res := &SweepResult{Skipped: []string{}}
	seen := map[string]bool{}
	for _, o := range outs {
		res.Points = append(res.Points, o.Points...)
		res.Evaluated += o.Evaluated
		res.Infeasible += o.Infeasible
		res.Refined += o.Refined
		res.RefineStopped = res.RefineStopped || o.RefineStopped
		res.Rounds = max(res.Rounds, o.Rounds)
		res.MultiNode += o.MultiNode
		res.NotRun += o.NotRun
		if o.NotRunWhy != "" {
			res.NotRunWhy = o.NotRunWhy
		}
		for _, s := range o.Skipped {
			if !seen[s] {
				seen[s] = true
				res.Skipped = append(res.Skipped, s)
			}
		}
	}
	sort.Strings(res.Skipped)
	sort.SliceStable(res.Points, func(a, b int) bool { return res.Points[a].Index < res.Points[b].Index })
	for i := 1; i < len(res.Points); i++ {
		if res.Points[i].Index == res.Points[i-1].Index {
			return nil, fmt.Errorf("merge: configuration %d (%s conc %d k %d) is in two files", res.Points[i].Index, res.Points[i].Topology, res.Points[i].Conc, res.Points[i].Steps)
		}
	}
	in := outs[0].Inputs
	if need := res.finish(in.SLA, in.Top, in.Workload == "agentx", res.RefineStopped); len(need) > 0 {
		p := res.Points[need[0]]
		return nil, fmt.Errorf("merge: %d frontier point(s) were not event-simulated in their shard, e.g. %s conc %d k %d; were the files edited?", len(need), p.Topology, p.Conc, p.Steps)
	}
	in.Shard = nil
	return &SweepOutput{Inputs: in, SweepResult: res, Band: outs[0].Band, Calibration: outs[0].Calibration}, nil
}

// contentHash is the hex SHA-256 of tw's traces in the compact corpus
// encoding (gzip without a timestamp, so the same traces give the same
// bytes).
func (tw *TraceWorkload) contentHash() string {
	h := sha256.New()
	if err := agentx.EncodeCorpus(h, tw.Traces); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}
