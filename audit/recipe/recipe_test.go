package recipe

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

// roleWant is what one role must resolve to: its draft length and the AL
// synthetic acceptance gives it (0 for none).
type roleWant struct {
	role string
	k    int
	al   float64
	env  map[string]string
}

type variantWant struct {
	name     string
	roles    []roleWant
	findings []string // "severity code", sorted
}

func sglangEnv(al string) map[string]string {
	return map[string]string{sglangLen: al, sglangMethod: agentxMethod, sglangTokenMode: agentxTokenMode}
}

func checkFile(t *testing.T, arg string, opt Options) *Report {
	t.Helper()
	r, err := Load(arg)
	if err != nil {
		t.Fatalf("%s: %v", arg, err)
	}
	if opt.Curves == nil {
		opt.Curves = publishedCurves
	}
	return Check(r, opt)
}

func findingKeys(fs []Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, string(f.Severity)+" "+f.Code)
	}
	sort.Strings(out)
	return out
}

func compareReport(t *testing.T, rep *Report, want []variantWant) {
	t.Helper()
	if len(rep.Variants) != len(want) {
		var names []string
		for _, v := range rep.Variants {
			names = append(names, v.Name)
		}
		t.Fatalf("%s: %d variants %v, want %d", rep.File, len(rep.Variants), names, len(want))
	}
	for i, w := range want {
		v := rep.Variants[i]
		if v.Name != w.name {
			t.Errorf("%s variant %d: name %q, want %q", rep.File, i, v.Name, w.name)
		}
		if len(v.Roles) != len(w.roles) {
			t.Errorf("%s %s: %d roles, want %d", rep.File, v.Name, len(v.Roles), len(w.roles))
			continue
		}
		for j, rw := range w.roles {
			rr := v.Roles[j]
			k := 0
			if rr.DraftLength != nil {
				k = *rr.DraftLength
			}
			al := 0.0
			if rr.ExpectedAL != nil {
				al = *rr.ExpectedAL
			}
			if rr.Role != rw.role || k != rw.k || al != rw.al {
				t.Errorf("%s %s role %d: (%s, k=%d, AL=%v), want (%s, k=%d, AL=%v)", rep.File, v.Name, j, rr.Role, k, al, rw.role, rw.k, rw.al)
			}
			if rw.env != nil && !reflect.DeepEqual(rr.Env, rw.env) {
				t.Errorf("%s %s %s: env %v, want %v", rep.File, v.Name, rr.Role, rr.Env, rw.env)
			}
		}
		got := findingKeys(v.Findings)
		wantF := append([]string{}, w.findings...)
		sort.Strings(wantF)
		if !reflect.DeepEqual(got, wantF) {
			t.Errorf("%s %s: findings %v, want %v\n%v", rep.File, v.Name, got, wantF, v.Findings)
		}
	}
}

