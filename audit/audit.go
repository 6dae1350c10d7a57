package audit

import (
	"fmt"
	"math"
	"strconv"

	"github.com/specsim/specsim/audit/finding"
)

// Config is one audit request.
type Config struct {
	Options
	TP       []int // tensor-parallel sizes to size memory for
	EP, DP   int
	DPLMHead bool
	LogPath  string // engine log to compare with, "" for none
}

// MaxParallel bounds each parallel size (TP, EP, DP): 4096 GPUs is past any
// one serving deployment (a GB300 NVL72 rack holds 72), and the bound keeps
// every per-rank division and product exact.
const MaxParallel = 4096

// Validate checks the layout sizes and the options; its errors are
// [Error] values on the fields TP, EP and DP.
func (c Config) Validate() error {
	for _, tp := range c.TP {
		if tp < 1 || tp > MaxParallel {
			return &Error{Field: "TP", Value: strconv.Itoa(tp), Reason: fmt.Sprintf("want sizes from 1 to %d", MaxParallel)}
		}
	}
	for _, f := range []struct {
		field string
		v     int
	}{{"EP", c.EP}, {"DP", c.DP}} {
		if f.v < 1 || f.v > MaxParallel {
			return &Error{Field: f.field, Value: strconv.Itoa(f.v), Reason: fmt.Sprintf("want 1 to %d (past any one deployment)", MaxParallel)}
		}
	}
	return c.Options.Validate()
}

// MTPReport is the "mtp" object of the JSON report.
type MTPReport struct {
	Present      bool   `json:"present"`
	TensorCount  int    `json:"tensor_count"`
	ParamCount   int64  `json:"param_count"`
	Bytes        int64  `json:"bytes"`
	ShippedDType string `json:"shipped_dtype"`
	// ShippedInferred is set when no shard header was read (an index-only
	// checkpoint): ShippedDType is inferred from names and configs.
	ShippedInferred  bool   `json:"shipped_inferred"`
	ScaleTensorCount int    `json:"scale_tensor_count"`
	EffectiveDType   string `json:"effective_dtype"`
}

// MemoryRow is one "memory" entry for the most loaded rank. MTPBytes are
// the draft's parameter bytes, including the embedding and lm_head copies
// the engine allocates for it: the floor the engine must hold (MTPFloorGiB
// in GiB). MTPGiB is the allocator footprint of those parameters (CUDA
// caching-allocator segments, in GiB = 2^30 bytes, which SGLang prints as
// "GB"): an upper estimate of what a load log shows, since the allocator
// may place draft tensors in free blocks of the target's segments. ModelGiB
// is the parameter bytes of target plus draft, in GiB.
type MemoryRow struct {
	Engine      string  `json:"engine"`
	TP          int     `json:"tp"`
	EP          int     `json:"ep"`
	DP          int     `json:"dp"`
	MTPGiB      float64 `json:"mtp_gib"`
	MTPFloorGiB float64 `json:"mtp_floor_gib"`
	MTPBytes    int64   `json:"mtp_bytes"`
	ModelGiB    float64 `json:"model_gib"`
}

// Counterfactual is the draft's per-rank size, as the engine would report
// it, had it shipped in another precision (the module kinds the target quantizes, quantized the same way),
// so that a logged figure can tell which precision the engine loaded.
type Counterfactual struct {
	TP       int     `json:"tp"`
	EP       int     `json:"ep"`
	DP       int     `json:"dp"`
	BF16GiB  float64 `json:"bf16_gib"`
	FP8GiB   float64 `json:"fp8_gib"`
	NVFP4GiB float64 `json:"nvfp4_gib"`
	// Floors: the parameter bytes alone, in GiB.
	BF16FloorGiB  float64 `json:"bf16_floor_gib"`
	FP8FloorGiB   float64 `json:"fp8_floor_gib"`
	NVFP4FloorGiB float64 `json:"nvfp4_floor_gib"`
}

