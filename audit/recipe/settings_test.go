package recipe

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// Settings reads a public schema-1 SGLang recipe; every expected value is
// read off the YAML by hand (backend.sglang_config.aggregated).
func TestSettings(t *testing.T) {
	rc, err := Load("../../testdata/recipes/schema1_sglang_qwen3.5_gb300-fp4_agentic_agg-tp2-c1-mtp-hicache.yaml")
	if err != nil {
		t.Fatal(err)
	}
	v := rc.Variants[0]
	known := func(name string) bool { return strings.Contains(name, "Qwen3.5-397B") }
	s, err := v.Settings(nil, SettingsOptions{Conc: 7, KnownModel: known})
	if err != nil {
		t.Fatal(err)
	}
	if s.GPU != "gb300" || s.Model != "nvidia/Qwen3.5-397B-A17B-NVFP4" || s.Precision != "fp4" || !s.Agentic || s.Engine != EngineSGLang {
		t.Errorf("deployment %q %q %q agentic %v %q", s.GPU, s.Model, s.Precision, s.Agentic, s.Engine)
	}
	if s.Disagg || s.Agg != (Layout{Workers: 1, TP: 2, EP: 1, PP: 1}) {
		t.Errorf("layout %+v disagg %v, want agg tp2", s.Agg, s.Disagg)
	}
	if s.MaxRunning != 72 || s.GraphMaxBS != 80 || s.MemFraction != 0.75 || s.Chunk != 16384 || s.KVDType != "fp8" ||
		s.MambaSSMDType != "bfloat16" || s.MoEBackend != "flashinfer_trtllm" || s.Steps != 3 || s.Conc != 1 {
		t.Errorf("settings %+v", s)
	}
	if len(s.Read) == 0 || s.Read[0] != (Setting{"gpu", "gb300", "resources.gpu_type"}) ||
		s.Read[len(s.Read)-1].Setting != "concurrency" || s.Read[len(s.Read)-1].Value != "1" ||
		!strings.HasPrefix(s.Read[len(s.Read)-1].From, "the variant's name (agg-gb300-tp2-c1-mtp-hicache-jid2530006): ") {
		t.Errorf("read %v", s.Read)
	}
	// HiCache, its ratio, the mamba cache and the page size are read
	// (lines 58 and 63-66 of the YAML) and so not listed as unmodelled;
	// HiCache's io/layout/write-policy tuning is.
	if !s.HiCache || s.HiCacheRatio != 0.9 || s.HiCacheGB != 0 || s.MambaCache != 360 || s.PageSize != 64 {
		t.Errorf("hicache %v ratio %g size %g mamba %d page %d", s.HiCache, s.HiCacheRatio, s.HiCacheGB, s.MambaCache, s.PageSize)
	}
	un := strings.Join(s.Unsupported, "\n")
	for _, k := range []string{"enable-hierarchical-cache", "hicache-ratio", "max-mamba-cache-size", "page-size", "HiCache"} {
		if strings.Contains(un, k) {
			t.Errorf("%s listed as unmodelled: %q", k, s.Unsupported)
		}
	}
	if !strings.Contains(un, "hicache-write-policy=write_back") {
		t.Errorf("hicache-write-policy not listed: %q", s.Unsupported)
	}
	// The concurrency comes from the name's "c1" token (the recipe's
	// benchmark names none); the caller's --conc and --model win; an AL off the golden one by
	// 0.01 is noted, one within the recipes' rounding is not.
	al := 3.39
	s, err = v.Settings(nil, SettingsOptions{Model: "qwen3.5", Conc: 16, ConcGiven: true})
	if err != nil || s.Model != "qwen3.5" || s.Conc != 16 {
		t.Fatalf("given model and conc: %+v, %v", s, err)
	}
	s.GoldenAL = &al
	s.CheckAL(3.394, "curve")
	n := len(s.Unsupported)
	s.CheckAL(3.40, "curve")
	if len(s.Unsupported) != n+1 || !strings.Contains(s.Unsupported[n], "golden AL 3.39 differs from the AL simulated, 3.40") {
		t.Errorf("CheckAL: %q", s.Unsupported)
	}
	var ue *UnknownModelError
	if _, err := v.Settings(nil, SettingsOptions{Conc: 7, KnownModel: func(string) bool { return false }}); !errors.As(err, &ue) || len(ue.Names) == 0 {
		t.Errorf("no known model: err = %v, want an UnknownModelError", err)
	}
}