// TestSharedRecipes checks every real recipe copied from the reference set
// against ALs worked out by hand from the golden table (thinking on).
func TestSharedRecipes(t *testing.T) {
	const dir = "../../testdata/recipes/"
	fp8 := "error " + CodeFP8NextNMoE
	graph := "warning " + CodeCUDAGraphBelowCap
	tests := []struct {
		file string
		want []variantWant
	}{
		{
			// Schema 1, agg TP2, NEXTN with 3 steps: golden qwen3.5 thinking_on[3] = 3.39,
			// which the recipe hard-codes; cuda-graph-max-bs 80 >= max-running-requests 72.
			file: "schema1_sglang_qwen3.5_gb300-fp4_agentic_agg-tp2-c1-mtp-hicache.yaml",
			want: []variantWant{{name: "agg-gb300-tp2-c1-mtp-hicache-jid2530006",
				roles: []roleWant{{RoleAgg, 3, 3.39, sglangEnv("3.39")}}}},
		},
		{
			// Schema 1, DeepSeek-V4-Pro: EAGLE with 3 steps on both roles; golden
			// dsv4 thinking_on[3] = 2.49 = the decode env. Prefill runs DP attention
			// (128 / 8 = 16 per rank) but prefill does not decode, so no graph check;
			// decode TP4 without DP attention: 128 graphs >= 128 requests.
			file: "schema1_sglang_deepseek-v4_agentic_disagg-2p1d-dep8-tp4-c80-mtp.yaml",
			want: []variantWant{{name: "disagg-gb300-2p1d-dep8-tp4-c80-mtp-kvoffload",
				// Schema 1 gets no injection: the env is what the recipe sets
				// by hand (decode only; the prefill role's acceptance does not
				// reach the measured decode).
				roles: []roleWant{{RolePrefill, 3, 2.49, map[string]string{}}, {RoleDecode, 3, 2.49, sglangEnv("2.49")}}}},
		},
		{
			// Schema 1, TensorRT-LLM: decode MTP max_draft_len 6 -> AL(6) = 4.80, forced
			// accepted drafts 4.80 - 1 = 3.8 = the recipe's '3.80'. Prefill carries the
			// same variable without speculative_config: info. Decode graphs to 32 =
			// max_batch_size 32 per attention-DP rank.
			file: "schema1_trtllm_qwen3.5_gb300-fp4_agentx_disagg-3p2d-dep4-dep4-c704-mtp.yaml",
			want: []variantWant{{name: "disagg-gb300-3p2d-dep4-dep4-c704-b32-mtp-kvoffload",
				roles:    []roleWant{{RolePrefill, 0, 0, map[string]string{}}, {RoleDecode, 6, 4.8, map[string]string{trtForced: "3.80"}}},
				findings: []string{"info " + CodeSimAccNonSpecRole}}},
		},
	}
	// Schema 2 agg bundle: seven name-only overrides of a base with NEXTN 3
	// steps -> 3.39 each; graphs 80 >= cap 72.
	agg := []variantWant{}
	for _, c := range []string{"c1", "c24", "c32", "c40", "c48", "c52", "c64"} {
		agg = append(agg, variantWant{name: "override_" + c, roles: []roleWant{{RoleAgg, 3, 3.39, sglangEnv("3.39")}}})
	}
	tests = append(tests, struct {
		file string
		want []variantWant
	}{"schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml", agg})

	// Schema 2 disagg bundle, overrides in sorted order. The base decode env
	// sets SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1 (error in every variant, inherited).
	// Decode NEXTN 3 steps -> 3.39. TP4 variants: max-running-requests 512 with
	// no DP attention is 512 per rank, above every cuda-graph-max-bs they set
	// (160, 64, 64, 80, 64, 128) -> warning. tp2_tp2_c72: cap 80 <= graphs 128,
	// and the prefill role gains NEXTN 3 steps -> 3.39 too.
	decodeOnly := []roleWant{{RolePrefill, 0, 0, map[string]string{}}, {RoleDecode, 3, 3.39, sglangEnv("3.39")}}
	disagg := []variantWant{
		{name: "override_tp2_tp2_c72", roles: []roleWant{{RolePrefill, 3, 3.39, sglangEnv("3.39")}, {RoleDecode, 3, 3.39, sglangEnv("3.39")}}, findings: []string{fp8}},
	}
	for _, c := range []string{"c128", "c16", "c32", "c64", "c8", "c96"} {
		disagg = append(disagg, variantWant{name: "override_tp4_tp4_" + c, roles: decodeOnly, findings: []string{fp8, graph}})
	}
	tests = append(tests, struct {
		file string
		want []variantWant
	}{"schema2_qwen3.5_sglang_gb300-fp4_agentx_disagg-variants.yaml", disagg})

	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			compareReport(t, checkFile(t, dir+tt.file, Options{}), tt.want)
		})
	}
}

