package simulate

import (
	"errors"
	"fmt"
	"github.com/specsim/specsim/simulate/agentx"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/specsim/specsim/golden"
	"github.com/specsim/specsim/kernels"
	"github.com/specsim/specsim/simulate/acceptance"
)

// Query is a prediction request as the command line states it. Zero
// values mean "the default".
type Query struct {
	Model     string `json:"model"`     // preset name, alias, hub name or checkpoint directory
	Precision string `json:"precision"` // fp4 | fp8 | bf16
	GPU       string `json:"gpu"`
	Topology  string `json:"topology,omitempty"`
	// GPUsPerNode is the NVLink domain size (--nvlink-domain-gpus; 0:
	// the GPU catalog's), not the host size (GPUSpec.Node).
	GPUsPerNode int `json:"nvlink_domain_gpus,omitempty"`

	Workload   string  `json:"workload"`              // "fixed" or "agentx"
	ISL        int     `json:"isl,omitempty"`         // fixed workload
	OSL        int     `json:"osl,omitempty"`         // fixed workload
	Cached     float64 `json:"cached,omitempty"`      // fixed workload's prefix-cache hit
	RangeRatio float64 `json:"range_ratio,omitempty"` // fixed workload: lengths uniform in [ratio*L, L]
	AgentX     string  `json:"agentx,omitempty"`      // key=value overrides of the agentic distributions and the trace replay
	// AgentXTrace is a kv-cache-tester trace file or directory to replay
	// (empty = the embedded public corpus).
	AgentXTrace string `json:"agentx_trace,omitempty"`

	Spec     string  `json:"spec"`               // "mtp" or "none"
	Thinking string  `json:"thinking,omitempty"` // golden curve mode, "on" or "off"
	AL       float64 `json:"al,omitempty"`       // explicit acceptance length (overrides the golden curve)
	// GoldenModel names the golden curve to take the AL from instead of
	// the model's own (predict --recipe: the curve of the model the recipe
	// serves, whose AL AgentX injects); "" = the model's.
	GoldenModel string `json:"golden_model,omitempty"`
	Method      string `json:"method,omitempty"` // acceptance sampler
	// Histogram is the CSV file (length,count) of measured accepted lengths
	// that --method empirical draws from.
	Histogram string `json:"histogram,omitempty"`

	MaxRunning     int     `json:"max_running,omitempty"`
	CUDAGraphMaxBS int     `json:"cuda_graph_max_bs,omitempty"`
	Chunk          int     `json:"chunk,omitempty"`
	MemFraction    float64 `json:"mem_fraction,omitempty"`
	DraftDType     string  `json:"draft_dtype,omitempty"`
	KVDType        string  `json:"kv_dtype,omitempty"` // KV cache dtype: fp8 (default) | bf16
	Engine         string  `json:"engine,omitempty"`
	SchedOverhead  float64 `json:"-"` // ms; -1 = default
	SpecOverhead   float64 `json:"-"` // ms; -1 = default
	MoESkew        float64 `json:"moe_skew,omitempty"`
	Requests       int     `json:"requests,omitempty"`
	Seed           uint64  `json:"seed"`
	// Server holds the planner and prefix-cache flags (planner.go).
	Server ServerConfig `json:"server"`
	// Calibration, when set, applies its entry for this GPU and engine
	// (specsim calibrate); Resolve fails when it has none.
	Calibration *CalibrationFile `json:"calibration,omitempty"`
	// MambaSSMDType is SGLang's --mamba-ssm-dtype: the linear-attention
	// recurrent state's format (bf16 default, what InferenceX recipes set;
	// fp32 is SGLang's own default).
	MambaSSMDType string `json:"mamba_ssm_dtype,omitempty"`
	// AllReduceFusion is SGLang's --enable-flashinfer-allreduce-fusion
	// (forces the fusion on) and NoAllReduceFusion its
	// --enforce-disable-flashinfer-allreduce-fusion (forces it off, and
	// wins); with neither, SGLang's own rule decides (sglangAutoFusion).
	AllReduceFusion   bool `json:"allreduce_fusion,omitempty"`
	NoAllReduceFusion bool `json:"enforce_disable_allreduce_fusion,omitempty"`
	// SpecV2 is SGLANG_ENABLE_SPEC_V2=1.
	SpecV2 bool `json:"spec_v2,omitempty"`
	// MoEBackend and SpecMoEBackend are SGLang's --moe-runner-backend and
	// --speculative-moe-runner-backend ("" = unset).
	MoEBackend     string `json:"moe_runner_backend,omitempty"`
	SpecMoEBackend string `json:"speculative_moe_runner_backend,omitempty"`
	// KernelTables are AIConfigurator kernel database files measured on the
	// GPU (kernels.ReadAICFiles): their rows price the matching ops.
	KernelTables []string `json:"kernel_tables,omitempty"`
}

