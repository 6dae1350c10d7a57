package simulate

import (
	"errors"
	"fmt"
	quant "github.com/specsim/specsim/internal/quantile"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/specsim/specsim/golden"
	"github.com/specsim/specsim/kernels"
)

// Measurement is one measured run: the deployment in the words of predict's
// flags (snake_case keys; see audit/measured.DeploymentKeys) and the
// measured metrics under predict's JSON keys.
type Measurement struct {
	Source     string
	Deployment map[string]string
	Metrics    map[string]float64
}

// Point is a measurement resolved into a prediction request.
type measuredPoint struct {
	m    Measurement
	r    *Resolved
	topo Topology
	conc int
	k    int
	obs  map[string]float64 // measured metrics, throughputs per GPU
}

// DefaultQuery is predict's defaults as a Query.
func DefaultQuery() Query {
	return Query{Model: "Qwen3.5-397B-A17B", Precision: "fp4", GPU: "gb300", Topology: "agg:tp2",
		RangeRatio: 0.8, Spec: "mtp", Thinking: "on", MemFraction: DefaultMemFraction, Engine: "sglang",
		SchedOverhead: -1, SpecOverhead: -1, Seed: 1}
}

// DeploymentQuery turns a measured deployment into the query predict would
// run, with the topology, concurrency and draft length; missing keys keep
// predict's defaults, except that a measurement must state its GPU,
// topology and concurrency (a comparison against a guessed deployment
// would be silently wrong). A key that is missing is an [*Error] on
// "Deployment.KEY" with no value.
func DeploymentQuery(dep map[string]string, cal *CalibrationFile) (q Query, topo Topology, conc, k int, err error) {
	q = DefaultQuery()
	q.Calibration = cal
	for _, need := range []string{"gpu", "topology", "conc"} {
		if dep[need] == "" {
			return q, topo, 0, 0, &Error{Field: "Deployment." + need, Reason: fmt.Sprintf("no %s in the result file (a CSV column or a JSON key)", need)}
		}
	}
	i := func(key string, dst *int) error {
		v, ok := dep[key]
		if !ok {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%s %q: want an integer", key, v)
		}
		*dst = n
		return nil
	}
	f := func(key string, dst *float64) error {
		v, ok := dep[key]
		if !ok {
			return nil
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s %q: want a number", key, v)
		}
		*dst = x
		return nil
	}
	s := func(key string, dst *string) {
		if v, ok := dep[key]; ok {
			*dst = v
		}
	}
	s("model", &q.Model)
	s("precision", &q.Precision)
	s("gpu", &q.GPU)
	s("topology", &q.Topology)
	s("agentx", &q.AgentX)
	s("spec", &q.Spec)
	s("thinking", &q.Thinking)
	s("method", &q.Method)
	s("draft_dtype", &q.DraftDType)
	s("kv_dtype", &q.KVDType)
	s("engine", &q.Engine)
	steps := -1
	var seed int
	for _, e := range []error{
		i("gpus_per_node", &q.GPUsPerNode), i("nvlink_domain_gpus", &q.GPUsPerNode), i("conc", &conc), i("isl", &q.ISL), i("osl", &q.OSL),
		i("max_running", &q.MaxRunning), i("cuda_graph_max_bs", &q.CUDAGraphMaxBS), i("chunk", &q.Chunk),
		i("requests", &q.Requests), i("steps", &steps), i("seed", &seed),
		f("cached", &q.Cached), f("range_ratio", &q.RangeRatio), f("al", &q.AL), f("mem_fraction", &q.MemFraction),
		f("sched_overhead_ms", &q.SchedOverhead), f("spec_overhead_ms", &q.SpecOverhead), f("moe_skew", &q.MoESkew),
	} {
		if e != nil {
			return q, topo, 0, 0, e
		}
	}
	if seed > 0 {
		q.Seed = uint64(seed)
	}
	for _, l := range []struct {
		key string
		n   int
	}{{"isl", q.ISL}, {"osl", q.OSL}} {
		if v, ok := dep[l.key]; ok && l.n < 1 && dep["workload"] != "agentx" {
			return q, topo, 0, 0, fmt.Errorf("%s %q: want a positive token count", l.key, v)
		}
	}
	switch wl := dep["workload"]; {
	case wl == "agentx":
		q.Workload = "agentx"
	case q.ISL > 0 && q.OSL > 0:
		q.Workload = "fixed"
	case wl == "" || wl == "fixed":
		return q, topo, 0, 0, errors.New("no isl/osl and no workload=agentx")
	default:
		return q, topo, 0, 0, fmt.Errorf("workload %q: want agentx or fixed (with isl, osl)", wl)
	}
	// The bound the simulation itself puts on sessions (serve.go's
	// Scenario check), so that compare accepts what predict runs.
	if conc < 1 || conc > 1<<16 {
		return q, topo, 0, 0, fmt.Errorf("conc %d: want 1..%d sessions, as predict", conc, 1<<16)
	}
	if topo, err = ParseTopology(q.Topology); err != nil {
		return q, topo, 0, 0, err
	}
	if v, ok := dep["steps"]; ok && steps < 0 {
		return q, topo, 0, 0, &Error{Field: "Deployment.steps", Value: v, Reason: "want the draft length, 0 (no speculation) or a positive integer"}
	}
	switch q.Spec {
	case "none":
		if steps > 0 {
			return q, topo, 0, 0, fmt.Errorf("steps %d with spec none", steps)
		}
	default:
		if steps < 0 {
			return q, topo, 0, 0, &Error{Field: "Deployment.steps", Reason: "spec mtp without steps: the draft length is not in the result file"}
		}
		if steps == 0 {
			q.Spec = "none"
		}
		k = steps
	}
	return q, topo, conc, k, nil
}

