package audit_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/specsim/specsim/audit"
)

// loadReal copies a real config.json (and hf_quant_config.json) into a
// directory and loads it.
func loadReal(t *testing.T, model string) *audit.ModelConfig {
	t.Helper()
	dir := t.TempDir()
	for src, dst := range map[string]string{"_config.json": "config.json", "_hf_quant_config.json": "hf_quant_config.json"} {
		b, err := os.ReadFile(configs + model + src)
		if err != nil {
			// The presets' config.json files live with the presets.
			if b, err = os.ReadFile("../simulate/presets/" + model + src); err != nil {
				continue
			}
		}
		must(t, os.WriteFile(filepath.Join(dir, dst), b, 0o644))
	}
	mc, err := audit.LoadModelConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	return mc
}

func TestLoadModelConfigQwen35(t *testing.T) {
	mc := loadReal(t, "nvidia--Qwen3.5-397B-A17B-NVFP4")
	if mc.HiddenSize != 4096 || mc.NumHiddenLayers != 60 || mc.NumExperts != 512 || mc.NumExpertsPerTok != 10 ||
		mc.HeadDim != 256 || mc.NumKeyValueHeads != 2 || mc.VocabSize != 248320 || mc.FullAttentionInterval != 4 ||
		len(mc.LayerTypes) != 60 || mc.LinearNumValueHeads != 64 || !mc.AttnOutputGate {
		t.Errorf("text_config not flattened: %+v", mc)
	}
	if mc.MTPLayers != 1 || mc.MTPKey != "mtp_num_hidden_layers" || mc.ModelType != "qwen3_5_moe" || mc.TextModelType != "qwen3_5_moe_text" {
		t.Errorf("mtp %d from %q, types %s/%s", mc.MTPLayers, mc.MTPKey, mc.ModelType, mc.TextModelType)
	}
	hf, cq := mc.HFQuant, mc.ConfigQuant
	if hf == nil || cq == nil {
		t.Fatal("want both quant descriptions")
	}
	if hf.Algo != "NVFP4" || hf.KVCacheAlgo != "FP8" || hf.GroupSize != 16 || len(hf.Exclude) != 184 || hf.ExcludeKey != "exclude_modules" {
		t.Errorf("hf_quant_config: %+v", hf)
	}
	if cq.Method != "modelopt" || cq.Algo != "NVFP4" || cq.KVCacheAlgo != "FP8" || cq.GroupSize != 16 || len(cq.Exclude) != 184 || cq.ExcludeKey != "ignore" {
		t.Errorf("quantization_config: %+v", cq)
	}
	if d := audit.Disagreements(hf, cq); len(d) != 0 {
		t.Errorf("the release's two files agree, got %v", d)
	}
	if mc.Quant != cq || mc.QuantAlgo != "NVFP4" || !slices.Contains(mc.ExcludeModules, "mtp.layers.0*") || slices.Contains(mc.ExcludeModules, "mtp*") {
		t.Errorf("resolved quant %+v", mc.Quant)
	}
}

func TestLoadModelConfigVariants(t *testing.T) {
	cases := []struct {
		model string
		check func(*audit.ModelConfig) bool
	}{
		{"nvidia--DeepSeek-V3.1-NVFP4", func(m *audit.ModelConfig) bool {
			return m.ConfigQuant == nil && m.Quant == m.HFQuant && m.QuantAlgo == "NVFP4" && m.MTPLayers == 1 &&
				m.MTPKey == "num_nextn_predict_layers" && m.NumExperts == 256 && m.KVLoRARank == 512 && m.FirstKDenseReplace == 3 &&
				len(m.ExcludeModules) == 246
		}},
		{"deepseek-ai--DeepSeek-R1", func(m *audit.ModelConfig) bool {
			q := m.Quant
			return q.Method == "fp8" && q.Algo == "FP8" && slices.Equal(q.WeightBlockSize, []int{128, 128}) && len(q.Exclude) == 0
		}},
		{"nvidia--Qwen3.6-35B-A3B-NVFP4", func(m *audit.ModelConfig) bool {
			n := map[string]int{}
			for _, a := range m.Quant.QuantizedLayers {
				n[a]++
			}
			return m.QuantAlgo == "MIXED_PRECISION" && n["W4A16_NVFP4"] == 161 && n["FP8"] == 130 &&
				slices.Contains(m.ExcludeModules, "mtp*") && len(audit.Disagreements(m.HFQuant, m.ConfigQuant)) == 0
		}},
		{"MiniMaxAI--MiniMax-M2.5", func(m *audit.ModelConfig) bool {
			return m.MTPKey == "num_mtp_modules" && m.MTPLayers == 3 && m.NumExperts == 256 && m.Quant.ExcludeKey == "modules_to_not_convert"
		}},
		{"moonshotai--Kimi-K2-Instruct", func(m *audit.ModelConfig) bool {
			return m.MTPLayers == 0 && m.MTPKey == "num_nextn_predict_layers" && m.NumExperts == 384
		}},
		{"nvidia--Llama-3.1-70B-Instruct-FP8", func(m *audit.ModelConfig) bool {
			return m.QuantAlgo == "FP8" && slices.Equal(m.ExcludeModules, []string{"lm_head"}) && m.HFQuant.KVCacheAlgo == "FP8"
		}},
	}
	for _, c := range cases {
		if mc := loadReal(t, c.model); !c.check(mc) {
			t.Errorf("%s: %+v (quant %+v)", c.model, mc, mc.Quant)
		}
	}
}

