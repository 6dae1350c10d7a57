package checkpointtest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFullFixtures writes full-size sparse checkpoints for manual runs
// of "specsim audit" when SPECSIM_FIXTURE_DIR is set:
//
//	SPECSIM_FIXTURE_DIR=/tmp/fx go test ./audit/checkpointtest -run TestWriteFullFixtures
func TestWriteFullFixtures(t *testing.T) {
	root := os.Getenv("SPECSIM_FIXTURE_DIR")
	if root == "" {
		t.Skip("SPECSIM_FIXTURE_DIR not set")
	}
	const cfg = "../../testdata/configs/"
	for _, f := range []struct {
		name   string
		build  func(string, Options) ([]Tensor, []Tensor, error)
		model  string
		shards int
	}{
		{"qwen3.5-397b-nvfp4", Qwen35MoE, "nvidia--Qwen3.5-397B-A17B-NVFP4", 94},
		{"qwen3.5-122b-nvfp4", Qwen35MoE, "nvidia--Qwen3.5-122B-A10B-NVFP4", 40},
		{"deepseek-v3.1-nvfp4", DeepSeekV3NVFP4, "nvidia--DeepSeek-V3.1-NVFP4", 100},
	} {
		dir := filepath.Join(root, f.name)
		if _, _, err := WriteFromConfigs(dir, f.build, cfg+f.model+"_config.json", cfg+f.model+"_hf_quant_config.json", Options{Shards: f.shards}); err != nil {
			t.Fatal(err)
		}
	}
}
