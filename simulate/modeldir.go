package simulate

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/specsim/specsim/audit/model"
)

// ModelFromDir describes the model of a checkpoint directory from its
// config.json and quant config (read by package audit/model). What stays BF16
// under NVFP4 follows the exclude list; the draft is the checkpoint's MTP
// layers, served BF16 when the quant config excludes them (or, for Qwen3.5,
// always, as SGLang builds that module unquantized).
func ModelFromDir(dir string) (*Model, error) {
	c, err := model.Load(dir)
	if err != nil {
		return nil, err
	}
	m := &Model{Name: filepath.Base(filepath.Clean(dir)), Source: filepath.Join(dir, "config.json"),
		Architecture: c.Architecture(), HFArch: firstArch(c)}
	m.GoldenKey = goldenKeyOf(c, m.Architecture)
	excl := strings.ToLower(strings.Join(c.ExcludeModules, " "))
	m.Quant = QuantPolicy{
		FP4AttentionBF16: strings.Contains(excl, "self_attn") || strings.Contains(excl, "linear_attn"),
		FP4SharedBF16:    strings.Contains(excl, "shared_expert"),
		Note:             "from the exclude list of " + dir,
	}
	if c.MTPLayers > 0 {
		m.Draft = DraftSpec{Kind: "mtp", Layers: c.MTPLayers, MoE: m.Experts > 0, FP4Effective: "bf16",
			OwnLMHead: strings.HasPrefix(c.ModelType, "qwen3_5") || strings.HasPrefix(c.TextModelType, "qwen3_5"),
			Note:      fmt.Sprintf("%d MTP layer(s) from %s", c.MTPLayers, c.MTPKey)}
		// A quant config that quantizes the MTP layers (no exclude entry
		// for them) ships them at the target's precision.
		mtpExcluded := strings.Contains(excl, "mtp") || strings.Contains(excl, fmt.Sprintf("layers.%d", m.Layers))
		if !mtpExcluded && !m.Draft.OwnLMHead && c.QuantAlgo == "NVFP4" {
			m.Draft.FP4Effective = "nvfp4"
		}
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return m, nil
}

// goldenKeyOf finds the golden curve of a checkpoint from its config, not
// its directory name: the preset of the same architecture (every field
// config.json sets) gives its curve; failing that, a Qwen3.5-family config
// (model_type qwen3_5*) takes the curve every Qwen3.5 preset uses. "" when
// neither applies: Resolve then tries the directory name.
func goldenKeyOf(c *model.Config, a model.Architecture) string {
	for _, p := range presets {
		if p.GoldenKey != "" && p.Architecture == a {
			return p.GoldenKey
		}
	}
	if strings.HasPrefix(c.ModelType, "qwen3_5") || strings.HasPrefix(c.TextModelType, "qwen3_5") {
		for _, p := range presets {
			if strings.HasPrefix(p.Name, "Qwen3.5-") && p.GoldenKey != "" {
				return p.GoldenKey
			}
		}
	}
	return ""
}