// LogMatch compares one logged load figure with the model.
type LogMatch struct {
	Line       int     `json:"line"`
	Engine     string  `json:"engine"`
	What       string  `json:"what"` // "draft", "target" or "model"
	LoggedGiB  float64 `json:"logged_gib"`
	TP         int     `json:"tp"`
	Precision  string  `json:"precision"`   // draft precision the figure supports
	ModeledGiB float64 `json:"modeled_gib"` // the allocator footprint (upper estimate)
	FloorGiB   float64 `json:"floor_gib"`   // the parameter bytes (what the engine must hold)
	// RelError is how far the logged figure sits outside the accepted band
	// [floor*(1-LogBelowFloor), footprint*(1+LogAboveFootprint)], relative
	// to the footprint; 0 inside it.
	RelError   float64 `json:"rel_error"`
	Consistent bool    `json:"consistent"` // inside the band
}

// Report is the result of an audit.
type Report struct {
	Dir       string `json:"dir"`
	Engine    string `json:"engine"`
	Family    string `json:"family"`
	QuantAlgo string `json:"quant_algo"`
	Tensors   int    `json:"tensor_count"`
	Shards    int    `json:"shard_count"`
	DataBytes int64  `json:"data_bytes"`
	BytesRead int64  `json:"bytes_read"` // configs, index and shard headers
	IndexOnly bool   `json:"index_only"`
	// InferredTensors counts tensors of absent shards inferred from the
	// index (a partly downloaded checkpoint; Checkpoint.MissingShards).
	InferredTensors int              `json:"inferred_tensors,omitempty"`
	MTP             MTPReport        `json:"mtp"`
	Findings        []Finding        `json:"findings"`
	Memory          []MemoryRow      `json:"memory"`
	Counterfactual  []Counterfactual `json:"draft_counterfactual"`
	Log             []LogMatch       `json:"log,omitempty"`

	// Details for the text and Markdown renderings.
	Checkpoint *Checkpoint `json:"-"`
	Draft      *MTP        `json:"-"`
	Effective  Effective   `json:"-"`
}

