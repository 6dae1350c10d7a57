package simulate

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/specsim/specsim/golden"
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

// TestModelFromDirGoldenCurve: a checkpoint directory finds its golden
// curve from config.json, whatever the directory is called; the name is the
// fallback. The Qwen3.5 curve key is qwen3.5-397b-a17b-nvfp4 (golden/data);
// DeepSeek-V3.1 has no curve there (TestEveryCurveHasPresetOrHint).
func TestModelFromDirGoldenCurve(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir, config, want string
	}{
		{"qwen3.5-397b-nvfp4", "nvidia--Qwen3.5-397B-A17B-NVFP4_config.json", "qwen3.5-397b-a17b-nvfp4"},
		{"my-checkpoint", "nvidia--Qwen3.5-122B-A10B-NVFP4_config.json", "qwen3.5-397b-a17b-nvfp4"},
		{"my-checkpoint", "nvidia--DeepSeek-V3.1-NVFP4_config.json", ""},
	} {
		dir := filepath.Join(t.TempDir(), tc.dir)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join("..", "testdata", "configs", tc.config))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Query{Model: dir, Precision: "fp4", GPU: "b200", Workload: "fixed", ISL: 1024, OSL: 1024, SchedOverhead: -1, SpecOverhead: -1}.Resolve(set, testCatalog)
		switch {
		case tc.want == "":
			var e *Error
			if !errors.As(err, &e) || e.Field != "AL" {
				t.Errorf("%s: %v, want no curve (an AL error)", tc.config, err)
			}
		case err != nil:
			t.Errorf("%s in %s: %v", tc.config, tc.dir, err)
		case r.Target.Curve == nil || r.Target.Curve.Model != tc.want:
			t.Errorf("%s in %s: curve %+v, want %s", tc.config, tc.dir, r.Target.Curve, tc.want)
		}
	}
}
