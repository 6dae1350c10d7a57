package recipe

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/specsim/specsim/audit/finding"
)

// Severity and Finding are the shared types of package audit/finding.
type (
	Severity = finding.Severity
	Finding  = finding.Finding
)

// Severities, most serious first.
const (
	SeverityError   = finding.Error
	SeverityWarning = finding.Warning
	SeverityInfo    = finding.Info
)

// Finding codes. They are stable: scripts and reviewers match on them.
const (
	CodeModelUnknown         = "model-unknown"
	CodeSimAccLenMismatch    = "sim-acc-len-mismatch"
	CodeSimAccMethod         = "sim-acc-method"
	CodeSimAccTokenMode      = "sim-acc-token-mode"
	CodeSimAccIncomplete     = "sim-acc-incomplete"
	CodeRealDraftTokenTopK   = "real-draft-token-topk"
	CodeNumDraftTokens       = "num-draft-tokens-not-k-plus-1"
	CodeDraftLengthDiffers   = "draft-length-differs"
	CodeDraftLengthRange     = "draft-length-out-of-range"
	CodeDraftLengthMissing   = "draft-length-missing"
	CodeDraftQuantization    = "draft-quantization"
	CodeFP8NextNMoE          = "fp8-nextn-moe"
	CodeCUDAGraphBelowCap    = "cuda-graph-below-running-cap"
	CodeSimAccRecipeWide     = "sim-acc-recipe-wide"
	CodeSimAccNonSpecRole    = "sim-acc-on-non-speculative-role"
	CodeSpecAlgorithmClash   = "spec-algorithm-conflict"
	CodeSimAccWrongEngine    = "sim-acc-wrong-engine"
	CodeGenerationNotSpec    = "generation-role-not-speculative"
	CodeNotAgentic           = "not-agentic"
	CodeDuplicateKey         = "duplicate-key"
	CodeSimAccMissing        = "sim-acc-missing"
	CodeTRTFractionalForced  = "trt-fractional-two-model"
	CodeNoRoles              = "recipe-no-roles"
	alTolerance              = 0.005 // golden values carry two decimals
	sglangLen                = "SGLANG_SIMULATE_ACC_LEN"
	sglangMethod             = "SGLANG_SIMULATE_ACC_METHOD"
	sglangTokenMode          = "SGLANG_SIMULATE_ACC_TOKEN_MODE"
	trtForced                = "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"
	tilertLen                = "TILERT_SIMULATE_ACC_LEN"
	tilertMethod             = "TILERT_SIMULATE_ACC_METHOD"
	fp8NextNEnv              = "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"
	agentxMethod             = "match-expected"
	agentxTokenMode          = "real-draft-token"
	vllmSyntheticMethod      = "synthetic"
	atomAcceptanceLengthFlag = "spec-decode-acceptance-length"
)

// simKeys are the environment keys synthetic acceptance owns.
var simKeys = []string{sglangLen, sglangMethod, sglangTokenMode, trtForced, tilertLen, tilertMethod}

// GoldenCurve is the part of a golden curve the checks need.
type GoldenCurve struct {
	Model    string    // the curve's model key
	Thinking string    // "on" or "off"
	Source   string    // file it came from
	AL       []float64 // AL[k-1] = golden AL at draft length k
}

// Curves finds golden curves. The command line backs it with package
// golden; tests back it with a table.
type Curves interface {
	// Curve resolves a name (model key, InferenceX curve name such as
	// "qwen3.5_mtp", file prefix or hub name) and returns its curve for
	// the thinking mode.
	Curve(name, thinking string) (*GoldenCurve, error)
	// Prefix returns the InferenceX model prefix ("qwen3.5", "dsv4") of
	// the model a name resolves to.
	Prefix(name string) (string, error)
}

// Options steer Check.
type Options struct {
	Curves Curves
	// Model overrides the model names found in the recipe.
	Model string
	// Thinking is "on", "off", or "" for the default: on (AgentX replays
	// agentic traces with thinking on).
	Thinking string
}

// RoleReport is what synthetic acceptance gives one role.
type RoleReport struct {
	Role        string   `json:"role"`
	Engine      string   `json:"engine"`
	DraftLength *int     `json:"draft_length"`
	ExpectedAL  *float64 `json:"expected_al"`
	// Env is the injection the role gets: environment variables for
	// SGLang, TensorRT-LLM and TileRT; for vLLM and ATOM, which take it as
	// arguments, keys are "args.<flag>[.<field>]". Schema-1 recipes get no
	// injection: Env is then the values the recipe sets by hand, which is
	// what runs, and Injected is false.
	Env      map[string]string `json:"env"`
	Injected bool              `json:"injected"`
	// Spec is the role's speculative settings as the text table shows
	// them (nil: no speculative decoding).
	Spec *SpecReport `json:"spec,omitempty"`

	role *Role
}

