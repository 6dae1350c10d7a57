package simulate

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzModelDirMemory drives config.json dimensions, large ones included,
// through the model reader, the engine and its memory sizing: a config is
// either refused with an error naming the file or sized to finite,
// non-negative bytes at least its embedding and lm_head (the products once
// wrapped to negative GiB), and quickly (a draft-layer loop once ran for
// ever).
func FuzzModelDirMemory(f *testing.F) {
	f.Add(uint64(4096), uint64(60), uint64(512), uint64(1024), uint64(1), uint64(1024), uint64(1), uint64(151936))
	f.Add(uint64(4096), uint64(60), uint64(512), uint64(1024), uint64(512), uint64(17592186044417), uint64(1), uint64(151936))
	f.Add(uint64(4096), uint64(60), uint64(512), uint64(1024), uint64(0), uint64(0), uint64(4503599627370496), uint64(151936))
	f.Add(uint64(131072), uint64(4096), uint64(65536), uint64(1048576), uint64(1024), uint64(1048576), uint64(64), uint64(1<<24))
	f.Add(uint64(7168), uint64(61), uint64(256), uint64(2048), uint64(1), uint64(2048), uint64(1), uint64(129280))
	g := gpu(f, "h200")
	f.Fuzz(func(t *testing.T, hidden, layers, experts, moeInter, shared, sharedInter, mtp, vocab uint64) {
		dir := t.TempDir()
		cfg := fmt.Sprintf(`{"model_type": "qwen3_5_moe", "text_config": {"hidden_size": %d, "num_hidden_layers": %d, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": %d, "num_experts": %d, "moe_intermediate_size": %d, "num_experts_per_tok": 8, "n_shared_experts": %d, "shared_expert_intermediate_size": %d, "mtp_num_hidden_layers": %d, "max_position_embeddings": 262144}}`,
			hidden, layers, vocab, experts, moeInter, shared, sharedInter, mtp)
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := ModelFromDir(dir)
		if err != nil {
			return
		}
		e, err := NewEngine(m, g, Parallel{TP: 8, EP: 8, PP: 1}, EngineConfig{Precision: FP8, SchedOverhead: -1, SpecOverhead: -1})
		if err != nil {
			return
		}
		w := FixedWorkload(1024, 1024)
		k := 0
		if m.Draft.Kind != "" {
			k = 3
		}
		mem := e.Memory(&w, 64, k, 0.9)
		embed := 2 * float64(m.Vocab) * float64(m.Hidden) * 2 / 8 // embedding + lm_head, BF16, over TP 8
		for _, v := range []float64{mem.Weights, mem.Draft, mem.State, mem.KVPerToken} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("memory %+v of %s", mem, cfg)
			}
		}
		if mem.Weights < embed*(1-1e-9) {
			t.Fatalf("weights %.4g bytes below the embedding and lm_head alone (%.4g): %s", mem.Weights, embed, cfg)
		}
	})
}
