package simulate

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/specsim/specsim/audit"
)

// ModelFromDir describes the model of a checkpoint directory from its
// config.json and quant config (read by the audit package). What stays BF16
// under NVFP4 follows the exclude list; the draft is the checkpoint's MTP
// layers, served BF16 when the quant config excludes them (or, for Qwen3.5,
// always, as SGLang builds that module unquantized).
func ModelFromDir(dir string) (*Model, error) {
	c, err := audit.LoadModelConfig(dir)
	if err != nil {
		return nil, err
	}
	m := &Model{Name: filepath.Base(filepath.Clean(dir)), Source: filepath.Join(dir, "config.json"),
		Hidden: c.HiddenSize, Layers: c.NumHiddenLayers, Vocab: c.VocabSize,
		Heads: c.NumAttentionHeads, KVHeads: c.NumKeyValueHeads, HeadDim: c.HeadDim, OutputGate: c.AttnOutputGate,
		QLoRA: c.QLoRARank, KVLoRA: c.KVLoRARank, RopeDim: c.QKRopeHeadDim, NopeDim: c.QKNopeHeadDim, VHeadDim: c.VHeadDim,
		FullAttnInterval: c.FullAttentionInterval,
		LinearKHeads:     c.LinearNumKeyHeads, LinearVHeads: c.LinearNumValueHeads, LinearKDim: c.LinearKeyHeadDim,
		LinearVDim: c.LinearValueHeadDim, ConvKernel: c.LinearConvKernelDim,
		DenseLayers: c.FirstKDenseReplace, DenseInter: c.IntermediateSize,
		Experts: c.NumExperts, TopK: c.NumExpertsPerTok, MoEInter: c.MoEIntermediateSize,
		SharedExperts: c.NumSharedExperts, SharedInter: c.MoEIntermediateSize,
		MaxContext: c.MaxPositionEmbeddings}
	m.Attention = GQA
	if c.KVLoRARank > 0 {
		m.Attention = MLA
	}
	if m.HeadDim == 0 && m.Heads > 0 {
		m.HeadDim = m.Hidden / m.Heads
	}
	if m.KVHeads == 0 {
		m.KVHeads = m.Heads
	}
	if c.SharedExpertIntermediateSize > 0 {
		m.SharedExperts, m.SharedInter = max(m.SharedExperts, 1), c.SharedExpertIntermediateSize
	}
	if m.FullAttnInterval == 0 && len(c.LayerTypes) > 0 {
		for i, t := range c.LayerTypes {
			if strings.Contains(t, "full") {
				m.FullAttnInterval = i + 1
				break
			}
		}
	}
	if m.Experts == 0 && m.DenseInter == 0 {
		m.DenseInter = c.MoEIntermediateSize
	}
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