func TestSharedRecipeDetails(t *testing.T) {
	rep := checkFile(t, "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_disagg-variants.yaml:override_tp4_tp4_c8", Options{})
	v := rep.Variants[0]
	for _, f := range v.Findings {
		switch f.Code {
		case CodeFP8NextNMoE:
			for _, want := range []string{"roles.decode.env", "inherited from base", "ignores it for nvidia/Qwen3.5-397B-A17B-NVFP4", "prohibits"} {
				if !strings.Contains(f.Message, want) {
					t.Errorf("fp8 message lacks %q: %s", want, f.Message)
				}
			}
		case CodeCUDAGraphBelowCap:
			if !strings.Contains(f.Message, "cuda-graph-max-bs 64") || !strings.Contains(f.Message, "max-running-requests 512") {
				t.Errorf("graph message: %s", f.Message)
			}
		}
	}
	d := v.Variant().Role(RoleDecode)
	if d.MoERunner != "flashinfer_trtllm" || d.Spec.MoERunner != "flashinfer_trtllm" || d.Quantization != "modelopt_fp4" || d.TP != 4 {
		t.Errorf("decode resolution: %+v spec %+v", d, d.Spec)
	}
	if d.Env["SGLANG_ENABLE_SPEC_V2"] != "1" || d.EnvFrom["SGLANG_ENABLE_SPEC_V2"] != "roles.decode.env" {
		t.Errorf("decode env not inherited from base: %q from %q", d.Env["SGLANG_ENABLE_SPEC_V2"], d.EnvFrom["SGLANG_ENABLE_SPEC_V2"])
	}

	// thinking off: qwen3.5 thinking_off[3] = 3.33, and the TRT recipe's
	// hard-coded 3.80 (for thinking on) no longer matches AL(6)-1 = 4.48-1 = 3.48.
	rep = checkFile(t, "../../testdata/recipes/schema1_trtllm_qwen3.5_gb300-fp4_agentx_disagg-3p2d-dep4-dep4-c704-mtp.yaml", Options{Thinking: "off"})
	if al := *rep.Variants[0].Roles[1].ExpectedAL; al != 4.48 {
		t.Errorf("thinking off AL(6) = %v, want 4.48", al)
	}
	if got := findingKeys(rep.Variants[0].Findings); !reflect.DeepEqual(got, []string{"error " + CodeSimAccLenMismatch, "info " + CodeSimAccNonSpecRole}) {
		t.Errorf("thinking off findings %v", got)
	}
	if rep.Errors() != 1 {
		t.Errorf("Errors() = %d, want 1", rep.Errors())
	}
}