// Env holds the data a comparison or calibration resolves deployments
// against: the golden curves and the GPU catalog (nil: the embedded ones).
type Env struct {
	Curves  *golden.Set
	Catalog *kernels.Catalog
}

func (e Env) orDefault() (Env, error) {
	if e.Curves == nil {
		s, err := golden.Default()
		if err != nil {
			return e, err
		}
		e.Curves = s
	}
	if e.Catalog == nil {
		e.Catalog = kernels.DefaultCatalog()
	}
	return e, nil
}

// resolveMeasurement checks a measurement and resolves its deployment.
func resolveMeasurement(m Measurement, cal *CalibrationFile, env Env) (*measuredPoint, error) {
	q, topo, conc, k, err := DeploymentQuery(m.Deployment, cal)
	if err != nil {
		return nil, err
	}
	r, err := q.Resolve(env.Curves, env.Catalog)
	if err != nil {
		return nil, err
	}
	obs := map[string]float64{}
	for key, v := range m.Metrics {
		obs[key] = v
	}
	gpus := float64(topo.GPUs())
	if t, ok := obs["tput_total"]; ok {
		if _, has := obs["tput_per_gpu"]; !has {
			obs["tput_per_gpu"] = t / gpus
		}
		delete(obs, "tput_total")
	}
	if t, ok := obs["output_tput_total"]; ok {
		if _, has := obs["output_tput_per_gpu"]; !has {
			obs["output_tput_per_gpu"] = t / gpus
		}
		delete(obs, "output_tput_total")
	}
	for key := range obs {
		if _, ok := metricValue(&Result{}, key); !ok {
			return nil, fmt.Errorf("metric %q: predict has no such figure", key)
		}
	}
	return &measuredPoint{m: m, r: r, topo: topo, conc: conc, k: k, obs: obs}, nil
}

// metricValue is the figure of res under one of predict's JSON keys.
func metricValue(res *Result, key string) (float64, bool) {
	switch key {
	case "tput_per_gpu":
		return res.TputPerGPU, true
	case "output_tput_per_gpu":
		return res.OutputPerGPU, true
	case "interactivity":
		return res.Interactivity, true
	case "tpot_ms":
		return res.TPOTms, true
	case "tpot_ms_p90":
		return res.TPOTp90ms, true
	case "ttft_ms":
		return res.TTFTms, true
	case "ttft_ms_p90":
		return res.TTFTp90ms, true
	case "e2el_s_p50":
		return res.E2EL.P50, true
	case "e2el_s_p90":
		return res.E2EL.P90, true
	case "al":
		return res.ALRealized, true
	case "decode_batch_mean":
		return res.DecodeBatch, true
	}
	return 0, false
}

// MetricOrder is the order metrics are reported in.
var MetricOrder = []string{"tput_per_gpu", "output_tput_per_gpu", "interactivity", "tpot_ms", "tpot_ms_p90", "ttft_ms", "ttft_ms_p90", "e2el_s_p50", "e2el_s_p90", "al", "decode_batch_mean"}

// Sims a comparison or calibration can run.
const (
	SimEvent     = "event"
	SimMeanField = "mean-field"
)

func runSim(sim string, r *Resolved, t Topology, conc, k int) (*Result, error) {
	if sim == SimMeanField {
		return EstimatePoint(r, t, conc, k)
	}
	return Predict(r, t, conc, k)
}

// sortedKeys returns the keys of m in MetricOrder.
func sortedKeys(m map[string]float64) []string {
	var out []string
	for _, k := range MetricOrder {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// medianOf returns the median of xs by the project's one quantile
// definition (NaN when empty).
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return quant.Of(xs, 0.5)
}

// DeploymentString is a measured deployment as one short line.
func DeploymentString(dep map[string]string) string {
	keys := make([]string, 0, len(dep))
	for k := range dep {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+dep[k])
	}
	return strings.Join(parts, " ")
}
