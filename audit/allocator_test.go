package audit

import "testing"

func TestAllocatorFootprint(t *testing.T) {
	const MiB = 1 << 20
	cases := []struct {
		name  string
		sizes []int64
		want  int64
	}{
		{"empty", nil, 0},
		{"small share a 2 MiB segment", []int64{8192, 8192, 512, 1}, 2 * MiB},
		{"small overflow", []int64{MiB, MiB, 1}, 4 * MiB},
		{"mid share a 20 MiB segment", []int64{4 * MiB, 8 * MiB, 4 * MiB}, 20 * MiB},
		{"mid overflow", []int64{8 * MiB, 8 * MiB, 8 * MiB}, 40 * MiB},
		{"large rounds to 2 MiB", []int64{485 * MiB, 10 * MiB}, 486*MiB + 10*MiB},
		{"512-byte rounding", []int64{2*MiB - 100, 2*MiB - 100}, 20 * MiB},
	}
	for _, c := range cases {
		if got := allocatorFootprint(c.sizes); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

func TestEngineParam(t *testing.T) {
	for in, want := range map[string]string{
		"mtp.layers.0.mlp.experts.7.gate_proj":     "mtp.layers.0.mlp.experts.w13",
		"mtp.layers.0.mlp.experts.7.up_proj":       "mtp.layers.0.mlp.experts.w13",
		"mtp.layers.0.mlp.experts.7.down_proj":     "mtp.layers.0.mlp.experts.w2",
		"mtp.layers.0.mlp.experts":                 "mtp.layers.0.mlp.experts", // fused gate_up_proj + down_proj
		"mtp.layers.0.self_attn.k_proj":            "mtp.layers.0.self_attn.qkv_proj",
		"mtp.layers.0.mlp.shared_expert.up_proj":   "mtp.layers.0.mlp.shared_expert.gate_up_proj",
		"mtp.layers.0.mlp.shared_expert.down_proj": "mtp.layers.0.mlp.shared_expert.down_proj",
		"mtp.fc": "mtp.fc",
	} {
		if got := engineParam(in); got != want {
			t.Errorf("engineParam(%q) = %q, want %q", in, got, want)
		}
	}
}