// Resolved is a Query turned into typed parts, with acceptance resolved per
// draft length so that sweeps can vary k.
type Resolved struct {
	Model     *Model
	Precision Precision
	GPU       GPUSpec
	Workload  Workload
	Engine    EngineConfig
	// Target is the acceptance: the method and the golden curve, fixed AL
	// or histogram it aims at (no curve when --al or --histogram is given).
	Target acceptance.Target
	// GoldenKey is the golden curve whose AL AgentX's synthetic acceptance
	// injects for this model (the preset's, the recipe's served model's,
	// or the one the golden set resolves the model's name to), found also
	// under --al or --histogram; empty when the set holds none.
	GoldenKey string
	Q         Query
	// Calibration is the entry of Q.Calibration applied (nil: none).
	Calibration *CalEntry

	engines map[Parallel]*Engine
	shared  *sweepMemo // a sweep's workers' (workerCopies)
}

// checkEngine refuses an engine or MoE backend name the engine does not
// have before anything is priced: a sweep would otherwise skip every
// topology for it.
func (q Query) checkEngine() error {
	engine := q.Engine
	if engine == "" {
		engine = "sglang"
	}
	if err := kernels.CheckEngine(engine); err != nil {
		return err
	}
	for _, b := range []struct{ field, name string }{{"MoEBackend", q.MoEBackend}, {"SpecMoEBackend", q.SpecMoEBackend}} {
		if strings.TrimSpace(b.name) == "" {
			continue
		}
		if err := kernels.CheckBackendName(engine, b.name); err != nil {
			return &Error{Field: b.field, Value: b.name, Reason: err.Error(), Err: err}
		}
	}
	return nil
}

// ResolveModel finds a preset or reads a checkpoint directory.
func ResolveModel(name string) (*Model, error) {
	if st, err := os.Stat(name); err == nil && st.IsDir() {
		return ModelFromDir(name)
	}
	return LookupPreset(name)
}

