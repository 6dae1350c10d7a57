package simulate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/specsim/specsim/simulate/acceptance"
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
	// WorkloadParams is the resolved workload as the sweep simulated it:
	// lengths, distributions, or the trace corpus by name and content hash
	// with the replay window the sweep ran (SweepAgentXWindow at most; the
	// query's own --agentx duration may be longer, see SweepReplayWindow).
	WorkloadParams WorkloadInputs `json:"workload_params"`
	// Query is the query as given (a zero value, left out, is the
	// default); QueryInputs.ToQuery rebuilds the query from it.
	Query QueryInputs `json:"query"`
	Seed  uint64      `json:"seed"`
	GPUs  int         `json:"gpus"`
	// GPUsPerHost is the host size multi-node points are judged by (the
	// GPU catalog's gpus_per_node: 4 per GB300 NVL72 tray, 8 per HGX).
	GPUsPerHost int `json:"gpus_per_host"`
	// NVLinkDomainGPUs is the NVLink domain in effect
	// (--nvlink-domain-gpus, or the catalog's: 72 for NVL72, 8 for HGX).
	NVLinkDomainGPUs int `json:"nvlink_domain_gpus"`
	// MinPoolGPUs is --min-pool-gpus (0: none).
	MinPoolGPUs int      `json:"min_pool_gpus,omitempty"`
	Concs       []int    `json:"concs"`
	Steps       [2]int   `json:"steps"`
	Topologies  []string `json:"topologies,omitempty"`
	Scope       Scope    `json:"scope"`
	SLA         SLA      `json:"sla"`
	Top         int      `json:"top,omitempty"`
	// MaxRefine is the refinement budget in effect (-1: none).
	MaxRefine int `json:"max_refine"`
	// RefineBy is how refinement judged unsimulated candidates (RefineBy).
	RefineBy RefineBy `json:"refine_by"`
	Shard    *Shard   `json:"shard,omitempty"`
}

