package audit_test

import (
	"testing"

	"github.com/specsim/specsim/audit"
)

func TestExcludeMatchingOnRelease(t *testing.T) {
	mc := loadReal(t, "nvidia--Qwen3.5-397B-A17B-NVFP4")
	ex := mc.HFQuant.Exclude
	// The research notes ran both engines' matchers on this list.
	cases := []struct {
		prefix       string
		vllm, sglang bool
	}{
		{"mtp.fc", false, false},
		{"mtp.layers.0.self_attn.qkv_proj", true, true},
		{"mtp.layers.0.mlp.experts", true, true},
		{"mtp.layers.0.mlp.gate", true, true},
		{"mtp.layers.0.mlp.shared_expert.gate_up_proj", true, true},
		{"model.language_model.layers.0.mlp.gate", false, false},
		{"model.language_model.layers.0.linear_attn.in_proj_qkvz", true, true},
		{"model.language_model.layers.3.mlp.experts", false, false},
		{"lm_head", true, true},
	}
	for _, c := range cases {
		if got := audit.VLLMExcluded(ex, c.prefix); got != c.vllm {
			t.Errorf("vLLM %s: %v, want %v", c.prefix, got, c.vllm)
		}
		if got := audit.SGLangExcluded(ex, c.prefix); got != c.sglang {
			t.Errorf("SGLang %s: %v, want %v", c.prefix, got, c.sglang)
		}
	}
	fixed := append(append([]string{}, ex...), "mtp*")
	if !audit.VLLMExcluded(fixed, "mtp.fc") || !audit.SGLangExcluded(fixed, "mtp.fc") {
		t.Error(`adding "mtp*" must cover mtp.fc in both engines`)
	}
}

// Where the two engines' semantics part ways.
func TestExcludeSemanticsDiffer(t *testing.T) {
	cases := []struct {
		pattern, prefix string
		vllm, sglang    bool
	}{
		{"mtp*", "model.mtp.fc", false, true},                  // SGLang also tests each dotted part
		{"a?c", "abc", true, false},                            // fnmatch '?' is one character; SGLang leaves it a regex quantifier
		{"a?c", "c", false, true},                              // ... so "a?c" fullmatches "c"
		{"model.layers.1*", "model.layers.10.mlp", true, true}, // both over-match prefix wildcards
		{"layers.[0-2].x", "layers.1.x", true, true},
		{"layers.[!0-2].x", "layers.5.x", true, false},           // fnmatch negation; Go/Python regex read "!" literally
		{"gate", "model.layers.0.mlp.gate_up_proj", true, false}, // vLLM's legacy substring test
		{"mlp.gate", "model.layers.0.mlp.gate", true, false},     // SGLang fullmatch only; vLLM substring
	}
	for _, c := range cases {
		if got := audit.VLLMExcluded([]string{c.pattern}, c.prefix); got != c.vllm {
			t.Errorf("vLLM %q ~ %q: %v, want %v", c.pattern, c.prefix, got, c.vllm)
		}
		if got := audit.SGLangExcluded([]string{c.pattern}, c.prefix); got != c.sglang {
			t.Errorf("SGLang %q ~ %q: %v, want %v", c.pattern, c.prefix, got, c.sglang)
		}
	}
}

func TestFnmatch(t *testing.T) {
	cases := []struct {
		name, pattern string
		want          bool
	}{
		{"a.b.c", "a*", true}, {"a.b.c", "*c", true}, {"a.b.c", "a.?.c", true}, {"a.bb.c", "a.?.c", false},
		{"a[1]", "a[[]1]", true}, {"x", "[", false}, {"[", "[", true}, {"a.b", "a.b", true}, {"axb", "a.b", false},
		{"]", "[]]", true}, {"a+b", "a+b", true},
	}
	for _, c := range cases {
		if got := audit.Fnmatch(c.name, c.pattern); got != c.want {
			t.Errorf("Fnmatch(%q, %q) = %v, want %v", c.name, c.pattern, got, c.want)
		}
	}
}

func TestEnginePrefix(t *testing.T) {
	for in, want := range map[string]string{
		"model.layers.3.mlp.experts.17.up_proj": "model.layers.3.mlp.experts",
		"mtp.layers.0.mlp.experts.0.down_proj":  "mtp.layers.0.mlp.experts",
		"model.layers.3.mlp.shared_experts.up":  "model.layers.3.mlp.shared_experts.up",
		"model.layers.3.mlp.experts.gate_up":    "model.layers.3.mlp.experts.gate_up",
	} {
		if got := audit.EnginePrefix(in); got != want {
			t.Errorf("EnginePrefix(%q) = %q, want %q", in, got, want)
		}
	}
}