// TestPlantedViolations: every check fires on a fixture planted for it and
// stays quiet on the clean base.
func TestPlantedViolations(t *testing.T) {
	sp := func(k int, al float64) []roleWant {
		return []roleWant{{RolePrefill, k, al, nil}, {RoleDecode, 3, al, nil}}
	}
	clean := sp(3, 3.39)
	compareReport(t, checkFile(t, "testdata/planted_sglang.yaml", Options{}), []variantWant{
		{name: "override_algo_conflict", roles: clean, findings: []string{"error " + CodeSpecAlgorithmClash}},
		{name: "override_clean", roles: clean},
		// speculative-algorithm: null deletes the decode flag (null deletes in a
		// merge); the AL comes from decode, so nobody gets one.
		{name: "override_decode_without_spec", roles: []roleWant{{RolePrefill, 3, 0, nil}, {RoleDecode, 0, 0, nil}},
			findings: []string{"warning " + CodeGenerationNotSpec}},
		{name: "override_default_cap", roles: clean, findings: []string{"warning " + CodeCUDAGraphBelowCap}},
		{name: "override_dp_attention_covered", roles: clean},
		// 512 / 8 = 64 requests per DP-attention rank > 32 graphs.
		{name: "override_dp_attention_short", roles: clean, findings: []string{"warning " + CodeCUDAGraphBelowCap}},
		{name: "override_draft_quant", roles: clean, findings: []string{"error " + CodeDraftQuantization}},
		{name: "override_draft_tokens", roles: clean, findings: []string{"warning " + CodeNumDraftTokens}},
		{name: "override_draft_unquant", roles: clean},
		{name: "override_fixed_token", roles: clean, findings: []string{"error " + CodeSimAccTokenMode}},
		{name: "override_fp8_nextn_off", roles: clean},
		{name: "override_fp8_nextn_recipe_wide", roles: clean, findings: []string{"error " + CodeFP8NextNMoE}},
		// 9 steps: the golden curve stops at 8.
		{name: "override_k9", roles: []roleWant{{RolePrefill, 9, 0, nil}, {RoleDecode, 9, 0, nil}},
			findings: []string{"error " + CodeDraftLengthRange, "error " + CodeDraftLengthRange}},
		{name: "override_len_only", roles: clean, findings: []string{"warning " + CodeSimAccIncomplete}},
		{name: "override_multinomial", roles: clean, findings: []string{"error " + CodeSimAccMethod}},
		{name: "override_no_steps", roles: []roleWant{{RolePrefill, 3, 0, nil}, {RoleDecode, 0, 0, nil}},
			findings: []string{"error " + CodeDraftLengthMissing}},
		// prefill 5 steps, decode 3: both get AL(3) = 3.39.
		{name: "override_prefill_k5", roles: sp(5, 3.39), findings: []string{"info " + CodeDraftLengthDiffers}},
		// the recipe-wide values equal the golden ones, so only the info.
		{name: "override_recipe_wide_sim", roles: clean, findings: []string{"info " + CodeSimAccRecipeWide}},
		{name: "override_topk4", roles: clean, findings: []string{"error " + CodeRealDraftTokenTopK}},
		// 4.8 is AL(6); the recipe runs 3 steps: AL(3) = 3.39.
		{name: "override_wrong_len", roles: clean, findings: []string{"error " + CodeSimAccLenMismatch}},
	})

	// DeepSeek family: 2.54 is AL(4), the recipe runs 3 steps (AL 2.49); the
	// FP8 NEXTN env acts on this family.
	rep := checkFile(t, "testdata/planted_deepseek_fp8.yaml", Options{})
	compareReport(t, rep, []variantWant{{name: "planted-dsv4",
		roles:    []roleWant{{RolePrefill, 0, 0, nil}, {RoleDecode, 3, 2.49, sglangEnv("2.54")}},
		findings: []string{"error " + CodeFP8NextNMoE, "error " + CodeSimAccLenMismatch}}})
	for _, f := range rep.Variants[0].Findings {
		if f.Code == CodeFP8NextNMoE && (strings.Contains(f.Message, "ignores") || !strings.Contains(f.Message, "FP8")) {
			t.Errorf("DeepSeek fp8 message should say it acts: %s", f.Message)
		}
	}

	// vLLM: 4 tokens -> AL(4) = 3.97, hard-coded 3.39; method standard; FP8 draft.
	compareReport(t, checkFile(t, "testdata/planted_vllm.yaml", Options{}), []variantWant{{name: "base",
		roles: []roleWant{{RoleAgg, 4, 3.97, map[string]string{
			"args.speculative-config.rejection_sample_method":     "synthetic",
			"args.speculative-config.synthetic_acceptance_length": "3.97"}}},
		findings: []string{"error " + CodeDraftQuantization, "error " + CodeSimAccLenMismatch, "error " + CodeSimAccMethod}}})

	// TensorRT-LLM: 6 drafts -> AL 4.80, forced must be 3.8, recipe has 4.80;
	// graphs to 16 < 32 per rank. The -V2 hub name still finds the curve.
	compareReport(t, checkFile(t, "testdata/planted_trtllm.yaml", Options{}), []variantWant{{name: "planted-trt",
		roles:    []roleWant{{RolePrefill, 0, 0, nil}, {RoleDecode, 6, 4.8, map[string]string{trtForced: "4.80"}}},
		findings: []string{"error " + CodeSimAccLenMismatch, "warning " + CodeCUDAGraphBelowCap, "warning " + CodeSimAccWrongEngine}}})

	// zip: steps [2,3,4] -> AL 2.73, 3.39, 3.97.
	compareReport(t, checkFile(t, "testdata/zip_steps.yaml", Options{}), []variantWant{
		{name: "zip_override_steps[0]", roles: []roleWant{{RoleAgg, 2, 2.73, sglangEnv("2.73")}}},
		{name: "zip_override_steps[1]", roles: []roleWant{{RoleAgg, 3, 3.39, sglangEnv("3.39")}}},
		{name: "zip_override_steps[2]", roles: []roleWant{{RoleAgg, 4, 3.97, sglangEnv("3.97")}}},
	})

	// Duplicate key: the last value (6 steps) wins as in PyYAML -> AL(6) = 4.8.
	rep = checkFile(t, "testdata/duplicate_key.yaml", Options{})
	// Schema 1 without simulation env: no injection, so real acceptance.
	compareReport(t, rep, []variantWant{{name: "dup", roles: []roleWant{{RoleAgg, 6, 4.8, map[string]string{}}},
		findings: []string{"error " + CodeSimAccMissing}}})
	if got := findingKeys(rep.Findings); !reflect.DeepEqual(got, []string{"warning " + CodeDuplicateKey}) {
		t.Errorf("duplicate findings %v", got)
	}

	compareReport(t, checkFile(t, "testdata/unknown_model.yaml", Options{}), []variantWant{{name: "unknown-model",
		roles: []roleWant{{RoleAgg, 3, 0, map[string]string{}}}, findings: []string{"error " + CodeModelUnknown}}})
	// A role that forces its AL with AgentX's method and token mode makes
	// the missing curve a warning naming the AL (2.4) and where it is set;
	// the length alone (engine-default method) stays an error.
	rep = checkFile(t, "testdata/unknown_model_handset.yaml:override_len_only", Options{})
	compareReport(t, rep, []variantWant{{name: "override_len_only",
		roles: []roleWant{{RoleAgg, 3, 0, nil}}, findings: []string{"error " + CodeModelUnknown, "warning " + CodeSimAccIncomplete}}})
	rep = checkFile(t, "testdata/unknown_model_handset.yaml:override_complete", Options{})
	compareReport(t, rep, []variantWant{{name: "override_complete",
		roles: []roleWant{{RoleAgg, 3, 0, nil}}, findings: []string{"warning " + CodeModelUnknown}}})
	// It does not send the user to another model's curve (the review found
	// it listing every golden key as the remedy).
	if m := rep.Variants[0].Findings[0].Message; !strings.Contains(m, "roles.agg SGLANG_SIMULATE_ACC_LEN sets the AL 2.4 itself") || strings.Contains(m, "FILL-IN") || strings.Contains(m, "pass --model") {
		t.Errorf("hand-set model-unknown message: %s", m)
	}
	// --model rescues it.
	compareReport(t, checkFile(t, "testdata/unknown_model.yaml", Options{Model: "qwen3.5"}), []variantWant{{name: "unknown-model",
		roles: []roleWant{{RoleAgg, 3, 3.39, map[string]string{}}}, findings: []string{"error " + CodeSimAccMissing}}})

	// Not agentic: info, thinking on assumed (2 steps -> 2.73); --thinking off
	// silences it and gives thinking_off[2] = 2.70.
	compareReport(t, checkFile(t, "testdata/fixed_seq_len.yaml", Options{}), []variantWant{{name: "fixed-seq",
		roles: []roleWant{{RoleAgg, 2, 2.73, nil}}, findings: []string{"info " + CodeNotAgentic}}})
	compareReport(t, checkFile(t, "testdata/fixed_seq_len.yaml", Options{Thinking: "off"}), []variantWant{{name: "fixed-seq",
		roles: []roleWant{{RoleAgg, 2, 2.7, map[string]string{}}}}})
}