// TestParseModelConfigCounts: a size or count that is not a whole number
// >= 0 is an error naming the key (it used to read as absent); null and
// whole floats are fine, and a text_config value is checked too.
func TestParseModelConfigCounts(t *testing.T) {
	tests := []struct {
		json, wantErr string // wantErr "" = parses
	}{
		{`{"hidden_size": 4096, "head_dim": null}`, ""},
		{`{"hidden_size": 4096.0}`, ""},
		{`{"head_dim": "abc"}`, `head_dim: want a whole number >= 0, got the string "abc"`},
		// a number written as a string said "got 48", as if 48 were wrong
		{`{"num_hidden_layers": "48"}`, `num_hidden_layers: want a whole number >= 0, got the string "48"`},
		{`{"num_experts": 0.5}`, "num_experts: want a whole number >= 0, got 0.5"},
		{`{"vocab_size": -5}`, "vocab_size: want a whole number >= 0, got -5"},
		{`{"moe_intermediate_size": 1e300}`, "moe_intermediate_size: want a whole number >= 0, got 1e+300"},
		{`{"text_config": {"num_hidden_layers": [60]}}`, "num_hidden_layers: want a whole number >= 0, got a list"},
		{`{"hidden_size": {"value": 4096}}`, "hidden_size: want a whole number >= 0, got an object"},
		{`{"mtp_num_hidden_layers": true}`, "mtp_num_hidden_layers: want a whole number >= 0, got the boolean true"},
		// a switch of another type read as false without a word
		{`{"tie_word_embeddings": "yes"}`, `tie_word_embeddings: want true or false, got the string "yes"`},
		{`{"attn_output_gate": 1}`, "attn_output_gate: want true or false, got 1"},
		{`{"tie_word_embeddings": false, "attn_output_gate": null}`, ""},
	}
	for _, tc := range tests {
		_, err := audit.ParseModelConfig([]byte(tc.json))
		if tc.wantErr == "" && err != nil {
			t.Errorf("%s: %v", tc.json, err)
		}
		if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: error %v, want one naming %s", tc.json, err, tc.wantErr)
		}
	}
}

func TestDisagreements(t *testing.T) {
	a, err := audit.ParseQuantConfig([]byte(`{"quantization":{"quant_algo":"NVFP4","group_size":16,"kv_cache_quant_algo":"FP8","exclude_modules":["lm_head","mtp.layers.0*"]}}`))
	must(t, err)
	b, err := audit.ParseQuantConfig([]byte(`{"quant_method":"modelopt","quant_algo":"FP8","ignore":["lm_head","mtp*"],"kv_cache_scheme":{"type":"float","num_bits":8}}`))
	must(t, err)
	a.Source, b.Source = "/x/hf_quant_config.json", "/x/config.json"
	got := strings.Join(audit.Disagreements(a, b), "\n")
	for _, want := range []string{`quant_algo is "NVFP4" in hf_quant_config.json but "FP8" in config.json`, "only in hf_quant_config.json (exclude_modules): mtp.layers.0*", "only in config.json (ignore): mtp*"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

func FuzzParseQuantConfig(f *testing.F) {
	for _, name := range []string{"nvidia--Llama-3.1-70B-Instruct-FP8_hf_quant_config.json", "deepseek-ai--DeepSeek-R1_config.json"} {
		if b, err := os.ReadFile(configs + name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"quantization_config":{"config_groups":{"g":{"weights":{"num_bits":4,"type":"float"}}},"ignore":["re:^mtp\\..*"]}}`))
	f.Add([]byte(`{"quantization":{"quant_algo":"MIXED_PRECISION","quantized_layers":{"a.b":{"quant_algo":"fp8"}},"exclude_modules":["mtp*"]}}`))
	f.Add([]byte(`{"text_config":{"num_hidden_layers":1e300,"layer_types":[1,"x"]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if q, err := audit.ParseQuantConfig(data); err == nil {
			if d := audit.Disagreements(q, q); len(d) != 0 {
				t.Fatalf("a config disagrees with itself: %v", d)
			}
			for _, p := range q.Exclude[:min(len(q.Exclude), 4)] {
				_ = audit.Excluded("vllm", q, p)
				_ = audit.Excluded("sglang", q, p)
			}
		}
		if mc, err := audit.ParseModelConfig(data); err == nil && mc.NumHiddenLayers < 0 && mc.MTPLayers < 0 {
			_ = mc
		}
	})
}
