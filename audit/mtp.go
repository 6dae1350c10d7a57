package audit

import (
	"fmt"
	"strconv"
	"strings"
)

// MTP layouts.
const (
	MTPNone     = "none"
	MTPPrefixed = "mtp-prefix" // Qwen3.5 / Qwen3-Next style: mtp.fc, mtp.layers.0.*
	MTPInline   = "inline"     // DeepSeek / GLM style: model.layers.{num_hidden_layers+i}.*
	MTPDraftDir = "draft-dir"  // the whole checkpoint is a separate EAGLE-style draft
)

// Model families whose engines treat MTP differently.
const (
	FamilyQwen35    = "qwen3.5"
	FamilyQwen3Next = "qwen3-next"
	FamilyDeepSeek  = "deepseek"
	FamilyGLM       = "glm"
	FamilyOther     = "other"
)

// MTP describes the draft head found in a checkpoint.
type MTP struct {
	Kind    string
	Family  string
	Prefix  string // "mtp." or "model.layers.61." (first layer); "" for a draft directory
	Layers  int    // MTP layers present in the weights
	Modules []*Module
	Summary Summary
}

// Present reports whether any MTP tensor ships.
func (m *MTP) Present() bool { return m.Kind != MTPNone }

// familyOf names the model family from architectures and model_type.
func familyOf(c *ModelConfig) string {
	return familyOfText(strings.Join(append([]string{c.ModelType, c.TextModelType}, c.Architectures...), " "))
}

// FamilyOfName names the family of a model name (a hub repo such as
// "nvidia/Qwen3.5-397B-A17B-NVFP4", a served-model-name), by the words
// familyOf reads in configs; FamilyOther when it names none of them.
func FamilyOfName(name string) string { return familyOfText(name) }

func familyOfText(s string) string {
	s = strings.ToLower(s)
	switch {
	case strings.Contains(s, "qwen3_5") || strings.Contains(s, "qwen3.5"):
		return FamilyQwen35
	case strings.Contains(s, "qwen3_next") || strings.Contains(s, "qwen3next") || strings.Contains(s, "qwen3-next"):
		return FamilyQwen3Next
	case strings.Contains(s, "deepseek") || strings.Contains(s, "kimi"):
		return FamilyDeepSeek
	case strings.Contains(s, "glm"):
		return FamilyGLM
	}
	return FamilyOther
}

// isDraftArchitecture recognises a checkpoint that is itself a draft model
// (EAGLE/EAGLE-3 heads, standalone MTP or NextN exports).
func isDraftArchitecture(c *ModelConfig) bool {
	for _, a := range c.Architectures {
		l := strings.ToLower(a)
		for _, k := range []string{"eagle", "mtp", "nextn", "medusa", "draft"} {
			if strings.Contains(l, k) {
				return true
			}
		}
	}
	return false
}

// inlineLayer returns N for "model.layers.N.*" names.
func inlineLayer(name string) (int, bool) {
	const p = "model.layers."
	if !strings.HasPrefix(name, p) {
		return 0, false
	}
	rest := name[len(p):]
	dot := strings.IndexByte(rest, '.')
	if dot <= 0 || dot > 6 {
		return 0, false
	}
	n, err := strconv.Atoi(rest[:dot])
	return n, err == nil
}

// DetectMTP finds the MTP head from the weight map (not the config flag,
// which some releases set without shipping the tensors) and reports where
// the two disagree.
func DetectMTP(cp *Checkpoint, modules []*Module) (*MTP, []Finding) {
	c := cp.Config
	m := &MTP{Kind: MTPNone, Family: familyOf(c)}
	var fs []Finding
	if isDraftArchitecture(c) {
		m.Kind, m.Modules = MTPDraftDir, modules
		m.Layers = max(c.NumHiddenLayers, 1)
		m.Summary = Summarize(modules)
		return m, nil
	}
	inline := map[int]bool{}
	for _, mod := range modules {
		switch {
		case strings.HasPrefix(mod.Name, "mtp.") || mod.Name == "mtp" || strings.HasPrefix(mod.Name, "model.mtp."):
			m.Kind = MTPPrefixed
			m.Modules = append(m.Modules, mod)
		case c.NumHiddenLayers > 0:
			if n, ok := inlineLayer(mod.Name); ok && n >= c.NumHiddenLayers {
				inline[n-c.NumHiddenLayers] = true
				if m.Kind == MTPNone {
					m.Kind = MTPInline
				}
				if m.Kind == MTPInline {
					m.Modules = append(m.Modules, mod)
				}
			}
		}
	}
	switch m.Kind {
	case MTPPrefixed:
		m.Prefix = "mtp."
		layers := map[string]bool{}
		for _, mod := range m.Modules {
			rest := strings.TrimPrefix(strings.TrimPrefix(mod.Name, "model."), "mtp.")
			if strings.HasPrefix(rest, "layers.") {
				r := rest[len("layers."):]
				if i := strings.IndexByte(r, '.'); i > 0 {
					layers[r[:i]] = true
				}
			}
		}
		m.Layers = len(layers)
	case MTPInline:
		m.Prefix = fmt.Sprintf("model.layers.%d.", c.NumHiddenLayers)
		m.Layers = len(inline)
	}
	m.Summary = Summarize(m.Modules)

	flag := c.MTPLayers
	switch {
	case flag > 0 && !m.Present():
		fs = append(fs, Finding{Code: "mtp-flag-without-weights", Severity: SeverityWarning, Location: strings.TrimSpace("config.json " + c.MTPKey),
			Message: fmt.Sprintf("config says %s=%d but no MTP tensors ship (no mtp.* and no model.layers.%d.*): the weight map wins, there is no native draft head to serve; use a separate draft checkpoint or a release that ships the head", c.MTPKey, flag, c.NumHiddenLayers)})
	case m.Present() && c.MTPKey != "" && flag == 0:
		fs = append(fs, Finding{Code: "mtp-weights-without-flag", Severity: SeverityWarning, Location: strings.TrimSpace("config.json " + c.MTPKey),
			Message: fmt.Sprintf("%d MTP tensors ship under %s* but config says %s=0; engines size the draft from the flag, so set it to %d", m.Summary.Tensors, m.Prefix, c.MTPKey, m.Layers)})
	case m.Present() && c.MTPKey == "" && c.NumHiddenLayers > 0:
		fs = append(fs, Finding{Code: "mtp-weights-without-flag", Severity: SeverityInfo, Location: "config.json",
			Message: fmt.Sprintf("%d MTP tensors ship under %s* but config.json has no mtp_num_hidden_layers / num_nextn_predict_layers; engines fall back to 1 layer", m.Summary.Tensors, m.Prefix)})
	case m.Present() && c.MTPKey != "" && flag != m.Layers:
		fs = append(fs, Finding{Code: "mtp-layer-count-mismatch", Severity: SeverityWarning, Location: strings.TrimSpace("config.json " + c.MTPKey),
			Message: fmt.Sprintf("config says %s=%d but the weights hold %d MTP layers", c.MTPKey, flag, m.Layers)})
	}
	return m, fs
}