func TestFormatAL(t *testing.T) {
	// Python's "%g": what InferenceX writes into the env.
	for in, want := range map[float64]string{4.80: "4.8", 3.39: "3.39", 4.80 - 1: "3.8", 5.04 - 1: "4.04", 2: "2", 1.93: "1.93"} {
		if got := FormatAL(in); got != want {
			t.Errorf("FormatAL(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestCurveID(t *testing.T) {
	tests := []struct {
		prefix, algo, draft, sample, want string
	}{
		{"qwen3.5", "NEXTN", "", "", "qwen3.5_mtp"},
		{"qwen3.5", "EAGLE", "", "", "qwen3.5_mtp"},
		{"dsv4", "MTP", "", "", "dsv4_mtp"},
		{"dsv4", "deepseek_mtp", "", "", "dsv4_mtp"},
		{"kimik2.5", "EAGLE", "", "", "kimik2.5_eagle3"},
		{"minimaxm3", "eagle3", "org/minimax-m3-eagle3-gqa", "", "minimaxm3_eagle3_gqa"},
		{"minimaxm3", "NEXTN", "org/minimax-m3-eagle3", "", "minimaxm3_eagle3"},
		{"dsv4", "DSPARK", "", "", "dsv4-pro-0813-dspark"},
		{"kimik3", "dspark", "", "greedy", "kimik3_dspark"},
		{"kimik3", "dspark", "", "probabilistic", "kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method"},
		{"kimik3", "dspark", "", "", ""},
	}
	for _, tt := range tests {
		got := curveID(tt.prefix, &Spec{Algorithm: tt.algo, DraftModel: tt.draft, DraftSampleMethod: tt.sample})
		if got != tt.want {
			t.Errorf("curveID(%s, %s) = %q, want %q", tt.prefix, tt.algo, got, tt.want)
		}
	}
}
