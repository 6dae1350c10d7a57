package audit

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/specsim/specsim/audit/enginelog"
	"github.com/specsim/specsim/audit/safetensors"
)

// Config is one audit request.
type Config struct {
	Options
	TP       []int // tensor-parallel sizes to size memory for
	EP, DP   int
	DPLMHead bool
	LogPath  string // engine log to compare with, "" for none
}

// MTPReport is the "mtp" object of the JSON report.
type MTPReport struct {
	Present          bool   `json:"present"`
	TensorCount      int    `json:"tensor_count"`
	ParamCount       int64  `json:"param_count"`
	Bytes            int64  `json:"bytes"`
	ShippedDType     string `json:"shipped_dtype"`
	ScaleTensorCount int    `json:"scale_tensor_count"`
	EffectiveDType   string `json:"effective_dtype"`
}

// MemoryRow is one "memory" entry for the most loaded rank. MTPBytes are
// the draft's parameter bytes, including the embedding and lm_head copies
// the engine allocates for it; MTPGiB is the device memory those
// parameters take as the engine reports it (CUDA caching-allocator
// segments, in GiB = 2^30 bytes, which SGLang prints as "GB"). ModelGiB is
// the parameter bytes of target plus draft, in GiB.
type MemoryRow struct {
	Engine   string  `json:"engine"`
	TP       int     `json:"tp"`
	EP       int     `json:"ep"`
	DP       int     `json:"dp"`
	MTPGiB   float64 `json:"mtp_gib"`
	MTPBytes int64   `json:"mtp_bytes"`
	ModelGiB float64 `json:"model_gib"`
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
}

// LogMatch compares one logged load figure with the model.
type LogMatch struct {
	Line       int     `json:"line"`
	Engine     string  `json:"engine"`
	What       string  `json:"what"` // "draft", "target" or "model"
	LoggedGiB  float64 `json:"logged_gib"`
	TP         int     `json:"tp"`
	Precision  string  `json:"precision"` // draft precision the figure supports
	ModeledGiB float64 `json:"modeled_gib"`
	RelError   float64 `json:"rel_error"`
}