// Run audits a checkpoint directory. A *CorruptError means the input could
// not be read.
func Run(dir string, c Config) (*Report, error) {
	if c.Engine == "" {
		c.Engine = EngineSGLang
	}
	if c.Engine != EngineSGLang && c.Engine != EngineVLLM {
		return nil, fmt.Errorf("engine %q: want sglang or vllm", c.Engine)
	}
	if err := c.Options.Check(); err != nil {
		return nil, err
	}
	c.EP, c.DP = max(c.EP, 1), max(c.DP, 1)
	if len(c.TP) == 0 {
		c.TP = []int{1, 2, 4, 8}
	}
	cp, err := ReadCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	r := &Report{Dir: dir, Engine: c.Engine, Checkpoint: cp, Findings: cp.Findings,
		Family: familyOf(cp.Config), Tensors: len(cp.Tensors), Shards: len(cp.Shards), BytesRead: cp.BytesRead,
		IndexOnly: cp.IndexOnly, InferredTensors: cp.InferredTensors}
	if cp.Config.Quant != nil {
		r.QuantAlgo = cp.Config.Quant.Algo
	}
	for _, t := range cp.Tensors {
		r.DataBytes += t.Bytes()
	}
	modules := GroupModules(cp.Tensors)
	mtp, fs := DetectMTP(cp, modules)
	r.Draft = mtp
	r.Findings = append(r.Findings, fs...)
	r.Findings = append(r.Findings, quantFindings(cp.Config)...)

	r.Effective = EffectiveDraft(cp.Config, mtp, c.Options)
	r.MTP = MTPReport{
		Present: mtp.Present(), TensorCount: mtp.Summary.Tensors, ParamCount: mtp.Summary.Params,
		Bytes: mtp.Summary.Bytes, ShippedDType: mtp.Summary.DType, ScaleTensorCount: mtp.Summary.Scales,
		EffectiveDType: r.Effective.DType, ShippedInferred: cp.IndexOnly || inferredDraft(cp, mtp),
	}
	if !mtp.Present() {
		r.MTP.ShippedDType, r.MTP.EffectiveDType = PrecNone, PrecNone
	}
	r.Findings = append(r.Findings, coverageFindings(c, cp.Config, mtp, modules)...)
	r.Findings = append(r.Findings, precisionFindings(c, cp.Config, mtp, r.Effective)...)

	inDraft := map[*Module]bool{}
	for _, m := range mtp.Modules {
		inDraft[m] = true
	}
	sizer := newSizer(c.Engine, cp.Config, modules, inDraft, mtp, r.Effective)
	for _, tp := range c.TP {
		l := Layout{Engine: c.Engine, TP: tp, EP: c.EP, DP: c.DP, DPLMHead: c.DPLMHead}
		if err := l.Check(cp.Config); err != nil {
			r.Findings = append(r.Findings, Finding{Code: "layout-invalid", Severity: SeverityWarning,
				Message: fmt.Sprintf("%s cannot run tp=%d ep=%d dp=%d: %v; memory row skipped", c.Engine, tp, c.EP, c.DP, err)})
			continue
		}
		if pad := vocabSplitProblem(cp.Config.VocabSize, tp); pad != "" {
			r.Findings = append(r.Findings, Finding{Code: "vocab-not-divisible", Severity: SeverityWarning, Message: pad})
		}
		draft, reserved := sizer.draft(l, "")
		target := sizer.target(l)
		r.Memory = append(r.Memory, MemoryRow{Engine: c.Engine, TP: tp, EP: c.EP, DP: c.DP,
			MTPGiB: round4(reserved / GiB), MTPFloorGiB: round4(draft / GiB), MTPBytes: int64(math.Round(draft)), ModelGiB: round4((draft + target) / GiB)})
		if mtp.Present() {
			bf16F, bf16 := sizer.draft(l, PrecBF16)
			fp8F, fp8 := sizer.draft(l, PrecFP8)
			nvfp4F, nvfp4 := sizer.draft(l, PrecNVFP4)
			r.Counterfactual = append(r.Counterfactual, Counterfactual{TP: tp, EP: c.EP, DP: c.DP,
				BF16GiB: round4(bf16 / GiB), FP8GiB: round4(fp8 / GiB), NVFP4GiB: round4(nvfp4 / GiB),
				BF16FloorGiB: round4(bf16F / GiB), FP8FloorGiB: round4(fp8F / GiB), NVFP4FloorGiB: round4(nvfp4F / GiB)})
		}
	}
	if c.LogPath != "" {
		if err := r.compareLog(c); err != nil {
			return nil, err
		}
	}
	sortFindings(r.Findings)
	return r, nil
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

func vocabSplitProblem(vocab, tp int) string {
	if vocab <= 0 {
		return ""
	}
	padded := (vocab + VocabPadding - 1) / VocabPadding * VocabPadding
	if padded%tp != 0 {
		return fmt.Sprintf("vocab_size %d pads to %d, which does not split evenly over tp=%d; the engines' vocab-parallel embedding asserts divisibility", vocab, padded, tp)
	}
	return ""
}

func sortFindings(fs []Finding) { finding.Sort(fs) }

// inferredDraft reports whether a draft tensor sits in a shard that is
// absent, so its shipped precision is inferred from the index.
func inferredDraft(cp *Checkpoint, mtp *MTP) bool {
	if len(cp.MissingShards) == 0 {
		return false
	}
	missing := map[string]bool{}
	for _, s := range cp.MissingShards {
		missing[s] = true
	}
	for _, m := range mtp.Modules {
		for _, t := range m.Tensors {
			if missing[t.Shard] {
				return true
			}
		}
	}
	return false
}