// Resolve checks and types every field of q, finding the model's golden
// curve in curves and the GPU in catalog. curves may be nil when q sets the
// acceptance without one (--al, --histogram, --spec none).
func (q Query) Resolve(curves *golden.Set, catalog *kernels.Catalog) (*Resolved, error) {
	if err := q.checkEngine(); err != nil {
		return nil, err
	}
	// Every later comparison reads the canonical name: "SGLang" and
	// "TensorRT-LLM" price as sglang and trtllm.
	if q.Engine != "" {
		q.Engine = kernels.CanonicalEngine(q.Engine)
	}
	r := &Resolved{Q: q}
	var err error
	if r.Model, err = ResolveModel(q.Model); err != nil {
		return nil, presetHint(q, curves, err)
	}
	if r.Precision, err = ParsePrecision(q.Precision); err != nil {
		return nil, err
	}
	if catalog == nil {
		return nil, &Error{Field: "GPU", Value: q.GPU, Reason: "no GPU catalog given"}
	}
	g, err := catalog.Lookup(q.GPU)
	if err != nil {
		return nil, &Error{Field: "GPU", Value: q.GPU, Reason: err.Error(), Err: err}
	}
	if q.GPUsPerNode < 0 || q.GPUsPerNode > maxGPUs {
		return nil, &Error{Field: "GPUsPerNode", Value: fmt.Sprint(q.GPUsPerNode), Reason: fmt.Sprintf("want 1..%d", maxGPUs)}
	}
	r.GPU = GPUSpec{GPU: g, GPUsPerNode: q.GPUsPerNode}
	switch q.Workload {
	case "agentx", "agentx-synthetic":
		a := DefaultAgentX()
		if err := ParseAgentXOverrides(&a, q.AgentX); err != nil {
			return nil, err
		}
		if err := agentXKeysApply(q.AgentX, q.Workload == "agentx"); err != nil {
			return nil, err
		}
		if err := checkReplayContext(r.Model, a.Replay.MaxContext); err != nil {
			return nil, err
		}
		r.Workload = Workload{Name: "agentx", AgentX: a}
		if q.Workload == "agentx" {
			if a.Replay.MaxContext == 0 {
				a.Replay.MaxContext = r.Model.MaxContext // InferenceX passes --max-context-length $MAX_MODEL_LEN
			}
			var tw *TraceWorkload
			if q.AgentXTrace != "" {
				if tw, err = LoadTraceWorkload(q.AgentXTrace, a.Replay); err != nil {
					reason := err.Error()
					if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Path == q.AgentXTrace {
						reason = pe.Err.Error()
					}
					reason = strings.TrimPrefix(reason, q.AgentXTrace+": ")
					return nil, &Error{Field: "AgentXTrace", Value: q.AgentXTrace, Reason: reason, Err: err}
				}
			} else {
				tw, err = NewTraceWorkload("", nil, a.Replay)
			}
			if err != nil {
				return nil, err
			}
			r.Workload.AgentX, r.Workload.Trace = a, tw
		}
	case "fixed", "":
		if strings.TrimSpace(q.AgentX) != "" {
			return nil, &Error{Field: "AgentX", Value: q.AgentX, Reason: "sets the agentx workloads; it does not apply to the fixed (ISL/OSL) workload"}
		}
		r.Workload = Workload{Name: "fixed", ISL: q.ISL, OSL: q.OSL, CachedFraction: q.Cached, RangeRatio: q.RangeRatio}
	default:
		return nil, &Error{Field: "Workload", Value: q.Workload, Reason: "want agentx, agentx-synthetic or fixed (fixed lengths)"}
	}
	if q.AgentXTrace != "" && q.Workload != "agentx" {
		return nil, &Error{Field: "AgentXTrace", Value: q.AgentXTrace, Reason: fmt.Sprintf("replays the agentx workload; it does not apply to workload %q", q.Workload)}
	}
	if err := r.Workload.Validate(); err != nil {
		return nil, err
	}
	if err := checkContext(r.Model, r.Workload); err != nil {
		return nil, err
	}
	var draft kernels.DType
	if q.DraftDType != "" {
		if draft, err = kernels.ParseDType(q.DraftDType); err != nil {
			return nil, &Error{Field: "DraftDType", Value: q.DraftDType, Reason: err.Error(), Err: err}
		}
	}
	var kv kernels.DType
	if q.KVDType != "" {
		if kv, err = kernels.ParseDType(q.KVDType); err != nil {
			return nil, &Error{Field: "KVDType", Value: q.KVDType, Reason: err.Error(), Err: err}
		}
		if kv != "fp8" && kv != "bf16" && kv != "fp16" {
			return nil, &Error{Field: "KVDType", Value: q.KVDType, Reason: "want fp8 or bf16"}
		}
	}
	var ssm kernels.DType
	if q.MambaSSMDType != "" {
		if ssm, err = kernels.ParseDType(q.MambaSSMDType); err != nil {
			return nil, &Error{Field: "MambaSSMDType", Value: q.MambaSSMDType, Reason: err.Error(), Err: err}
		}
		if ssm != kernels.FP32 && ssm != kernels.BF16 && ssm != kernels.FP16 {
			return nil, &Error{Field: "MambaSSMDType", Value: q.MambaSSMDType, Reason: "want bfloat16, float16 or float32"}
		}
	}
	ms := func(v float64) float64 {
		if v == -1 {
			return -1 // the default
		}
		return v / 1e3
	}
	for _, o := range []struct {
		field string
		v     float64
	}{{"SchedOverhead", q.SchedOverhead}, {"SpecOverhead", q.SpecOverhead}} {
		if o.v != -1 && !(o.v >= 0 && o.v <= 1000) {
			return nil, &Error{Field: o.field, Value: fmt.Sprint(o.v), Reason: "want 0..1000 ms, or -1 for the default"}
		}
	}
	if !(q.MoESkew >= 0 && q.MoESkew <= 4) {
		return nil, &Error{Field: "MoESkew", Value: fmt.Sprint(q.MoESkew), Reason: "want 0..4"}
	}
	var tables *kernels.AICImport
	if len(q.KernelTables) > 0 {
		if tables, err = kernels.ReadAICFiles(q.KernelTables); err == nil {
			err = tables.CheckDevice(g.Name)
		}
		if err != nil {
			return nil, &Error{Field: "KernelTables", Value: strings.Join(q.KernelTables, ","), Reason: err.Error(), Err: err}
		}
	}
	r.Engine = EngineConfig{Precision: r.Precision, DraftDType: draft, KVDType: kv, SSMDType: ssm, AllReduceFusion: q.AllReduceFusion, NoAllReduceFusion: q.NoAllReduceFusion, SpecV2: q.SpecV2, EngineName: q.Engine, KernelTables: tables,
		MoEBackend: q.MoEBackend, SpecMoEBackend: q.SpecMoEBackend,
		CUDAGraphMaxBS: q.CUDAGraphMaxBS, SchedOverhead: ms(q.SchedOverhead), SpecOverhead: ms(q.SpecOverhead), MoESkew: q.MoESkew}
	if q.Calibration != nil {
		e, err := q.Calibration.For(g.Name, q.Engine)
		if err != nil {
			return nil, err
		}
		p := e.Params
		r.Calibration, r.Engine.Calibration = e, &p
	}
	r.Target.Method = q.Method
	if r.Target.Method == "" {
		r.Target.Method = DefaultMethodFor(q.Engine)
	}
	if q.Histogram != "" && q.AL != 0 {
		return nil, &Error{Field: "Histogram", Value: q.Histogram, Reason: "a histogram and a fixed AL both set the acceptance: give one"}
	}
	if r.Target.Method == acceptance.Empirical && q.Histogram != "" {
		if r.Target.Hist, err = acceptance.LoadHistogram(q.Histogram); err != nil {
			return nil, err
		}
	} else if q.Histogram != "" {
		// Target.Check says why (a histogram applies to empirical only).
		r.Target.Hist = &acceptance.Histogram{Name: q.Histogram}
	}
	switch q.Spec {
	case "mtp", "":
	case "none":
	default:
		return nil, &Error{Field: "Spec", Value: q.Spec, Reason: "want mtp or none"}
	}
	r.GoldenKey = r.Model.GoldenKey
	if q.GoldenModel != "" {
		r.GoldenKey = q.GoldenModel
	}
	if r.GoldenKey == "" && curves != nil {
		// A checkpoint directory named like a hub model may have a curve.
		if k, err := curves.Resolve(r.Model.Name); err == nil {
			r.GoldenKey = k
		}
	}
	if q.AL != 0 {
		r.Target.AL = q.AL
	} else if q.Spec != "none" && r.Target.Hist == nil {
		set := curves
		if set == nil {
			return nil, &Error{Field: "AL", Reason: fmt.Sprintf("no golden curves given for %s", r.Model.Name)}
		}
		th, err := golden.ParseThinking(orDefault(q.Thinking, "on"))
		if err != nil {
			return nil, err
		}
		key := r.GoldenKey
		if key == "" {
			return nil, &Error{Field: "AL", Reason: fmt.Sprintf("no golden AL curve for %s (curves exist for %s)", r.Model.Name, strings.Join(set.Models(), ", "))}
		}
		if r.Target.Curve, err = set.Curve(key, th); err != nil {
			return nil, err
		}
	}
	// Without speculation a chain needs no curve; every other setting is
	// checked all the same.
	if q.Spec != "none" || r.Target.Method != acceptance.Chain {
		if err := r.Target.Check(); err != nil {
			return nil, err
		}
	}
	if q.Requests < 0 || q.Requests > 1_000_000 {
		return nil, &Error{Field: "Requests", Value: fmt.Sprint(q.Requests), Reason: "want 0..1000000"}
	}
	for _, o := range []struct {
		field string
		v     int
	}{{"MaxRunning", q.MaxRunning}, {"CUDAGraphMaxBS", q.CUDAGraphMaxBS}, {"Chunk", q.Chunk}} {
		if o.v < 0 || o.v > 1<<20 {
			return nil, &Error{Field: o.field, Value: fmt.Sprint(o.v), Reason: fmt.Sprintf("want 0..%d", 1<<20)}
		}
	}
	if err := q.Server.validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// checkContext refuses a fixed-length request that the server would refuse:
// SGLang's TokenizerManager._validate_one_request
// (python/sglang/srt/managers/tokenizer_manager.py) raises "Requested token
// count exceeds the model's maximum context length" when input tokens plus
// max_new_tokens reach context_len (max_position_embeddings unless
// --context-length says otherwise), and "The input ... is longer than the
// model's context length" when the input alone does. The agentx replay drops
// such traces itself (Replay.MaxContext).
func checkContext(m *Model, w Workload) error {
	if w.Name != "fixed" || m.MaxContext <= 0 {
		return nil
	}
	if total := w.ISL + w.OSL; total >= m.MaxContext {
		return &Error{Field: "ISL", Value: fmt.Sprint(w.ISL), Reason: fmt.Sprintf(
			"ISL %d + OSL %d = %d tokens reaches %s's context length %d (max_position_embeddings); SGLang refuses such a request (TokenizerManager._validate_one_request): want ISL + OSL < %d",
			w.ISL, w.OSL, total, m.Name, m.MaxContext, m.MaxContext)}
	}
	return nil
}

// checkReplayContext refuses an AgentX max-context above the model's
// context length: InferenceX passes --max-context-length $MAX_MODEL_LEN, and
// a longer trace kept by a larger setting would be refused by the server
// (SGLang TokenizerManager._validate_one_request,
// python/sglang/srt/managers/tokenizer_manager.py, as in checkContext).
func checkReplayContext(m *Model, maxContext int) error {
	if m.MaxContext <= 0 || maxContext <= m.MaxContext {
		return nil
	}
	return &Error{Field: "AgentX.max-context", Value: strconv.Itoa(maxContext), Reason: fmt.Sprintf(
		"above %s's context length %d (max_position_embeddings); SGLang refuses longer requests (TokenizerManager._validate_one_request): want at most %d",
		m.Name, m.MaxContext, m.MaxContext)}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// SpecFor is the speculative setting at draft length k: the target of
// [Resolved.Target] at k ([acceptance.Target.At]).
func (r *Resolved) SpecFor(k int) (Spec, error) {
	if k == 0 {
		return Spec{}, nil
	}
	p, err := r.Target.At(k)
	if err != nil {
		return Spec{Steps: k, Method: r.Target.Method}, err
	}
	return Spec{Steps: k, AL: p.AL, Method: r.Target.Method, Dist: p.Dist}, nil
}

// Scenario builds the scenario for a topology, concurrency and draft length.
func (r *Resolved) Scenario(t Topology, conc, k int) (Scenario, error) {
	spec, err := r.SpecFor(k)
	if err != nil {
		return Scenario{}, err
	}
	if r.engines == nil {
		r.engines = map[Parallel]*Engine{}
	}
	sc := Scenario{Model: r.Model, Topology: t, Engine: r.Engine, Workload: r.Workload, Conc: conc, Spec: spec,
		MaxRunning: r.Q.MaxRunning, Chunk: r.Q.Chunk, MemFraction: r.Q.MemFraction, Requests: r.Q.Requests, Seed: r.Q.Seed,
		Server: r.Q.Server, engines: r.engines, shared: r.shared}
	return sc, nil
}

// agentXKeysApply refuses, for the trace replay, the --agentx keys only
// the synthetic workload reads (its length and cache keys), which the
// replay would otherwise drop without a word.
func agentXKeysApply(s string, replay bool) error {
	if !replay {
		return nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, _, _ := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		var c agentx.Config
		if isReplay, _ := parseReplayKey(&c, k, "0"); !isReplay {
			return &Error{Field: "AgentX", Value: k, Reason: "applies to --workload agentx-synthetic only; the trace replay takes " + replayKeys}
		}
	}
	return nil
}