// Report is the result of an audit.
type Report struct {
	Dir            string           `json:"dir"`
	Engine         string           `json:"engine"`
	Family         string           `json:"family"`
	QuantAlgo      string           `json:"quant_algo"`
	Tensors        int              `json:"tensor_count"`
	Shards         int              `json:"shard_count"`
	DataBytes      int64            `json:"data_bytes"`
	BytesRead      int64            `json:"bytes_read"` // configs, index and shard headers
	MTP            MTPReport        `json:"mtp"`
	Findings       []Finding        `json:"findings"`
	Memory         []MemoryRow      `json:"memory"`
	Counterfactual []Counterfactual `json:"draft_counterfactual"`
	Log            []LogMatch       `json:"log,omitempty"`

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
	c.EP, c.DP = max(c.EP, 1), max(c.DP, 1)
	if len(c.TP) == 0 {
		c.TP = []int{1, 2, 4, 8}
	}
	cp, err := ReadCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	r := &Report{Dir: dir, Engine: c.Engine, Checkpoint: cp, Findings: cp.Findings,
		Family: familyOf(cp.Config), Tensors: len(cp.Tensors), Shards: len(cp.Shards), BytesRead: cp.BytesRead}
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
		EffectiveDType: r.Effective.DType,
	}
	if !mtp.Present() {
		r.MTP.ShippedDType, r.MTP.EffectiveDType = PrecNone, PrecNone
	}
	r.Findings = append(r.Findings, coverageFindings(c, cp.Config, mtp, modules)...)
	r.Findings = append(r.Findings, precisionFindings(c, mtp, r.Effective)...)

	inDraft := map[*Module]bool{}
	for _, m := range mtp.Modules {
		inDraft[m] = true
	}
	sizer := newSizer(c.Engine, cp.Config, modules, inDraft, mtp, r.Effective)
	for _, tp := range c.TP {
		l := Layout{Engine: c.Engine, TP: tp, EP: c.EP, DP: c.DP, DPLMHead: c.DPLMHead}
		if err := l.Check(cp.Config); err != nil {
			r.Findings = append(r.Findings, Finding{Code: "layout_invalid", Severity: SeverityWarning,
				Message: fmt.Sprintf("%s cannot run tp=%d ep=%d dp=%d: %v; memory row skipped", c.Engine, tp, c.EP, c.DP, err)})
			continue
		}
		if pad := vocabSplitProblem(cp.Config.VocabSize, tp); pad != "" {
			r.Findings = append(r.Findings, Finding{Code: "vocab_not_divisible", Severity: SeverityWarning, Message: pad})
		}
		draft, reserved := sizer.draft(l, "")
		target := sizer.target(l)
		r.Memory = append(r.Memory, MemoryRow{Engine: c.Engine, TP: tp, EP: c.EP, DP: c.DP,
			MTPGiB: round4(reserved / GiB), MTPBytes: int64(math.Round(draft)), ModelGiB: round4((draft + target) / GiB)})
		if mtp.Present() {
			_, bf16 := sizer.draft(l, PrecBF16)
			_, fp8 := sizer.draft(l, PrecFP8)
			_, nvfp4 := sizer.draft(l, PrecNVFP4)
			r.Counterfactual = append(r.Counterfactual, Counterfactual{TP: tp, EP: c.EP, DP: c.DP,
				BF16GiB: round4(bf16 / GiB), FP8GiB: round4(fp8 / GiB), NVFP4GiB: round4(nvfp4 / GiB)})
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

func sortFindings(fs []Finding) {
	rank := map[Severity]int{SeverityError: 0, SeverityWarning: 1, SeverityInfo: 2}
	sort.SliceStable(fs, func(i, j int) bool { return rank[fs[i].Severity] < rank[fs[j].Severity] })
}

func quantFindings(cfg *ModelConfig) []Finding {
	var out []Finding
	for _, d := range Disagreements(cfg.HFQuant, cfg.ConfigQuant) {
		out = append(out, Finding{Code: "quant_config_disagree", Severity: SeverityWarning,
			Message: d + "; SGLang prefers config.json's quantization_config, vLLM reads hf_quant_config.json, so the engines can build different layers. Make the two files agree"})
	}
	return out
}

var (
	layerNum  = regexp.MustCompile(`\.layers\.[0-9]+\.`)
	expertNum = regexp.MustCompile(`\.experts\.[0-9]+\.`)
)

// pattern generalises a module name for grouping findings.
func pattern(name string) string {
	name = layerNum.ReplaceAllString(name, ".layers.N.")
	return expertNum.ReplaceAllString(name, ".experts.E.")
}

type group struct {
	names []string
	rule  string
	prec  string
	eff   string
}

// coverageFindings checks the exclude list against what ships, module by
// module, under the chosen engine's matching and overrides.
func coverageFindings(c Config, cfg *ModelConfig, mtp *MTP, modules []*Module) []Finding {
	q := cfg.Quant
	if q == nil || q.Algo == "" {
		return nil
	}
	other := EngineVLLM
	if c.Engine == EngineVLLM {
		other = EngineSGLang
	}
	inDraft := map[*Module]bool{}
	for _, m := range mtp.Modules {
		inDraft[m] = true
	}
	gaps := map[string]*group{}       // unquantized, not covered, engine builds it quantized
	overridden := map[string]*group{} // not covered, engine override saves it
	wrong := map[string]*group{}      // quantized but excluded
	var order []string
	add := func(set map[string]*group, key string, m *Module, v Verdict) {
		g := set[key]
		if g == nil {
			g = &group{rule: v.Rule, prec: m.Precision, eff: v.Effective}
			set[key] = g
			order = append(order, key)
		}
		g.names = append(g.names, m.Name)
	}
	for _, m := range modules {
		if !m.Linear() {
			continue
		}
		v := verdict(c.Engine, cfg, mtp, inDraft[m], m, c.Options)
		var set map[string]*group
		switch {
		case m.Quantized() && v.LoadFails:
			set = wrong
		case !m.Quantized() && v.LoadFails:
			set = gaps
		case !m.Quantized() && v.Rule != "" && !v.Lowered && !Excluded(c.Engine, q, m.Name):
			set = overridden
		default:
			continue
		}
		key := pattern(m.Name)
		if inDraft[m] && !strings.Contains(m.Name, ".experts.") {
			key = m.Name // MTP modules are few; name each one
		}
		add(set, key, m, v)
	}
	var out []Finding
	seen := map[string]bool{}
	for _, key := range order {
		if seen[key] {
			continue
		}
		seen[key] = true
		if g := gaps[key]; g != nil {
			out = append(out, Finding{Code: codeFor("exclude_gap", key), Severity: SeverityError,
				Message: fmt.Sprintf("%s %s %s but no exclude pattern covers it under %s's matching, so %s builds it %s and cannot load the %s weight (an NVFP4 layer expects packed U8 [out, in/2]). Add a pattern such as %q to exclude_modules in hf_quant_config.json and to quantization_config.ignore in config.json",
					describe(g.names), ships(g.names), g.prec, c.Engine, c.Engine, g.eff, g.prec, suggestPattern(g.names))})
		}
		if g := wrong[key]; g != nil {
			out = append(out, Finding{Code: codeFor("exclude_wrong", key), Severity: SeverityError,
				Message: fmt.Sprintf("%s %s quantized (%s) but %s leaves it unquantized (%s), so the packed weight and its scales do not fit the layer. Remove the exclude pattern that matches it",
					describe(g.names), ships(g.names), g.prec, c.Engine, excludedBy(g.rule))})
		}
		if g := overridden[key]; g != nil {
			sev := SeverityWarning
			if isRouter(g.names[0]) {
				sev = SeverityInfo
			}
			otherCovered := Excluded(other, q, g.names[0])
			msg := fmt.Sprintf("%s %s %s and no exclude pattern covers it (vLLM fnmatch: %s; SGLang glob/regex: %s). %s loads it as %s only because %s",
				describe(g.names), ships(g.names), g.prec, yesNo(Excluded(EngineVLLM, q, g.names[0])), yesNo(Excluded(EngineSGLang, q, g.names[0])),
				c.Engine, g.eff, g.rule)
			if strings.HasSuffix(g.names[0], "mtp.fc") {
				msg += "; vLLM builds before PR #38832 (2026-04-02), modelopt_mixed-unaware patches and other ModelOpt consumers create an NVFP4 layer for it and fail with a weight shape mismatch"
			}
			if !otherCovered {
				msg += fmt.Sprintf(". Add %q to exclude_modules (hf_quant_config.json) and ignore (config.json) so no engine depends on an override", suggestPattern(g.names))
			}
			out = append(out, Finding{Code: codeFor("exclude_gap_overridden", key), Severity: sev, Message: msg})
		}
	}
	return out
}

func codeFor(base, key string) string {
	if strings.HasPrefix(key, "mtp.") || strings.Contains(key, "mtp") {
		return "mtp_" + base
	}
	return base
}

func yesNo(b bool) string {
	if b {
		return "covered"
	}
	return "not covered"
}

func excludedBy(rule string) string {
	if rule == "" {
		return "an exclude pattern matches it"
	}
	return rule
}

func ships(names []string) string {
	if len(names) == 1 {
		return "ships"
	}
	return "ship"
}

// describe names a group of modules: the name itself, or the pattern with
// a count and an example.
func describe(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return fmt.Sprintf("%d modules %s (e.g. %s)", len(names), pattern(names[0]), names[0])
}

// suggestPattern proposes a ModelOpt-style prefix wildcard.
func suggestPattern(names []string) string {
	n := names[0]
	if strings.HasPrefix(n, "mtp.") {
		return "mtp*"
	}
	p := pattern(n)
	if len(names) > 1 {
		return strings.ReplaceAll(strings.ReplaceAll(p, ".layers.N.", ".layers.*."), ".experts.E.", ".experts.*.")
	}
	return n
}

func precisionFindings(c Config, mtp *MTP, e Effective) []Finding {
	if !mtp.Present() {
		return nil
	}
	var out []Finding
	lowered := 0
	for _, v := range e.Verdicts {
		if v.Lowered {
			lowered++
		}
	}
	if lowered > 0 {
		out = append(out, Finding{Code: "draft_precision_lowered", Severity: SeverityError,
			Message: fmt.Sprintf("%s serves %d draft modules below their shipped %s precision (%s, effective %s). AgentX requires the draft at its shipped precision: remove the setting, including where a base recipe sets it", c.Engine, lowered, mtp.Summary.DType, e.Reason, e.DType)})
	}
	if c.Engine == EngineSGLang && c.Options.envOn(EnvFP8NextNMoE) && c.EP <= 1 && (mtp.Family == FamilyDeepSeek || mtp.Family == FamilyGLM) {
		out = append(out, Finding{Code: "fp8_nextn_moe_needs_ep", Severity: SeverityError,
			Message: EnvFP8NextNMoE + "=1 selects the deep_gemm runner with the DeepEP all-to-all for the NextN MoE, which SGLang refuses with ep_size 1"})
	}
	if e.FellBack {
		out = append(out, Finding{Code: "draft_moe_backend_fallback", Severity: SeverityInfo,
			Message: fmt.Sprintf("draft MoE experts are %s: %s", e.Experts, e.BackendNote)})
	}
	sev := SeverityInfo
	msg := fmt.Sprintf("draft ships %s and %s serves it as %s (%s)", mtp.Summary.DType, c.Engine, e.DType, e.Reason)
	if e.DType != mtp.Summary.DType && lowered == 0 {
		sev = SeverityWarning
	}
	out = append(out, Finding{Code: "draft_precision", Severity: sev, Message: msg})
	return out
}

// sizer computes per-rank bytes of target and draft.
type sizer struct {
	cfg       *ModelConfig
	place     Placement
	draftMods []*Module
	eff       map[*Module]string
	mtp       *MTP
	quantRole map[Role]bool
	embed     *Module // target embedding, for drafts that allocate their own copy
	lmHead    *Module
	// The target is reduced to bytes per (role, is-matrix): per-rank sizes
	// are linear in bytes for every role but the vocab-parallel ones,
	// which keep their row counts.
	targetSums  map[roleKey]int64
	targetVocab []vocabTensor
}

type roleKey struct {
	role   Role
	matrix bool
}

type vocabTensor struct {
	role  Role
	rows  int64
	bytes int64
}

func newSizer(engine string, cfg *ModelConfig, modules []*Module, inDraft map[*Module]bool, mtp *MTP, e Effective) *sizer {
	s := &sizer{cfg: cfg, mtp: mtp, eff: map[*Module]string{}, quantRole: map[Role]bool{}, targetSums: map[roleKey]int64{}}
	s.place = Placement{Experts: cfg.NumExperts, KVHeads: cfg.NumKeyValueHeads,
		EmbedOverAttnTP: mtp.Family == FamilyDeepSeek || mtp.Family == FamilyGLM}
	for _, v := range e.Verdicts {
		s.eff[v.Module] = v.Effective
	}
	for _, m := range modules {
		if inDraft[m] {
			s.draftMods = append(s.draftMods, m)
			continue
		}
		for i := range m.Tensors {
			t := &m.Tensors[i]
			r := roleOf(engine, t, false)
			if (r == RoleEmbed || r == RoleLMHead) && len(t.Shape) > 0 {
				s.targetVocab = append(s.targetVocab, vocabTensor{r, t.Shape[0], t.Bytes()})
				continue
			}
			s.targetSums[roleKey{r, len(t.Shape) >= 2}] += t.Bytes()
		}
		if m.Weight == nil {
			continue
		}
		r := roleOf(engine, m.Weight, false)
		switch r {
		case RoleEmbed:
			if s.embed == nil && !strings.Contains(m.Name, "visual") {
				s.embed = m
			}
		case RoleLMHead:
			if s.lmHead == nil {
				s.lmHead = m
			}
		}
		if m.Linear() && m.Quantized() {
			s.quantRole[r] = true
		}
	}
	if len(s.quantRole) == 0 {
		for _, r := range []Role{RoleExpert, RoleAttention, RoleKV, RoleDense} {
			s.quantRole[r] = true
		}
	}
	return s
}

var matrixShape, vectorShape = []int64{1, 1}, []int64{1}

func (s *sizer) target(l Layout) float64 {
	var sum float64
	for k, b := range s.targetSums {
		shape := vectorShape
		if k.matrix {
			shape = matrixShape
		}
		sum += s.place.RankBytes(l, k.role, shape, b)
	}
	for _, v := range s.targetVocab {
		sum += s.place.RankBytes(l, v.role, []int64{v.rows, 1}, v.bytes)
	}
	return sum
}

// draft sizes the draft on one rank: bytes of its parameters, and the
// memory the engine reports for them: for SGLang the CUDA caching-allocator
// segments ("mem usage" is the drop in free device memory), for vLLM the
// allocated bytes. prec "" uses each module's effective precision;
// otherwise the module kinds the target quantizes are stored in prec and
// the rest in BF16.
func (s *sizer) draft(l Layout, prec string) (bytes, reserved float64) {
	if !s.mtp.Present() {
		return 0, 0
	}
	byParam := map[string]float64{}
	ownEmbed, ownHead := false, false
	for _, m := range s.draftMods {
		var r Role
		if m.Weight != nil {
			r = roleOf(l.Engine, m.Weight, true)
		}
		if r == RoleEmbed {
			ownEmbed = true
		}
		if r == RoleLMHead {
			ownHead = true
		}
		if l.Engine == EngineVLLM && s.mtp.Kind != MTPDraftDir && (r == RoleEmbed || r == RoleLMHead) {
			continue // vLLM shares the target's embedding and lm_head with the MTP draft
		}
		p := s.eff[m]
		if prec != "" && m.Linear() {
			p = PrecBF16
			if s.quantRole[r] && !isRouter(m.Name) {
				p = prec
			}
		}
		byParam[engineParam(m.Name)] += s.place.moduleRankBytes(l, m, p, true)
	}
	// SGLang drafts construct their own vocab-parallel embedding and lm_head
	// (loaded from the target's tensors, shared only after loading), so the
	// load-time figure includes them; unquantized, as the draft is built.
	if l.Engine == EngineSGLang && s.mtp.Kind == MTPPrefixed {
		if !ownEmbed && s.embed != nil {
			byParam["draft.embed_tokens"] += s.bf16Vocab(l, RoleEmbed, s.embed)
		}
		if !ownHead && !s.cfg.TieWordEmbeddings {
			src := s.lmHead
			if src == nil {
				src = s.embed
			}
			if src != nil {
				byParam["draft.lm_head"] += s.bf16Vocab(l, RoleLMHead, src)
			}
		}
	}
	for _, b := range byParam {
		bytes += b
	}
	if l.Engine == EngineVLLM {
		// vLLM's "Model loading took" is torch.cuda allocated memory
		// (DeviceMemoryProfiler), not reserved segments.
		return bytes, bytes
	}
	return bytes, float64(allocatorFootprint(paramSizes(byParam)))
}

func (s *sizer) bf16Vocab(l Layout, r Role, m *Module) float64 {
	rows, cols := matrixDims(m)
	if m.Weight != nil && len(m.Weight.Shape) >= 2 && !m.Quantized() {
		rows, cols = m.Weight.Shape[0], m.Weight.Shape[1]
	}
	return s.place.RankBytes(l, r, []int64{rows, cols}, 2*rows*cols)
}

func (r *Report) compareLog(c Config) error {
	f, err := safetensors.OpenRegular(c.LogPath)
	if err != nil {
		return &CorruptError{Path: c.LogPath, Err: err}
	}
	defer f.Close()
	loads, err := enginelog.ParseLoad(f)
	if err != nil {
		return &CorruptError{Path: c.LogPath, Err: err}
	}
	if len(loads) == 0 {
		r.Findings = append(r.Findings, Finding{Code: "log_no_load_lines", Severity: SeverityWarning,
			Message: fmt.Sprintf("%s has no SGLang \"Load weight end ... mem usage=\" or vLLM \"Model loading took\" lines", c.LogPath)})
		return nil
	}
	cf := map[int]Counterfactual{}
	for _, x := range r.Counterfactual {
		cf[x.TP] = x
	}
	mem := map[int]MemoryRow{}
	for _, m := range r.Memory {
		mem[m.TP] = m
	}
	for _, l := range loads {
		best := LogMatch{Line: l.Line, Engine: l.Engine, LoggedGiB: l.GiB, RelError: math.Inf(1)}
		consider := func(what string, tp int, prec string, modeled float64) {
			if modeled <= 0 {
				return
			}
			e := math.Abs(l.GiB-modeled) / modeled
			if e < best.RelError {
				best.What, best.TP, best.Precision, best.ModeledGiB, best.RelError = what, tp, prec, modeled, e
			}
		}
		for _, tp := range c.TP {
			x, ok := cf[tp]
			m := mem[tp]
			switch {
			case l.Engine == "sglang" && l.Draft && ok:
				consider("draft", tp, PrecBF16, x.BF16GiB)
				consider("draft", tp, PrecFP8, x.FP8GiB)
				consider("draft", tp, PrecNVFP4, x.NVFP4GiB)
			case l.Engine == "sglang" && !l.Draft:
				consider("target", tp, "", m.ModelGiB-m.MTPGiB)
			case l.Engine == "vllm" && ok:
				target := m.ModelGiB - m.MTPGiB
				consider("model", tp, PrecBF16, target+x.BF16GiB)
				consider("model", tp, PrecFP8, target+x.FP8GiB)
				consider("model", tp, PrecNVFP4, target+x.NVFP4GiB)
			case l.Engine == "vllm":
				consider("model", tp, "", m.ModelGiB)
			}
		}
		if math.IsInf(best.RelError, 1) {
			continue
		}
		best.RelError = round4(best.RelError)
		r.Log = append(r.Log, best)
		if best.Precision != "" && best.What != "target" {
			sev := SeverityInfo
			msg := fmt.Sprintf("%s line %d logs %.2f GiB: closest to a %s draft at tp=%d (modeled %.2f GiB, %.1f%% off)", c.LogPath, l.Line, l.GiB, best.Precision, best.TP, best.ModeledGiB, 100*best.RelError)
			if best.Precision != r.MTP.ShippedDType && r.MTP.ShippedDType != PrecMixed {
				sev = SeverityWarning
				msg += fmt.Sprintf("; the draft ships %s, so the engine appears to have quantized it", r.MTP.ShippedDType)
			}
			r.Findings = append(r.Findings, Finding{Code: "log_draft_precision", Severity: sev, Message: msg})
		}
	}
	return nil
}