// SpecReport is a role's speculative settings after inheritance: the
// algorithm, top-k, draft tokens per verify, the draft's quantization
// ("" = as the target's) and its MoE runner ("" = the engine's default).
type SpecReport struct {
	Algorithm         string `json:"algorithm"`
	TopK              int    `json:"topk,omitempty"`
	NumDraftTokens    int    `json:"num_draft_tokens,omitempty"`
	DraftQuantization string `json:"draft_quantization,omitempty"`
	DraftMoERunner    string `json:"draft_moe_runner,omitempty"`
}

// VariantReport is one variant's roles and findings.
type VariantReport struct {
	Name     string       `json:"name"`
	Roles    []RoleReport `json:"roles"`
	Findings []Finding    `json:"findings"`

	variant *Variant
	curve   *GoldenCurve
	// asWritten: a schema-1 recipe, which runs as written (nothing
	// injects the expected AL).
	asWritten bool
}

// Report is the result of checking one file.
type Report struct {
	File     string          `json:"file"`
	Variants []VariantReport `json:"variants"`
	Findings []Finding       `json:"findings"`
}

// Errors counts error-severity findings, file-level and per variant.
func (r *Report) Errors() int {
	n := 0
	count := func(fs []Finding) {
		for _, f := range fs {
			if f.Severity == SeverityError {
				n++
			}
		}
	}
	count(r.Findings)
	for _, v := range r.Variants {
		count(v.Findings)
	}
	return n
}

// Variant returns the resolved variant behind a report entry.
func (vr *VariantReport) Variant() *Variant { return vr.variant }

// Curve returns the golden curve the variant was checked against, or nil.
func (vr *VariantReport) Curve() *GoldenCurve { return vr.curve }

// Resolved returns the resolved role behind a report entry.
func (rr *RoleReport) Resolved() *Role { return rr.role }

// FormatAL writes an AL the way InferenceX passes it (Python's "%g"):
// 4.80 becomes "4.8", 3.39 stays "3.39".
func FormatAL(x float64) string {
	return strconv.FormatFloat(x, 'g', 6, 64)
}

// Check resolves expected injections and runs every check on a recipe;
// each list of findings is most serious first (finding.Sort, stable).
func Check(r *Recipe, opt Options) *Report {
	rep := &Report{File: r.File, Findings: []Finding{}}
	for _, d := range r.Duplicates {
		rep.Findings = append(rep.Findings, Finding{Code: CodeDuplicateKey, Severity: SeverityWarning,
			Message: fmt.Sprintf("line %d: key %q is given twice in one mapping; srt-slurm (PyYAML) keeps the last value silently: remove one", d.Line, d.Key)})
	}
	for _, v := range r.Variants {
		vr := checkVariant(v, opt, r.Schema)
		if len(v.Roles) == 0 {
			vr.Findings = append([]Finding{noRoles(r, v)}, vr.Findings...)
		}
		finding.Sort(vr.Findings)
		rep.Variants = append(rep.Variants, vr)
	}
	finding.Sort(rep.Findings)
	return rep
}

// noRoles is the error for a variant that deploys nothing: srtctl
// (core/config.py expand of base + override_*) validates each merged variant
// as a whole job config, so one without a backend or roles is refused
// there, and a check that finds nothing in it must not read as a pass.
func noRoles(r *Recipe, v *Variant) Finding {
	why := "no backend or roles"
	if r.EmptyBase {
		why = "no backend or roles (base is empty and nothing adds them)"
	}
	return Finding{Code: CodeNoRoles, Severity: SeverityError,
		Message: fmt.Sprintf("%s: variant %s defines %s: there is no server to check or deploy. Give base the full recipe (model, backend or roles, benchmark) that the overrides change", r.File, v.Name, why)}
}

type checker struct {
	v        *Variant
	opt      Options
	findings []Finding
	// noInjection: schema-1 recipes run as written; InferenceX's
	// synthetic-acceptance step injects into schema-2 roles only.
	noInjection bool
	// loc is the Location of the findings add records: "roles.NAME"
	// while a role is checked.
	loc string
}

// add records a finding at c.loc, the role being checked ("" for the
// whole variant).
func (c *checker) add(code string, sev Severity, format string, a ...any) {
	c.addAt(c.loc, code, sev, format, a...)
}

// addAt records a finding at loc, the key path it is about.
func (c *checker) addAt(loc, code string, sev Severity, format string, a ...any) {
	c.findings = append(c.findings, Finding{Code: code, Severity: sev, Message: fmt.Sprintf(format, a...), Location: loc})
}

// thinkingMode is --thinking, else on: AgentX replays agentic traces with
// thinking on.
func thinkingMode(opt Options) string {
	if opt.Thinking != "" {
		return opt.Thinking
	}
	return "on"
}

