package audit

import (
	"fmt"
	"regexp"
	"strings"
)

func quantFindings(cfg *ModelConfig) []Finding {
	var out []Finding
	for _, d := range Disagreements(cfg.HFQuant, cfg.ConfigQuant) {
		out = append(out, Finding{Code: "quant-config-disagree", Severity: SeverityWarning,
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
		case !m.Quantized() && v.Rule != "" && !v.Lowered && v.Rule != plainLinearRule &&
			(q.Method == "modelopt" || !isRouter(m.Name)) && !Excluded(c.Engine, q, m.Name):
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
			out = append(out, Finding{Code: codeFor("exclude-gap", key), Severity: SeverityError, Location: g.names[0],
				Message: fmt.Sprintf("%s %s %s but no exclude pattern covers it under %s's matching, so %s builds it %s and cannot load the %s weight (an NVFP4 layer expects packed U8 [out, in/2]). Add a pattern such as %q to exclude_modules in hf_quant_config.json and to quantization_config.ignore in config.json",
					describe(g.names), ships(g.names), g.prec, c.Engine, c.Engine, g.eff, g.prec, suggestPattern(g.names))})
		}
		if g := wrong[key]; g != nil {
			out = append(out, Finding{Code: codeFor("exclude-wrong", key), Severity: SeverityError, Location: g.names[0],
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
			out = append(out, Finding{Code: codeFor("exclude-gap-overridden", key), Severity: sev, Message: msg, Location: g.names[0]})
		}
	}
	return out
}

func codeFor(base, key string) string {
	if strings.HasPrefix(key, "mtp.") || strings.Contains(key, "mtp") {
		return "mtp-" + base
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

func precisionFindings(c Config, cfg *ModelConfig, mtp *MTP, e Effective) []Finding {
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
		out = append(out, Finding{Code: "draft-precision-lowered", Severity: SeverityError,
			Message: fmt.Sprintf("%s serves %d draft modules below their shipped %s precision (%s, effective %s). AgentX requires the draft at its shipped precision: remove the setting, including where a base recipe sets it", c.Engine, lowered, mtp.Summary.DType, e.Reason, e.DType)})
	}
	if c.Engine == EngineSGLang && c.Options.envOn(EnvFP8NextNMoE) {
		switch {
		case fp8NextNApplies(cfg, mtp, c.Options) && c.Options.MoEBackend == "" && c.EP <= 1:
			out = append(out, Finding{Code: "fp8-nextn-moe-needs-ep", Severity: SeverityError,
				Message: EnvFP8NextNMoE + "=1 selects the deep_gemm runner with the DeepEP all-to-all for the NextN MoE, which SGLang refuses with ep_size 1"})
		case !fp8NextNApplies(cfg, mtp, c.Options):
			out = append(out, Finding{Code: "fp8-nextn-moe-ignored", Severity: SeverityInfo,
				Message: EnvFP8NextNMoE + "=1 changes nothing here: SGLang casts the NextN MoE to FP8 only for a DeepSeek-family NextN layer of a modelopt_fp4 checkpoint whose draft MoE runner is deep_gemm (enable_nextn_moe_bf16_cast_to_fp8). It is still prohibited in AgentX recipes"})
		}
	}
	if e.FellBack {
		out = append(out, Finding{Code: "draft-moe-backend-fallback", Severity: SeverityInfo,
			Message: fmt.Sprintf("draft MoE experts are %s: %s", e.Experts, e.BackendNote)})
	}
	sev := SeverityInfo
	msg := fmt.Sprintf("draft ships %s and %s serves it as %s (%s)", mtp.Summary.DType, c.Engine, e.DType, e.Reason)
	if e.DType != mtp.Summary.DType && lowered == 0 {
		sev = SeverityWarning
	}
	out = append(out, Finding{Code: "draft-precision", Severity: sev, Message: msg})
	return out
}