// TestSettingsAllReduceFusionFlags: a recipe's
// enforce-disable-flashinfer-allreduce-fusion is read (with the deprecated
// enable flag beside it: SGLang lets the disable win, which the simulator
// applies) and named in Read.
func TestSettingsAllReduceFusionFlags(t *testing.T) {
	rc, err := Load("testdata/allreduce_fusion_disabled.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := rc.Variants[0].Settings(nil, SettingsOptions{Model: "qwen3.5"})
	if err != nil {
		t.Fatal(err)
	}
	if !s.AllReduceFusion || !s.NoAllReduceFusion {
		t.Errorf("enable %v, enforce-disable %v: want both read", s.AllReduceFusion, s.NoAllReduceFusion)
	}
	var read []string
	for _, r := range s.Read {
		read = append(read, r.From)
	}
	if j := strings.Join(read, " "); !strings.Contains(j, ".enforce-disable-flashinfer-allreduce-fusion") {
		t.Errorf("read from %q, want the enforce-disable key", j)
	}
	if u := strings.Join(s.Unsupported, "\n"); strings.Contains(u, "allreduce-fusion") {
		t.Errorf("listed as unsupported: %q", u)
	}
}

// A disaggregated recipe: HiCache is read off the prefill role (lines
// 107 and 113 of the YAML; decode runs without a prefix cache), the page
// size both roles share (64, lines 98 and 174) is applied, and the mamba
// cache is applied per role: 1100 on prefill and 1024 on decode (lines 110
// and 187), with the prefill role's mamba-scheduler-strategy extra_buffer.
func TestSettingsDisaggPerRole(t *testing.T) {
	rc, err := Load("../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_disagg-variants.yaml:override_tp4_tp4_c8")
	if err != nil {
		t.Fatal(err)
	}
	s, err := rc.Variants[0].Settings(nil, SettingsOptions{Model: "qwen3.5", Conc: 8})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Disagg || !s.HiCache || s.HiCacheRatio != 0.9 || s.PageSize != 64 || s.MambaCache != 1024 || s.PrefillMambaCache != 1100 || s.MambaStrategy != "extra_buffer" {
		t.Errorf("disagg %v hicache %v ratio %g page %d mamba %d / prefill %d strategy %q", s.Disagg, s.HiCache, s.HiCacheRatio, s.PageSize, s.MambaCache, s.PrefillMambaCache, s.MambaStrategy)
	}
	if un := strings.Join(s.Unsupported, "\n"); strings.Contains(un, "max-mamba-cache-size") || strings.Contains(un, "mamba-scheduler-strategy") {
		t.Errorf("applied mamba settings still listed as not applied: %q", s.Unsupported)
	}
}

// TestRecipesValid: every recipe the project keeps (published ones and
// the check's fixtures) passes
// InvalidValues (the ranges are the engines' own, so a real recipe that
// launched cannot fail them).
func TestRecipesValid(t *testing.T) {
	files, err := filepath.Glob("../../testdata/recipes/*.yaml")
	own, err2 := filepath.Glob("testdata/*.yaml")
	files = append(files, own...)
	if err != nil || err2 != nil || len(files) == 0 {
		t.Fatal("no recipes", err, err2)
	}
	for _, f := range files {
		rc, err := Load(f)
		if err != nil {
			continue // not a recipe (the master-config excerpt)
		}
		for _, v := range rc.Variants {
			if iv := v.InvalidValues(); len(iv) > 0 {
				t.Errorf("%s:%s: %v", f, v.Name, iv)
			}
		}
	}
}

// A --conc given over a recipe's concurrency says what it overrode: the
// disaggregated bundle's override_tp4_tp4_c8 names 8 (its variant name).
func TestSettingsConcOverride(t *testing.T) {
	rc, err := Load("../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_disagg-variants.yaml:override_tp4_tp4_c8")
	if err != nil {
		t.Fatal(err)
	}
	s, err := rc.Variants[0].Settings(nil, SettingsOptions{Model: "qwen3.5", Conc: 16, ConcGiven: true})
	if err != nil {
		t.Fatal(err)
	}
	var from string
	for _, r := range s.Read {
		if r.Setting == "concurrency" {
			from = r.From
		}
	}
	if s.Conc != 16 || from != "overridden by --conc (the recipe's 8 from the variant's name)" {
		t.Errorf("conc %d, from %q", s.Conc, from)
	}
}