func checkVariant(v *Variant, opt Options, schema int) VariantReport {
	c := &checker{v: v, opt: opt, noInjection: schema == 1}
	vr := VariantReport{Name: v.Name, variant: v, asWritten: c.noInjection}
	thinking := thinkingMode(opt)

	anySpec := false
	for _, r := range v.Roles {
		if r.Spec != nil {
			anySpec = true
		}
	}
	gen := v.Generation()
	var curve *GoldenCurve
	if anySpec {
		if !v.Agentic && opt.Thinking == "" {
			c.add(CodeNotAgentic, SeverityInfo,
				"the benchmark does not look agentic (no agentic command, trace loader or IS_AGENTIC); AgentX applies synthetic acceptance to agentic runs only. Expected values assume thinking on: pass --thinking to choose")
		}
		var spec *Spec
		if gen != nil {
			spec = gen.Spec
		}
		curve = c.findCurve(thinking, spec, gen)
		vr.curve = curve
	}

	// The AL target comes from the generation role's draft length.
	var target *float64
	if anySpec && gen != nil && gen.Spec == nil {
		c.addAt("roles."+gen.Name, CodeGenerationNotSpec, SeverityWarning,
			"roles.%s runs no speculative decoding but other roles do; AgentX derives the AL from the generation role, so no role gets synthetic acceptance: add the speculative flags to roles.%s or drop them elsewhere", gen.Name, gen.Name)
	}
	if gen != nil && gen.Spec != nil {
		c.loc = "roles." + gen.Name
		target = c.draftLengthAL(gen, curve)
	}
	for _, r := range v.Roles {
		if r.Spec != nil && r != gen {
			c.loc = "roles." + r.Name
			c.draftLengthAL(r, curve) // range check only
		}
	}
	c.loc = ""

	for _, r := range v.Roles {
		rr := RoleReport{Role: r.Name, Engine: r.Engine, Env: map[string]string{}, role: r}
		if r.Spec != nil {
			rr.Spec = &SpecReport{Algorithm: r.Spec.Algorithm, TopK: r.Spec.TopK, NumDraftTokens: r.Spec.NumDraftTokens,
				DraftQuantization: r.Spec.DraftQuantization, DraftMoERunner: r.Spec.MoERunner}
			if r.Spec.DraftLength > 0 {
				k := r.Spec.DraftLength
				rr.DraftLength = &k
			}
			if target != nil {
				al := *target
				rr.ExpectedAL = &al
				if c.noInjection {
					rr.Env = handSet(r)
				} else {
					rr.Env, rr.Injected = injection(r, al), true
				}
			}
		}
		vr.Roles = append(vr.Roles, rr)
		c.loc = "roles." + r.Name
		c.checkRole(r, target, curve)
		c.loc = ""
	}
	c.checkDraftLengthsAgree()
	c.checkRecipeWide()
	c.checkFP8NextN()
	c.checkProvenance()
	vr.Findings = c.findings
	if vr.Findings == nil {
		vr.Findings = []Finding{}
	}
	if vr.Roles == nil {
		vr.Roles = []RoleReport{}
	}
	return vr
}

// findCurve maps the recipe's model names (or --model) to a golden curve.
//
// Without a curve AgentX has no AL to inject, an error; a generation role
// that forces its acceptance itself (handSetAL) makes it a warning: the
// run is simulated at the recipe's AL, which no golden value confirms.
func (c *checker) findCurve(thinking string, spec *Spec, gen *Role) *GoldenCurve {
	if c.opt.Curves == nil {
		c.add(CodeModelUnknown, SeverityError, "no golden curves loaded; cannot work out the expected AL")
		return nil
	}
	names := c.v.ModelNames
	if c.opt.Model != "" {
		names = []string{c.opt.Model}
	}
	var errs []string
	for _, n := range candidateNames(names) {
		// InferenceX picks the curve file from the model prefix and the
		// speculative method; try that curve first, then the model's own.
		if prefix, err := c.opt.Curves.Prefix(n); err == nil && spec != nil {
			if id := curveID(prefix, spec); id != "" {
				if cv, err := c.opt.Curves.Curve(id, thinking); err == nil {
					return cv
				}
			}
		}
		cv, err := c.opt.Curves.Curve(n, thinking)
		if err == nil {
			return cv
		}
		errs = append(errs, err.Error())
	}
	if len(names) == 0 {
		c.add(CodeModelUnknown, SeverityError, "the recipe names no model (served-model-name, model path); pass --model")
		return nil
	}
	msg := fmt.Sprintf("no golden curve for model %s with thinking %s", strings.Join(names, ", "), thinking)
	if al, where, ok := handSetAL(gen); ok {
		// The recipe's own AL is what runs; another model's key would
		// check it against the wrong curve.
		c.add(CodeModelUnknown, SeverityWarning, "%s; %s sets the AL %s itself, so the run is simulated at it, but no golden value confirms it", msg, where, FormatAL(al))
		return nil
	}
	msg += ": pass --model with the golden model key or hub name of this model, if it has a curve"
	if len(errs) > 0 {
		msg += " (" + errs[0] + ")" // the most specific name's
	}
	c.add(CodeModelUnknown, SeverityError, "%s", msg)
	return nil
}