// NewSweepInputs fills SweepInputs from a resolved query and a sweep space.
func NewSweepInputs(version string, r *Resolved, space SweepSpace) SweepInputs {
	in := SweepInputs{SpecsimVersion: version, Model: r.Model.Name, Precision: string(r.Precision), GPU: r.GPU.GPU.Name,
		Engine: orDefault(r.Q.Engine, "sglang"), Workload: r.Workload.Name, WorkloadParams: newWorkloadInputs(&refineWindow(r).Workload),
		Query: newQueryInputs(r.Q), Seed: r.Q.Seed, GPUs: space.GPUs, GPUsPerHost: r.GPU.Node(), NVLinkDomainGPUs: r.GPU.domain(), MinPoolGPUs: space.MinPoolGPUs, Concs: space.Concs, Steps: [2]int{space.StepsLo, space.StepsHi},
		Scope: space.Scope, SLA: space.SLA, Top: space.Top, MaxRefine: space.MaxRefine, RefineBy: space.RefineBy}
	if in.RefineBy == "" {
		in.RefineBy = RefineByEstimate
	}
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

// maxSweepPoints bounds the points of one sweep file read by merge,
// whatever its inputs allow: 72 GPUs of TensorRT-LLM layouts, 11
// concurrencies and 7 draft lengths enumerate 318,318.
const maxSweepPoints = 1 << 20

// ReadSweepOutput decodes one `sweep --json` file; name is for errors. It
// streams: the inputs section, which a sweep writes first, is read and
// checked before any point, and the points are bounded by the
// configurations those inputs enumerate, so that a file that is not a
// sweep output is refused before it is read whole.
func ReadSweepOutput(name string, r io.Reader) (*SweepOutput, error) {
	lr := &limitReader{r: r, n: maxSweepFile}
	dec := json.NewDecoder(bufio.NewReader(lr))
	dec.DisallowUnknownFields()
	out, err := readSweepOutput(dec)
	if lr.over {
		return nil, fmt.Errorf("%s: larger than %d MiB; not a sweep output", name, maxSweepFile>>20)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// limitReader reads at most n bytes of r and records that r holds more.
type limitReader struct {
	r    io.Reader
	n    int64
	over bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		l.over = true
		return 0, fmt.Errorf("larger than %d MiB", maxSweepFile>>20)
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

const errNotSweep = "not a `specsim sweep --json` output"

func readSweepOutput(dec *json.Decoder) (*SweepOutput, error) {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("%s: want a JSON object", errNotSweep)
	}
	out := &SweepOutput{SweepResult: &SweepResult{}}
	if tok, err := dec.Token(); err != nil || tok != "inputs" {
		return nil, fmt.Errorf("no inputs section first (a sweep writes it first); write it with `specsim sweep --json`")
	}
	if err := dec.Decode(&out.Inputs); err != nil {
		return nil, fmt.Errorf("%s: inputs: %v", errNotSweep, err)
	}
	in := &out.Inputs
	if in.SpecsimVersion == "" || in.Model == "" {
		return nil, fmt.Errorf("no inputs section; write it with `specsim sweep --json`")
	}
	if in.SLA.Validate() != nil || in.Top < 0 || in.Top > 1000 {
		return nil, fmt.Errorf("inputs.sla or inputs.top out of range")
	}
	if sh := in.Shard; sh != nil && (sh.Count < 1 || sh.Count > 4096 || sh.Index < 0 || sh.Index >= sh.Count) {
		return nil, fmt.Errorf("inputs.shard %d/%d: want 0 <= I < N <= 4096", sh.Index, sh.Count)
	}
	space, err := in.space()
	if err != nil {
		return nil, err
	}
	topos, err := SweepTopologies(space, in.Engine, nil)
	if err != nil {
		return nil, fmt.Errorf("inputs: %v", err)
	}
	bound := min(len(topos)*(space.StepsHi-space.StepsLo+1)*len(space.Concs), maxSweepPoints)
	swept := make(map[string]bool, len(topos))
	for _, t := range topos {
		swept[t.String()] = true
	}
	concs := make(map[int]bool, len(space.Concs))
	for _, c := range space.Concs {
		concs[c] = true
	}
	// inSpace refuses a point the inputs do not enumerate (a topology
	// the engine's enumeration for inputs.gpus, or inputs.topologies,
	// does not hold, with any model; a conc or k not swept).
	inSpace := func(p *Point) error {
		t, err := ParseTopology(p.Topology)
		if err != nil {
			return err
		}
		switch {
		case !swept[t.String()]:
			if len(space.Topologies) > 0 {
				return fmt.Errorf("topology %s is not in inputs.topologies", p.Topology)
			}
			return fmt.Errorf("topology %s is not a %s deployment of at most %d GPUs (inputs.gpus, inputs.scope %s, inputs.min_pool_gpus %d)", p.Topology, orDefault(in.Engine, "sglang"), in.GPUs, in.Scope, in.MinPoolGPUs)
		case !concs[p.Conc]:
			return fmt.Errorf("conc %d is not in inputs.concs", p.Conc)
		case p.Steps < space.StepsLo || p.Steps > space.StepsHi:
			return fmt.Errorf("k %d is outside inputs.steps %v", p.Steps, in.Steps)
		}
		return nil
	}
	// points reads an array of at most bound points, keeping them when
	// keep is set (merge recomputes the frontiers and top from the points).
	points := func(keep *[]Point) error {
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			if tok == nil && err == nil {
				return nil
			}
			return fmt.Errorf("%s: want an array of points", errNotSweep)
		}
		n := 0
		for dec.More() {
			if n++; n > bound {
				return fmt.Errorf("more than the %d points the inputs enumerate", bound)
			}
			var p Point
			if err := dec.Decode(&p); err != nil {
				return fmt.Errorf("%s: point %d: %v", errNotSweep, n-1, err)
			}
			if err := inSpace(&p); err != nil {
				return fmt.Errorf("point %d: %v", n-1, err)
			}
			if keep != nil {
				*keep = append(*keep, p)
			}
		}
		_, err := dec.Token()
		return err
	}
	res := out.SweepResult
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", errNotSweep, err)
		}
		key, _ := tok.(string)
		var dst any
		switch key {
		case "points":
			err = points(&res.Points)
		case "frontier", "frontier_e2el", "frontier_normalized_interactivity", "frontier_mtp", "frontier_none", "top":
			err = points(nil)
		case "skipped":
			if err = dec.Decode(&res.Skipped); err == nil && len(res.Skipped) > len(topos) {
				err = fmt.Errorf("skipped: %d topologies, more than the %d the inputs enumerate", len(res.Skipped), len(topos))
			}
		case "sla_removed":
			dst = &res.Removed
		case "e2el_metric":
			dst = &res.E2ELMetric
		case "refined":
			dst = &res.Refined
		case "refine_rounds":
			dst = &res.Rounds
		case "refine_budget_reached":
			dst = &res.RefineStopped
		case "estimate_contenders":
			dst = &res.EstimateContenders
		case "evaluated":
			dst = &res.Evaluated
		case "infeasible":
			dst = &res.Infeasible
		case "multi_node_points":
			dst = &res.MultiNode
		case "not_run":
			dst = &res.NotRun
		case "not_run_why":
			dst = &res.NotRunWhy
		case "overloaded_frontier_points":
			dst = &res.Overloaded
		case "band":
			dst = &out.Band
		case "calibration":
			dst = &out.Calibration
		default:
			return nil, fmt.Errorf("%s: unknown key %q", errNotSweep, key)
		}
		if dst != nil {
			err = dec.Decode(dst)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", key, err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%s: %v", errNotSweep, err)
	}
	return out, nil
}

