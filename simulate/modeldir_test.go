package simulate

import (
	"os"
	"path/filepath"
	"testing"
)

// TestModelFromDirMatchesPreset reads the NVFP4 Qwen3.5-397B config files
// through the audit package and checks the model against the hand-entered
// preset: the two sources must agree on every field the cost model uses.
func TestModelFromDirMatchesPreset(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Qwen3.5-397B-A17B-NVFP4")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for src, dst := range map[string]string{
		"nvidia--Qwen3.5-397B-A17B-NVFP4_config.json":          "config.json",
		"nvidia--Qwen3.5-397B-A17B-NVFP4_hf_quant_config.json": "hf_quant_config.json",
	} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "configs", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ResolveModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := LookupPreset("Qwen3.5-397B-A17B")
	type arch struct {
		H, L, V, Heads, KV, HD, FAI, LK, LV, LKD, LVD, E, TopK, MI, SE, SI int
		Gate, AttnBF16, SharedBF16, OwnLM                                  bool
		Draft                                                              string
	}
	a := func(m *Model) arch {
		return arch{m.Hidden, m.Layers, m.Vocab, m.Heads, m.KVHeads, m.HeadDim, m.FullAttnInterval, m.LinearKHeads, m.LinearVHeads,
			m.LinearKDim, m.LinearVDim, m.Experts, m.TopK, m.MoEInter, m.SharedExperts, m.SharedInter,
			m.OutputGate, m.Quant.FP4AttentionBF16, m.Quant.FP4SharedBF16, m.Draft.OwnLMHead, string(m.Draft.FP4Effective)}
	}
	if a(got) != a(want) {
		t.Errorf("from %s:\n got %+v\nwant %+v", dir, a(got), a(want))
	}
}