// handSetAL is the acceptance length (bonus token included) a role forces
// itself, with where it is set; ok is false when the role forces none or
// leaves the method or token mode to engine defaults that AgentX does not
// run with.
func handSetAL(r *Role) (al float64, where string, ok bool) {
	if r == nil || r.Spec == nil {
		return 0, "", false
	}
	num := func(key string) (float64, bool) {
		v, ok := r.Env[key]
		if !ok {
			return 0, false
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return f, err == nil && f > 0
	}
	at := "roles." + r.Name
	switch r.Engine {
	case EngineSGLang:
		f, ok := num(sglangLen)
		if ok && strings.TrimSpace(r.Env[sglangMethod]) == agentxMethod && strings.TrimSpace(r.Env[sglangTokenMode]) == agentxTokenMode {
			return f, at + " " + sglangLen, true
		}
	case EngineTRTLLM:
		if f, ok := num(trtForced); ok {
			return f + 1, at + " " + trtForced, true
		}
	case EngineTileRT:
		if f, ok := num(tilertLen); ok && r.Env[tilertMethod] == agentxMethod {
			return f, at + " " + tilertLen, true
		}
	case EngineVLLM:
		if s := r.Spec; s.SyntheticAL != nil && *s.SyntheticAL > 0 && s.RejectionSampleMethod == vllmSyntheticMethod {
			return *s.SyntheticAL, at + " speculative-config.synthetic_acceptance_length", true
		}
	case EngineATOM:
		if s := r.Spec; s.SyntheticAL != nil && *s.SyntheticAL > 0 {
			return *s.SyntheticAL, at + " " + atomAcceptanceLengthFlag, true
		}
	}
	return 0, "", false
}

// curveID names the golden curve file InferenceX uses for a model prefix
// and speculative method (infx golden_length / curve_name): EAGLE and
// NEXTN read the EAGLE3 curve for Kimi K2.5 and MiniMax M3 and the MTP
// curve otherwise; DSpark has per-model files; a GQA EAGLE3 draft of
// MiniMax M3 has its own curve.
func curveID(prefix string, s *Spec) string {
	p := strings.ToLower(prefix)
	m := strings.ToLower(s.Algorithm)
	switch {
	case m == "eagle" || m == "nextn":
		m = "mtp"
		if p == "kimik2.5" || p == "minimaxm3" {
			m = "eagle3"
		}
	case strings.HasSuffix(m, "mtp"):
		m = "mtp"
	}
	if m == "dspark" {
		switch p {
		case "dsv4", "dsv4dspark", "dsv4dsparkprob":
			return "dsv4-pro-0813-dspark"
		case "kimik3":
			switch strings.ToLower(s.DraftSampleMethod) {
			case "greedy":
				return "kimik3_dspark"
			case "probabilistic":
				return "kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method"
			}
			return ""
		}
	}
	id := p + "_" + m
	if p == "minimaxm3" && m == "eagle3" && strings.Contains(strings.ToLower(s.DraftModel), "gqa") {
		id += "_gqa"
	}
	return id
}

// candidateNames adds looser spellings after each name: without a trailing
// "-V2"-style revision, and a srt-slurm model alias such as "qwen3.5-fp4"
// cut at its precision suffix.
func candidateNames(names []string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, n := range names {
		add(n)
	}
	for _, n := range names {
		if i := strings.LastIndex(n, "-"); i > 0 {
			suffix := strings.ToLower(n[i+1:])
			if len(suffix) >= 2 && suffix[0] == 'v' && strings.Trim(suffix[1:], "0123456789") == "" {
				add(n[:i])
			}
			switch suffix {
			case "fp4", "fp8", "bf16", "nvfp4", "mxfp4", "int4", "fp16":
				add(n[:i])
			}
		}
	}
	return out
}

// draftLengthAL checks a role's draft length against the curve and
// returns the golden AL for it.
func (c *checker) draftLengthAL(r *Role, curve *GoldenCurve) *float64 {
	s := r.Spec
	at := r.ArgsAt + "." + s.DraftLengthKey
	if s.DraftLength == 0 {
		if s.NextNOnly != "" {
			c.add(CodeDraftLengthMissing, SeverityError,
				"roles.%s sets speculative_config.num_nextn_predict_layers (%s) but not max_draft_len; TensorRT-LLM takes the draft length from max_draft_len only (llmapi/llm_args.py) and AgentX tooling reads it there: set max_draft_len", r.Name, s.NextNOnly)
		} else if s.DraftLengthBad != "" {
			c.add(CodeDraftLengthMissing, SeverityError, "%s is %q, not a positive integer draft length: set it to the draft length you benchmark", at, s.DraftLengthBad)
		} else {
			c.add(CodeDraftLengthMissing, SeverityError,
				"roles.%s enables %s but does not set %s; the engine would pick its own default and AgentX tooling cannot derive the golden AL: set it explicitly", r.Name, s.Algorithm, s.DraftLengthKey)
		}
		return nil
	}
	if curve == nil {
		return nil
	}
	k := s.DraftLength
	if k < 1 || k > len(curve.AL) {
		c.add(CodeDraftLengthRange, SeverityError,
			"%s = %d is outside the golden curve %s (thinking %s), which covers draft lengths 1..%d: pick a draft length in that range",
			at, k, curve.Model, curve.Thinking, len(curve.AL))
		return nil
	}
	al := curve.AL[k-1]
	return &al
}

// injection is what InferenceX's synthetic-acceptance step sets for a
// speculative role of each engine.
func injection(r *Role, al float64) map[string]string {
	switch r.Engine {
	case EngineSGLang:
		return map[string]string{sglangLen: FormatAL(al), sglangMethod: agentxMethod, sglangTokenMode: agentxTokenMode}
	case EngineTRTLLM:
		return map[string]string{trtForced: FormatAL(al - 1)}
	case EngineVLLM:
		return map[string]string{
			"args.speculative-config.rejection_sample_method":     vllmSyntheticMethod,
			"args.speculative-config.synthetic_acceptance_length": FormatAL(al),
		}
	case EngineATOM:
		return map[string]string{"args." + atomAcceptanceLengthFlag: FormatAL(al)}
	case EngineTileRT:
		if r.Name != RoleDecode {
			return map[string]string{}
		}
		return map[string]string{tilertLen: FormatAL(al), tilertMethod: agentxMethod}
	}
	return map[string]string{}
}

func (c *checker) where(r *Role, key string) string {
	from := r.EnvFrom[key]
	if from == "environment" {
		return "environment." + key + " (recipe-wide, inherited by roles." + r.Name + ")"
	}
	s := c.keyPath(r, key)
	if c.v.section != nil && from != "" && c.v.section.Get(strings.Split(from, ".")...).Get(key) == nil {
		s += " (inherited from base)"
	}
	return s
}

// keyPath is where a role's env key is set, as a key path (where without
// its words).
func (c *checker) keyPath(r *Role, key string) string {
	from := r.EnvFrom[key]
	if from == "environment" {
		return "environment." + key
	}
	return from + "." + key
}

func closeAL(a, b float64) bool { return math.Abs(a-b) <= alTolerance+1e-9 }

func (c *checker) checkRole(r *Role, target *float64, curve *GoldenCurve) {
	s := r.Spec
	if s == nil {
		for _, k := range simKeys {
			if _, ok := r.Env[k]; ok && r.EnvFrom[k] != "environment" {
				if c.noInjection {
					c.addAt(c.keyPath(r, k), CodeSimAccNonSpecRole, SeverityInfo,
						"%s is set, but roles.%s runs no speculative decoding, so it has no effect there (schema-1 recipes run as written; no injection step unsets it): drop it", c.where(r, k), r.Name)
				} else {
					c.addAt(c.keyPath(r, k), CodeSimAccNonSpecRole, SeverityInfo,
						"%s is set, but roles.%s runs no speculative decoding; synthetic acceptance unsets it there: drop it", c.where(r, k), r.Name)
				}
			}
		}
		c.checkCUDAGraph(r)
		return
	}
	if s.AlgorithmConflict != "" {
		c.add(CodeSpecAlgorithmClash, SeverityError,
			"%s sets speculative-algorithm %q and speculative-algo %q: keep one", r.ArgsAt, s.Algorithm, s.AlgorithmConflict)
	}
	c.checkForeignKeys(r)
	label := ""
	if curve != nil && s.DraftLength > 0 {
		label = fmt.Sprintf(" for %s (thinking %s) at draft length %d", curve.Model, curve.Thinking, c.v.Generation().specK())
	}

	switch r.Engine {
	case EngineSGLang:
		c.checkSGLangEnv(r, target, label)
		if s.TopK > 1 {
			c.add(CodeRealDraftTokenTopK, SeverityError,
				"%s.speculative-eagle-topk is %d; AgentX's token mode real-draft-token requires topk 1 (SGLang raises at the first verify step): set speculative-eagle-topk: 1 and speculative-num-draft-tokens: %d",
				r.ArgsAt, s.TopK, s.DraftLength+1)
		}
		if s.TopK == 1 && s.NumDraftTokens > 0 && s.DraftLength > 0 && s.NumDraftTokens != s.DraftLength+1 {
			c.add(CodeNumDraftTokens, SeverityWarning,
				"%s.speculative-num-draft-tokens is %d with topk 1 and %d steps; SGLang silently resets it to steps+1 = %d: write %d",
				r.ArgsAt, s.NumDraftTokens, s.DraftLength, s.DraftLength+1, s.DraftLength+1)
		}
		if q := s.DraftQuantization; q != "" && !strings.EqualFold(q, "unquant") {
			c.add(CodeDraftQuantization, SeverityError,
				"%s.speculative-draft-model-quantization is %q, which quantizes the draft below the precision it ships in; AgentX prohibits it: remove it (or set unquant)",
				r.ArgsAt, q)
		}
	case EngineTRTLLM:
		c.checkForced(r, trtForced, target, -1, label)
		c.checkTRTTwoModel(r, target)
	case EngineTileRT:
		c.checkForced(r, tilertLen, target, 0, label)
		if m, ok := r.Env[tilertMethod]; ok && m != agentxMethod {
			c.addAt(c.keyPath(r, tilertMethod), CodeSimAccMethod, SeverityError, "%s is %q; AgentX uses %s: set it to %s", c.where(r, tilertMethod), m, agentxMethod, agentxMethod)
		}
	case EngineVLLM:
		if s.SyntheticAL != nil && target != nil && !closeAL(*s.SyntheticAL, *target) {
			c.add(CodeSimAccLenMismatch, SeverityError,
				"%s.speculative-config.synthetic_acceptance_length is %s but the golden AL%s is %s: set it to %s (or drop it and let synthetic acceptance inject it)",
				r.ArgsAt, FormatAL(*s.SyntheticAL), label, FormatAL(*target), FormatAL(*target))
		}
		if s.SyntheticAL != nil && s.RejectionSampleMethod != vllmSyntheticMethod {
			c.add(CodeSimAccMethod, SeverityError,
				"%s.speculative-config sets synthetic_acceptance_length but rejection_sample_method is %q; vLLM only simulates with \"synthetic\": set it", r.ArgsAt, s.RejectionSampleMethod)
		}
		if q := s.DraftQuantization; q != "" && !strings.EqualFold(q, "none") {
			c.add(CodeDraftQuantization, SeverityError,
				"%s.speculative-config.quantization is %q, which quantizes the draft below the precision it ships in; AgentX prohibits it: remove it", r.ArgsAt, q)
		}
	case EngineATOM:
		if s.SyntheticAL != nil && target != nil && !closeAL(*s.SyntheticAL, *target) {
			c.add(CodeSimAccLenMismatch, SeverityError,
				"%s.%s is %s but the golden AL%s is %s: set it to %s", r.ArgsAt, atomAcceptanceLengthFlag,
				FormatAL(*s.SyntheticAL), label, FormatAL(*target), FormatAL(*target))
		}
	}
	if c.noInjection && target != nil && r == c.v.Generation() && c.v.Agentic {
		c.checkHandSet(r, *target)
	}
	c.checkCUDAGraph(r)
}

// handSet is what a schema-1 role runs with: the simulation variables of
// its engine as the recipe sets them.
func handSet(r *Role) map[string]string {
	out := map[string]string{}
	for _, k := range engineKeys[r.Engine] {
		if v, ok := r.Env[k]; ok {
			out[k] = v
		}
	}
	return out
}

// checkHandSet: a schema-1 generation role that sets no simulation
// variable of its engine runs with real acceptance (the prefill role's
// acceptance does not reach the measured decode).
func (c *checker) checkHandSet(r *Role, target float64) {
	keys := engineKeys[r.Engine]
	if len(keys) == 0 || len(handSet(r)) > 0 {
		return
	}
	want := injection(r, target)
	parts := make([]string, 0, len(want))
	for _, k := range keys {
		if v, ok := want[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	c.add(CodeSimAccMissing, SeverityError,
		"roles.%s is speculative but sets no %s; schema-1 recipes get no synthetic-acceptance injection, so it runs with real acceptance: set %s",
		r.Name, strings.Join(keys, " / "), strings.Join(parts, " "))
}

// checkTRTTwoModel: TensorRT-LLM's one-model path takes a fractional
// TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS (integer part accepted every
// iteration, fraction the probability of one more:
// tensorrt_llm/_torch/speculative/interface.py
// SpecWorkerBase._apply_force_accepted_tokens); the two-model path reads
// it as an integer (get_force_num_accepted_tokens in the TorchSampler
// path), so a fractional value turns the override off there.
func (c *checker) checkTRTTwoModel(r *Role, target *float64) {
	s := r.Spec
	if s.TwoModel == "" {
		return
	}
	val, where := "", ""
	if v, ok := r.Env[trtForced]; ok {
		val, where = v, c.where(r, trtForced)
	} else if target != nil && !c.noInjection {
		val, where = FormatAL(*target-1), "the injected "+trtForced
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
	if val == "" || err != nil || f == math.Trunc(f) {
		return
	}
	c.add(CodeTRTFractionalForced, SeverityWarning,
		"%s is %s, but roles.%s runs TensorRT-LLM's two-model speculative path (%s), which parses it as an integer: the fractional value turns forced acceptance off and the run measures real acceptance. Use the one-model path (the default) or accept an integer count",
		where, val, r.Name, s.TwoModel)
}

// engineKeys are the simulation variables each engine reads.
var engineKeys = map[string][]string{
	EngineSGLang: {sglangLen, sglangMethod, sglangTokenMode},
	EngineTRTLLM: {trtForced},
	EngineTileRT: {tilertLen, tilertMethod},
}

// checkForeignKeys flags another engine's simulation variables: they have
// no effect, so a recipe relying on them runs with real acceptance.
func (c *checker) checkForeignKeys(r *Role) {
	own := map[string]bool{}
	for _, k := range engineKeys[r.Engine] {
		own[k] = true
	}
	for _, k := range simKeys {
		if _, ok := r.Env[k]; ok && !own[k] {
			knob := strings.Join(engineKeys[r.Engine], ", ")
			switch r.Engine {
			case EngineVLLM:
				knob = "speculative-config rejection_sample_method: synthetic with synthetic_acceptance_length"
			case EngineATOM:
				knob = "--" + atomAcceptanceLengthFlag
			}
			c.addAt(c.keyPath(r, k), CodeSimAccWrongEngine, SeverityWarning, "%s has no effect on %s, whose knob is %s: drop it and let synthetic acceptance inject the right one",
				c.where(r, k), r.Engine, knob)
		}
	}
}

func (r *Role) specK() int {
	if r == nil || r.Spec == nil {
		return 0
	}
	return r.Spec.DraftLength
}

func (c *checker) checkSGLangEnv(r *Role, target *float64, label string) {
	lenStr, hasLen := r.Env[sglangLen]
	if hasLen && target != nil {
		f, err := strconv.ParseFloat(strings.TrimSpace(lenStr), 64)
		switch {
		case err != nil:
			c.addAt(c.keyPath(r, sglangLen), CodeSimAccLenMismatch, SeverityError, "%s is %q, not a number (SGLang falls back to -1, simulation off): set it to '%s'", c.where(r, sglangLen), lenStr, FormatAL(*target))
		case f <= 0:
			c.addAt(c.keyPath(r, sglangLen), CodeSimAccLenMismatch, SeverityError, "%s is %s, which turns simulation off; the golden AL%s is %s: set it to '%s'", c.where(r, sglangLen), lenStr, label, FormatAL(*target), FormatAL(*target))
		case !closeAL(f, *target):
			c.addAt(c.keyPath(r, sglangLen), CodeSimAccLenMismatch, SeverityError, "%s is %s but the golden AL%s is %s: set it to '%s' (or drop it and let synthetic acceptance inject it)",
				c.where(r, sglangLen), lenStr, label, FormatAL(*target), FormatAL(*target))
		}
	}
	m, hasM := r.Env[sglangMethod]
	if hasM && strings.TrimSpace(m) != agentxMethod {
		c.addAt(c.keyPath(r, sglangMethod), CodeSimAccMethod, SeverityError, "%s is %q; AgentX uses %s (multinomial's mean is biased low): set it to %s", c.where(r, sglangMethod), m, agentxMethod, agentxMethod)
	}
	t, hasT := r.Env[sglangTokenMode]
	if hasT && strings.TrimSpace(t) != agentxTokenMode {
		c.addAt(c.keyPath(r, sglangTokenMode), CodeSimAccTokenMode, SeverityError, "%s is %q; AgentX uses %s (fixed emits token id 100 and breaks streaming and stop conditions): set it to %s", c.where(r, sglangTokenMode), t, agentxTokenMode, agentxTokenMode)
	}
	if hasLen && (!hasM || !hasT) {
		var missing []string
		if !hasM {
			missing = append(missing, sglangMethod+"="+agentxMethod)
		}
		if !hasT {
			missing = append(missing, sglangTokenMode+"="+agentxTokenMode+" (the engine default is fixed)")
		}
		c.add(CodeSimAccIncomplete, SeverityWarning, "roles.%s hard-codes %s but leaves the rest to engine defaults: add %s", r.Name, sglangLen, strings.Join(missing, " and "))
	}
}

// checkForced compares a forced-acceptance variable with the target plus
// offset (TensorRT-LLM counts drafts only: AL - 1).
func (c *checker) checkForced(r *Role, key string, target *float64, offset float64, label string) {
	s, ok := r.Env[key]
	if !ok || target == nil {
		return
	}
	want := *target + offset
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	unit := ""
	if offset == -1 {
		unit = " (accepted drafts, AL - 1)"
	}
	if err != nil || !closeAL(f, want) {
		c.addAt(c.keyPath(r, key), CodeSimAccLenMismatch, SeverityError, "%s is %q but the golden AL%s is %s, so it must be %s%s: set it to '%s'",
			c.where(r, key), s, label, FormatAL(*target), FormatAL(want), unit, FormatAL(want))
	}
}

func (c *checker) checkDraftLengthsAgree() {
	p, d := c.v.Role(RolePrefill), c.v.Role(RoleDecode)
	if p == nil || d == nil || p.Spec == nil || d.Spec == nil || p.Spec.DraftLength == 0 || d.Spec.DraftLength == 0 {
		return
	}
	if p.Spec.DraftLength != d.Spec.DraftLength {
		c.add(CodeDraftLengthDiffers, SeverityInfo,
			"prefill draft length %d differs from decode draft length %d; decode defines the AL target, so both roles get the AL for %d",
			p.Spec.DraftLength, d.Spec.DraftLength, d.Spec.DraftLength)
	}
}

func (c *checker) checkRecipeWide() {
	var keys []string
	for _, k := range simKeys {
		if _, ok := c.v.RecipeEnv[k]; ok {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		c.addAt("environment", CodeSimAccRecipeWide, SeverityInfo,
			"recipe-wide environment sets %s; srt-slurm applies it after each role's env, so synthetic acceptance unsets it to keep the golden AL role-local: move it into the speculative roles or drop it",
			strings.Join(keys, ", "))
	}
}

// deepseekFamily reports whether SGLang reads SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE
// for a model: the DeepSeek-V3 architecture family (DeepSeek V3/R1/V4,
// Kimi K2, GLM-5) served from an NVFP4 checkpoint.
func deepseekFamily(names []string) bool {
	for _, n := range names {
		l := strings.ToLower(n)
		for _, f := range []string{"deepseek", "dsv3", "dsv4", "dsr1", "kimi", "glm-5", "glm5"} {
			if strings.Contains(l, f) {
				return true
			}
		}
	}
	return false
}

func (c *checker) checkFP8NextN() {
	// Report each place it is set once, naming the roles that inherit it.
	type site struct {
		where, path string
		roles       []string
		value       string
	}
	sites := map[string]*site{}
	var order []string
	for _, r := range c.v.Roles {
		val, ok := r.Env[fp8NextNEnv]
		if !ok || !truthy(val) {
			continue
		}
		w := c.where(r, fp8NextNEnv)
		if r.EnvFrom[fp8NextNEnv] == "environment" {
			w = "environment." + fp8NextNEnv + " (recipe-wide)"
		}
		if sites[w] == nil {
			sites[w] = &site{where: w, path: c.keyPath(r, fp8NextNEnv), value: val}
			order = append(order, w)
		}
		sites[w].roles = append(sites[w].roles, r.Name)
	}
	if len(c.v.Roles) == 0 {
		if val, ok := c.v.RecipeEnv[fp8NextNEnv]; ok && truthy(val) {
			sites["env"] = &site{where: "environment." + fp8NextNEnv + " (recipe-wide)", path: "environment." + fp8NextNEnv, value: val}
			order = append(order, "env")
		}
	}
	sort.Strings(order)
	family := deepseekFamily(c.v.ModelNames) || deepseekFamily([]string{c.opt.Model})
	for _, w := range order {
		s := sites[w]
		effect := "SGLang re-quantizes the BF16 NEXTN MoE experts to FP8 at load for DeepSeek-family NVFP4 checkpoints, below the precision the draft ships in"
		if !family {
			model := "this model"
			if len(c.v.ModelNames) > 0 {
				model = c.v.ModelNames[0]
			}
			pinned := "the pinned SGLang"
			if c.v.Container != "" {
				pinned = fmt.Sprintf("the pinned SGLang (%s)", c.v.Container)
			}
			effect = fmt.Sprintf("%s reads it only for DeepSeek-family NVFP4 checkpoints (DeepSeek V3/R1/V4, Kimi K2, GLM-5) with the deep_gemm MoE runner and ignores it for %s, but AgentX prohibits it regardless of effect", pinned, model)
		}
		roles := ""
		if len(s.roles) > 0 {
			roles = " for roles " + strings.Join(s.roles, ", ")
		}
		c.addAt(s.path, CodeFP8NextNMoE, SeverityError, "%s is %q%s; %s: remove it", s.where, s.value, roles, effect)
	}
}

// checkCUDAGraph compares the largest CUDA-graph batch with the most
// requests one rank can run. Under SGLang DP attention each DP rank runs
// max-running-requests / dp of them (SGLang divides the cap by dp_size)
// and captures graphs for its own batch, so the cap per rank is what the
// graph must cover; a batch above the largest graph runs eagerly. vLLM's
// max-num-seqs (per DP engine) and TensorRT-LLM's max_batch_size (per
// attention-DP rank) are per-rank caps already.
func (c *checker) checkCUDAGraph(r *Role) {
	if r.Name == RolePrefill || r.CUDAGraphDisable || r.CUDAGraphMaxBS == 0 || r.MaxRunning == 0 {
		return
	}
	perRank := r.MaxRunning
	arith := fmt.Sprintf("%s %d", r.MaxRunningKey, r.MaxRunning)
	switch r.Engine {
	case EngineSGLang:
		if r.DPAttention && r.DP > 1 {
			perRank = r.MaxRunning / r.DP
			arith = fmt.Sprintf("%s %d / dp %d (DP attention) = %d per rank", r.MaxRunningKey, r.MaxRunning, r.DP, perRank)
		}
	case EngineTRTLLM:
		// max_batch_size bounds each attention-DP rank's own batch (each
		// rank's PyExecutor schedules up to it), so it is the per-rank cap.
		if r.DPAttention {
			arith += " per attention-DP rank"
		}
	case EngineVLLM:
		// Each DP rank is its own engine core with its own scheduler
		// (vLLM docs/serving/data_parallel_deployment.md,
		// vllm/v1/engine/core.py DPEngineCoreProc): max-num-seqs bounds
		// one DP engine's batch, which its CUDA graphs must cover.
		if r.DP > 1 {
			arith += " per DP engine"
		}
	default:
		return
	}
	limit := perRank
	if conc := c.v.Concurrency; conc > 0 && conc < limit {
		limit = conc
		arith += fmt.Sprintf(", capped by benchmark concurrency %d", conc)
	}
	if r.CUDAGraphMaxBS < limit {
		c.add(CodeCUDAGraphBelowCap, SeverityWarning,
			"roles.%s %s %d is below the running-request cap per rank (%s); batches above %d run without CUDA graphs: raise %s to %d or lower the cap",
			r.Name, r.CUDAGraphKey, r.CUDAGraphMaxBS, arith, r.CUDAGraphMaxBS, r.CUDAGraphKey, limit)
	}
}