// space is the sweep space the inputs echo, as far as it decides which
// configurations a sweep enumerates.
func (in *SweepInputs) space() (SweepSpace, error) {
	if in.GPUs < 1 || in.GPUs > 1024 {
		return SweepSpace{}, fmt.Errorf("inputs.gpus %d: want 1..1024", in.GPUs)
	}
	if in.Steps[0] < 0 || in.Steps[1] < in.Steps[0] || in.Steps[1] > acceptance.MaxDraftLength {
		return SweepSpace{}, fmt.Errorf("inputs.steps %v: want 0 <= lo <= hi <= %d", in.Steps, acceptance.MaxDraftLength)
	}
	if len(in.Concs) == 0 || len(in.Concs) > 256 {
		return SweepSpace{}, fmt.Errorf("inputs.concs: want 1..256 concurrencies")
	}
	space := SweepSpace{GPUs: in.GPUs, MinPoolGPUs: in.MinPoolGPUs, Concs: in.Concs, StepsLo: in.Steps[0], StepsHi: in.Steps[1], Scope: in.Scope}
	if _, err := ParseScope(string(in.Scope)); err != nil {
		return SweepSpace{}, fmt.Errorf("inputs.scope: %v", err)
	}
	for _, s := range in.Topologies {
		t, err := ParseTopology(s)
		if err != nil {
			return SweepSpace{}, fmt.Errorf("inputs.topologies: %v", err)
		}
		space.Topologies = append(space.Topologies, t)
	}
	return space, nil
}

