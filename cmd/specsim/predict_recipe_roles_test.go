package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestPredictRecipePerRole: predict --recipe applies each disaggregated
// role's own running cap and memory share to that role, lists the decode
// role's prefill chunk (decode workers do not prefill) with its value, and
// echoes the deployment that ran. Values read off the YAML by hand:
// schema2 ...disagg-variants.yaml prefill mem-fraction-static 0.8 (line
// 102), chunked-prefill-size 65536 (103); decode 4096 (185), 0.75 (186),
// max-running-requests 512 (188); schema1 trtllm c704 prefill
// max_batch_size 64 per attention-DP rank x 4 ranks = 256, decode 32 x 4 =
// 128.
func TestPredictRecipePerRole(t *testing.T) {
	type role struct {
		Role        string  `json:"role"`
		MaxRunning  int     `json:"max_running"`
		ReqSlots    int     `json:"request_slots_per_rank"`
		MemFraction float64 `json:"mem_fraction"`
	}
	for _, tc := range []struct {
		recipe, topology   string
		pre, dec           role
		chunk              int
		unmodelled         string
		preRunning, preMem float64
	}{
		{"schema2_qwen3.5_sglang_gb300-fp4_agentx_disagg-variants.yaml:override_tp4_tp4_c16", "disagg:1xtp4+1xtp4",
			role{Role: "prefill", MemFraction: 0.8}, role{Role: "decode", ReqSlots: 512, MemFraction: 0.75}, 65536,
			"roles.decode.args.chunked-prefill-size 4096", 0, 0.8},
		{"schema1_trtllm_qwen3.5_gb300-fp4_agentx_disagg-3p2d-dep4-dep4-c704-mtp.yaml", "disagg:3xdep4+2xdep4",
			role{Role: "prefill", ReqSlots: 64, MemFraction: 0.8}, role{Role: "decode", ReqSlots: 32, MemFraction: 0.8}, 8192,
			"backend.trtllm_config.decode.max_num_tokens 224", 256, 0},
	} {
		code, out, errs := runCLI("predict", "--recipe", filepath.Join("..", "..", "testdata", "recipes", tc.recipe), "--json")
		if code != exitOK {
			t.Fatalf("%s: exit %d %s", tc.recipe, code, errs)
		}
		var d struct {
			Variants []struct {
				Unsupported []string `json:"unsupported"`
				Result      struct {
					Limits []role `json:"limits"`
				} `json:"result"`
				Inputs struct {
					Topology string `json:"topology"`
					Query    struct {
						Topology string `json:"topology"`
						Chunk    int    `json:"chunk"`
						Server   struct {
							PrefillMaxRunning  float64 `json:"prefill_max_running"`
							PrefillMemFraction float64 `json:"prefill_mem_fraction"`
						} `json:"server"`
					} `json:"query"`
				} `json:"inputs"`
			} `json:"variants"`
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.Variants) != 1 || len(d.Variants[0].Result.Limits) != 2 {
			t.Fatalf("%s: %v %s", tc.recipe, err, out)
		}
		v := d.Variants[0]
		pre, dec := v.Result.Limits[0], v.Result.Limits[1]
		if pre.Role != tc.pre.Role || pre.MemFraction != tc.pre.MemFraction || tc.pre.ReqSlots > 0 && pre.ReqSlots != tc.pre.ReqSlots {
			t.Errorf("%s: prefill %+v, want %+v", tc.recipe, pre, tc.pre)
		}
		if dec.Role != tc.dec.Role || dec.MemFraction != tc.dec.MemFraction || dec.ReqSlots != tc.dec.ReqSlots {
			t.Errorf("%s: decode %+v, want %+v", tc.recipe, dec, tc.dec)
		}
		q := v.Inputs.Query
		if v.Inputs.Topology != tc.topology || q.Topology != tc.topology || q.Chunk != tc.chunk ||
			q.Server.PrefillMaxRunning != tc.preRunning || q.Server.PrefillMemFraction != tc.preMem {
			t.Errorf("%s: inputs topology %q query %+v, want %s chunk %d prefill running %g mem %g", tc.recipe, v.Inputs.Topology, q, tc.topology, tc.chunk, tc.preRunning, tc.preMem)
		}
		if !strings.Contains(strings.Join(v.Unsupported, "\n"), tc.unmodelled) {
			t.Errorf("%s: %q not listed as not modelled: %q", tc.recipe, tc.unmodelled, v.Unsupported)
		}
	}
}
