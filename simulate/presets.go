package simulate

import (
	"embed"
	"path"
	"strings"

	"github.com/specsim/specsim/audit/model"
)

//go:embed presets/*.json
var presetConfigs embed.FS

// readPresets fills in each preset's architecture from its embedded
// config.json: the file named in Source, up to its first space.
func readPresets(ms []*Model) []*Model {
	for _, m := range ms {
		file, _, _ := strings.Cut(strings.TrimPrefix(m.Source, "simulate/"), " ")
		data, err := presetConfigs.ReadFile(path.Clean(file))
		if err != nil {
			panic("simulate: preset " + m.Name + ": " + err.Error())
		}
		c, err := model.Parse(data)
		if err != nil {
			panic("simulate: preset " + m.Name + ": " + file + ": " + err.Error())
		}
		m.Architecture, m.HFArch = c.Architecture(), firstArch(c)
	}
	return ms
}

// firstArch is config.json's architectures[0] ("" when absent).
func firstArch(c *model.Config) string {
	if len(c.Architectures) == 0 {
		return ""
	}
	return c.Architectures[0]
}

// presets are the built-in models. Each architecture is read from the
// config.json named in Source (embedded from presets/) by package
// audit/model, the reader ModelFromDir uses; the draft and the quantization
// policy are written here, the policy from the exclude_modules of NVIDIA's
// hf_quant_config.json for the NVFP4 release named in the QuantPolicy note.
var presets = readPresets([]*Model{
	{
		Name:      "Qwen3.5-397B-A17B",
		Aliases:   []string{"Qwen/Qwen3.5-397B-A17B", "nvidia/Qwen3.5-397B-A17B-NVFP4", "Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5", "qwen3.5-397b"},
		Source:    "simulate/presets/Qwen--Qwen3.5-397B-A17B_config.json (text_config)",
		GoldenKey: "qwen3.5-397b-a17b-nvfp4",
		Draft: DraftSpec{Kind: "mtp", Layers: 1, MoE: true, OwnLMHead: true, FP4Effective: "bf16",
			Note: "mtp_num_hidden_layers=1; SGLang qwen3_5_mtp builds the MTP module unquantized for NVFP4 checkpoints and gives it its own embedding and lm_head"},
		Quant: QuantPolicy{FP4AttentionBF16: true, FP4SharedBF16: true,
			Note: "nvidia/Qwen3.5-397B-A17B-NVFP4 excludes self_attn*, linear_attn*, shared_expert*, lm_head, mtp.layers.0*"},
	},
	{
		Name:      "Qwen3.5-122B-A10B",
		Aliases:   []string{"Qwen/Qwen3.5-122B-A10B", "nvidia/Qwen3.5-122B-A10B-NVFP4", "qwen3.5-122b"},
		Source:    "simulate/presets/Qwen--Qwen3.5-122B-A10B_config.json (text_config)",
		GoldenKey: "qwen3.5-397b-a17b-nvfp4",
		Draft: DraftSpec{Kind: "mtp", Layers: 1, MoE: true, OwnLMHead: true, FP4Effective: "bf16",
			Note: "same MTP module as the 397B; golden curve borrowed from the 397B (no 122B curve exists)"},
		Quant: QuantPolicy{FP4AttentionBF16: true, FP4SharedBF16: true,
			Note: "nvidia/Qwen3.5-122B-A10B-NVFP4 excludes self_attn*, linear_attn*, shared_expert*, lm_head, mtp*"},
	},
	{
		Name:      "Qwen3.5-35B-A3B",
		Aliases:   []string{"Qwen/Qwen3.5-35B-A3B", "nvidia/Qwen3.6-35B-A3B-NVFP4", "qwen3.5-35b"},
		Source:    "simulate/presets/Qwen--Qwen3.5-35B-A3B_config.json (text_config)",
		GoldenKey: "qwen3.5-397b-a17b-nvfp4",
		Draft: DraftSpec{Kind: "mtp", Layers: 1, MoE: true, OwnLMHead: true, FP4Effective: "bf16",
			Note: "same MTP module layout as the 397B; golden curve borrowed from the 397B"},
		Quant: QuantPolicy{FP4AttentionBF16: true, FP4SharedBF16: true,
			Note: "policy of the 397B/122B NVFP4 releases (the Qwen3.6-35B NVFP4 release is MIXED_PRECISION with FP8 attention)"},
	},
	{
		Name:    "DeepSeek-V3",
		Aliases: []string{"deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-R1-0528", "DeepSeek-R1", "DeepSeek-R1-0528", "nvidia/DeepSeek-R1-0528-NVFP4", "nvidia/DeepSeek-V3.1-NVFP4", "DeepSeek-V3.1", "dsr1", "dsv3"},
		Source:  "simulate/presets/deepseek-ai--DeepSeek-V3_config.json (identical to DeepSeek-R1_config.json in these fields)",
		Draft: DraftSpec{Kind: "mtp", Layers: 1, MoE: true, FP4Effective: "bf16",
			Note: "num_nextn_predict_layers=1 (layer 61); the NVFP4 release excludes model.layers.61* so the MTP layer stays BF16"},
		Quant: QuantPolicy{FP4AttentionBF16: true,
			Note: "nvidia/DeepSeek-V3.1-NVFP4 excludes self_attn q_a/q_b/kv_a/kv_b projections, lm_head, model.layers.61*"},
	},
	{
		Name:    "GLM-5",
		Aliases: []string{"zai-org/GLM-5", "zai-org/GLM-5-FP8", "nvidia/GLM-5-NVFP4", "glm5"},
		Source:  "simulate/presets/zai-org--GLM-5_config.json",
		Draft: DraftSpec{Kind: "mtp", Layers: 1, MoE: true, FP4Effective: "bf16",
			Note: "num_nextn_predict_layers=1 (layer 78); the NVFP4 release excludes model.layers.78*"},
		Quant: QuantPolicy{FP4AttentionBF16: true,
			Note: "nvidia/GLM-5-NVFP4 excludes self_attn projections, the indexer, lm_head, model.layers.78*"},
	},
	{
		Name:      "Kimi-K2.5",
		Aliases:   []string{"moonshotai/Kimi-K2.5", "nvidia/Kimi-K2.5-NVFP4", "kimik2.5", "kimi-k2.5"},
		Source:    "simulate/presets/moonshotai--Kimi-K2.5_config.json (text_config)",
		GoldenKey: "kimi-k2.5-nvfp4",
		Draft: DraftSpec{Kind: "eagle3", Layers: 1, MoE: false, DenseInter: 18432, Vocab: 32000, FP4Effective: "bf16",
			Note: "num_nextn_predict_layers=0: InferenceX serves an EAGLE3 head (lightseekorg/kimi-k2.5-eagle3-mla); assumed one MLA layer with a dense 18432 MLP and a 32000-token draft vocabulary, BF16"},
		Quant: QuantPolicy{FP4AttentionBF16: true, FP4SharedBF16: true, FP4DenseBF16: true,
			Note: "policy of nvidia/Kimi-K2.6-NVFP4 (excludes self_attn*, shared_experts*, layers.0*, lm_head)"},
	},
	{
		Name:    "MiniMax-M2.5",
		Aliases: []string{"MiniMaxAI/MiniMax-M2.5", "nvidia/MiniMax-M2.5-NVFP4", "minimaxm2.5", "minimax-m2.5"},
		Source:  "simulate/presets/MiniMaxAI--MiniMax-M2.5_config.json",
		Draft: DraftSpec{Kind: "mtp", Layers: 1, MoE: true, FP4Effective: "bf16",
			Note: "use_mtp=true, num_mtp_modules=3, mtp_transformer_layers=1; one module per draft step assumed to cost one decoder layer; BF16 assumed (the NVFP4 release lists no MTP tensors)"},
		Quant: QuantPolicy{FP4AttentionBF16: true,
			Note: "nvidia/MiniMax-M2.5-NVFP4 excludes self_attn*, block_sparse_moe.gate, lm_head"},
	},
})