// Merge joins the outputs of the shards of one sweep (same inputs, shards
// 0..N-1 of the same N, each once) into the result the unsharded sweep
// gives, by construction: it takes every point back to its mean-field
// estimate and runs the unsharded sweep's refinement rounds over the
// union, taking each event simulation from the shard that ran it. A point
// those rounds need that no shard simulated (its shard's frontier did not
// hold it) is simulated here on the query resolve rebuilds from the
// inputs (nil resolve: such a merge fails); progress reports the rounds.
func Merge(names []string, outs []*SweepOutput, resolve func(SweepInputs) (*Resolved, error), progress Progress) (*SweepOutput, error) {
	if len(outs) == 0 {
		return nil, fmt.Errorf("no files")
	}
	tree := func(in SweepInputs) any {
		in.Shard = nil
		b, _ := json.Marshal(in)
		var v any
		json.Unmarshal(b, &v)
		return v
	}
	want := tree(outs[0].Inputs)
	n := 1
	if outs[0].Inputs.Shard != nil {
		n = outs[0].Inputs.Shard.Count
	}
	have := map[int]string{}
	for i, o := range outs {
		if path, a, b := firstDiff("inputs", want, tree(o.Inputs)); path != "" {
			return nil, fmt.Errorf("%s was swept with other inputs than %s: %s is %s there, %s in %s", names[i], names[0], path, b, a, names[0])
		}
		sh := Shard{Index: 0, Count: 1}
		if o.Inputs.Shard != nil {
			sh = *o.Inputs.Shard
		}
		if sh.Count != n {
			return nil, fmt.Errorf("%s is shard %d/%d but %s is of %d shards", names[i], sh.Index, sh.Count, names[0], n)
		}
		if prev, dup := have[sh.Index]; dup {
			if prev == names[i] {
				return nil, fmt.Errorf("%s is given twice", prev)
			}
			return nil, fmt.Errorf("%s and %s are both shard %d/%d", prev, names[i], sh.Index, n)
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
		return nil, fmt.Errorf("missing shard(s) %s", strings.Join(missing, ", "))
	}
	res := &SweepResult{Skipped: []string{}}
	seen := map[string]bool{}
	from := map[int]string{} // point index -> the file it came from
	for i, o := range outs {
		for _, p := range o.Points {
			if prev, dup := from[p.Index]; dup {
				if prev == names[i] {
					return nil, fmt.Errorf("%s holds configuration %d (%s conc %d k %d) twice", prev, p.Index, p.Topology, p.Conc, p.Steps)
				}
				return nil, fmt.Errorf("configuration %d (%s conc %d k %d) is in both %s and %s", p.Index, p.Topology, p.Conc, p.Steps, prev, names[i])
			}
			from[p.Index] = names[i]
		}
		res.Points = append(res.Points, o.Points...)
		res.Evaluated += o.Evaluated
		res.Infeasible += o.Infeasible
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
	// Duplicates first, then each point's figures.
	for i := range res.Points {
		p := &res.Points[i]
		if err := p.check(); err != nil {
			return nil, fmt.Errorf("%s: point %d (%s conc %d k %d): %v", from[p.Index], p.Index, p.Topology, p.Conc, p.Steps, err)
		}
	}
	sort.Strings(res.Skipped)
	sort.SliceStable(res.Points, func(a, b int) bool { return res.Points[a].Index < res.Points[b].Index })
	// Back to the mean-field estimates; the shards' simulations wait in
	// simulated for the rounds that ask for them.
	simulated := map[int]Result{}
	for i := range res.Points {
		p := &res.Points[i]
		if p.Sim != "event" {
			continue
		}
		if p.Estimate == nil {
			return nil, fmt.Errorf("%s: point %d (%s conc %d k %d) is event-simulated but carries no mean-field estimate; write the shards again with this specsim", from[p.Index], p.Index, p.Topology, p.Conc, p.Steps)
		}
		simulated[p.Index] = p.Result
		p.Result, p.Estimate = *p.Estimate, nil
	}
	in := outs[0].Inputs
	var rr *Resolved
	var rerr error
	sim := func(_ *Resolved, p *Point) (*Result, error) {
		if r, ok := simulated[p.Index]; ok {
			return &r, nil
		}
		if rr == nil && rerr == nil {
			if resolve == nil {
				rerr = fmt.Errorf("no shard simulated it and no query to simulate it with")
			} else if r, err := resolve(in); err != nil {
				rerr = fmt.Errorf("no shard simulated it, and the sweep's query does not resolve here: %w", err)
			} else {
				rr = refineWindow(r)
			}
		}
		if rerr != nil {
			return nil, rerr
		}
		t, err := ParseTopology(p.Topology)
		if err != nil {
			return nil, err
		}
		return Predict(rr, t, p.Conc, p.Steps)
	}
	if progress == nil {
		progress = func(string, int, int) {}
	}
	if err := res.refine(nil, in.SLA, in.Top, in.MaxRefine, in.RefineBy, in.Workload == "agentx", 1, progress, sim); err != nil {
		return nil, err
	}
	res.annotate(in.Workload == "agentx", in.SLA)
	for _, p := range res.Points {
		if p.MultiNode {
			res.MultiNode++
		}
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

// maxPointFigure bounds a point's rates and latencies: a simulation stops
// at seven simulated days (6.05e8 ms) and no GPU serves 1e12 tokens a
// second.
const maxPointFigure = 1e12

// check refuses a point whose figures no sweep writes: a rate, latency or
// AL missing (decoded as 0), non-positive or non-finite, a concurrency or
// GPU count below 1, a negative k. Sweeps write every one of these
// figures positive (AL is 1 without speculation), except the decode
// figures (interactivity, TPOT and its p90) of a one-token output, which
// has no decode step: those three are 0 together.
func (p *Point) check() error {
	if p.Conc < 1 || p.Steps < 0 || p.Index < 0 || p.GPUs < 1 {
		return fmt.Errorf("conc %d, steps %d, index %d, gpus %d: want conc >= 1, steps >= 0, index >= 0, gpus >= 1", p.Conc, p.Steps, p.Index, p.GPUs)
	}
	for _, r := range []*Result{&p.Result, p.Estimate} {
		if r == nil {
			continue
		}
		noDecode := r.Interactivity == 0 && r.TPOTms == 0 && r.TPOTp90ms == 0
		for _, f := range []struct {
			key    string
			v      float64
			decode bool
		}{
			{"tput_per_gpu", r.TputPerGPU, false}, {"output_tput_per_gpu", r.OutputPerGPU, false}, {"interactivity", r.Interactivity, true},
			{"ttft_ms", r.TTFTms, false}, {"tpot_ms", r.TPOTms, true}, {"ttft_ms_p90", r.TTFTp90ms, false}, {"tpot_ms_p90", r.TPOTp90ms, true},
			{"e2el_s.p50", r.E2EL.P50, false}, {"e2el_s.p90", r.E2EL.P90, false}, {"normalized_interactivity_p90", r.NormalizedInteractivity, false}, {"al", r.AL, false},
		} {
			if f.decode && noDecode {
				continue
			}
			if !(f.v > 0) || math.IsInf(f.v, 0) {
				return fmt.Errorf("%s %g: want a finite figure > 0 (missing reads as 0)", f.key, f.v)
			}
			if f.v > maxPointFigure || f.key == "al" && f.v > float64(acceptance.MaxDraftLength+1) {
				return fmt.Errorf("%s %g: no sweep writes it (rates and latencies stay below %g; an AL is at most %d)", f.key, f.v, float64(maxPointFigure), acceptance.MaxDraftLength+1)
			}
		}
	}
	return nil
}

// firstDiff is the first path (in key order) where two decoded JSON values
// differ, with both values as JSON ("" when they are equal).
func firstDiff(path string, a, b any) (string, string, string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			if p, x, y := firstDiff(path+"."+k, am[k], bm[k]); p != "" {
				return p, x, y
			}
		}
		return "", "", ""
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if bytes.Equal(ja, jb) {
		return "", "", ""
	}
	show := func(j []byte) string {
		if string(j) == "null" {
			return "absent"
		}
		if len(j) > 80 {
			return string(j[:77]) + "..."
		}
		return string(j)
	}
	return path, show(ja), show(jb)
}

// Sig3 prints x to three significant figures, as sweep tables and emitted
// recipes do: the model's measured errors (README, accuracy) are several
// percent, so more digits would be noise.
func Sig3(x float64) string {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	d := 2 - int(math.Floor(math.Log10(math.Abs(x))))
	if d <= 0 {
		p := math.Pow(10, float64(-d))
		return strconv.FormatFloat(math.Round(x/p)*p, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'f', d, 64)
}
