package audit

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/specsim/specsim/audit/checkpointtest"
)

// Without a config.json (or one naming no MTP key and no layer count) the
// MTP flag is unknown: the audit said "config says =0 but the weights hold
// 1 MTP layers", a key-less message about a flag nobody set.
func TestMTPLayerCountNeedsTheFlag(t *testing.T) {
	d := checkpointtest.Dense{Hidden: 64, Inter: 128, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 256}
	mtp := []checkpointtest.Tensor{
		{Name: "mtp.fc.weight", DType: "BF16", Shape: []int64{64, 128}},
		{Name: "mtp.layers.0.mlp.up_proj.weight", DType: "BF16", Shape: []int64{128, 64}},
		{Name: "mtp.layers.1.mlp.up_proj.weight", DType: "BF16", Shape: []int64{128, 64}},
	}
	withFlag := func(key string, n int) []byte {
		var m map[string]any
		if err := json.Unmarshal(d.Config(), &m); err != nil {
			t.Fatal(err)
		}
		m[key] = n
		b, _ := json.Marshal(m)
		return b
	}
	for _, tc := range []struct {
		name   string
		config []byte
		want   string // the mtp-layer-count-mismatch message, "" for none
	}{
		{"no config.json", nil, ""},
		{"no key, no layer count", []byte(`{"architectures": ["LlamaForCausalLM"]}`), ""},
		{"flag 1, two layers ship", withFlag("mtp_num_hidden_layers", 1), "config says mtp_num_hidden_layers=1 but the weights hold 2 MTP layers"},
		{"flag 2, two layers ship", withFlag("mtp_num_hidden_layers", 2), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ckpt")
			if err := checkpointtest.WriteCheckpoint(dir, append(d.Tensors(), mtp...), 1, tc.config, nil); err != nil {
				t.Fatal(err)
			}
			r, err := Run(dir, Config{TP: []int{1}})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, f := range r.Findings {
				if f.Code == "mtp-layer-count-mismatch" {
					got = f.Message
				}
			}
			if got != tc.want {
				t.Errorf("mtp-layer-count-mismatch %q, want %q", got, tc.want)
			}
		})
	}
}
