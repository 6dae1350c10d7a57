package model

import (
	"strings"
	"testing"
)

// Issue 14 items 2 and 5: a draft-layer count of 2^52 made predict loop for
// ever, and 512 shared experts of 17592186044417 wrapped an int product
// into 9.79 GiB (or negative) of weights that passed the fit check.
func TestDimensionBounds(t *testing.T) {
	base := `"hidden_size": 4096, "num_hidden_layers": 60, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936, "num_experts": 512, "moe_intermediate_size": 1024, "num_experts_per_tok": 10`
	for _, tc := range []struct{ extra, want string }{
		{`"text_config": {"mtp_num_hidden_layers": 4503599627370496}`, "mtp_num_hidden_layers: 4503599627370496 is beyond any real model (at most 64)"},
		{`"n_shared_experts": 512, "shared_expert_intermediate_size": 17592186044417`, "shared_expert_intermediate_size: 17592186044417 is beyond any real model (at most 1048576)"},
		{`"num_hidden_layers": 1000000`, "num_hidden_layers: 1000000 is beyond"},
		{`"vocab_size": 1e9`, "vocab_size: 1000000000 is beyond"},
		// each dimension within its bound, their product past any hardware:
		// 4096 layers x 65536 experts x 3 x 131072 x 1048576 = 1.1e20
		{`"hidden_size": 131072, "num_hidden_layers": 4096, "num_experts": 65536, "moe_intermediate_size": 1048576`, "imply about 1.11e+20 parameters, more than the 1e+14"},
	} {
		_, err := Parse([]byte(`{` + base + `, ` + tc.extra + `}`))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.extra, err, tc.want)
		}
	}
	c, err := Parse([]byte(`{` + base + `, "mtp_num_hidden_layers": 1, "n_shared_experts": 1, "shared_expert_intermediate_size": 1024}`))
	if err != nil {
		t.Fatal(err)
	}
	// by hand: attention 4096 x (2x32x128 + 2x4x128) = 37748736, plus
	// (0 + 0 + 4096) x 32 x 128 = 16777216; MLP 3 x 4096 x 512 x 1024 +
	// 3 x 4096 x 1024 + 4096 x 512 = 6457131008; 2 x 4096^2 = 33554432 per
	// layer; 61 layers; embedding and head 2 x 151936 x 4096
	perLayer := 37748736.0 + 16777216 + 6457131008 + 33554432
	want := 61*perLayer + 2*151936*4096
	if got := c.paramEstimate(); got != want {
		t.Errorf("estimate %.0f, want %.0f", got, want)
	}
}
