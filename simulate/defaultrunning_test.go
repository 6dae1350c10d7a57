package simulate

import (
	"math"
	"testing"
)

// TestEngineDefaultRunningCap: a vLLM or TensorRT-LLM instance given no
// running cap (an AgentX trace replay leaves it unset) runs under the
// engine's own default, vLLM's max_num_seqs 1024 on GPUs of 70 GiB or more
// and TensorRT-LLM's max_batch_size 2048, per attention-DP rank; where the
// linear-attention state of that many requests leaves no room for their KV
// at the mean context, under the most requests whose state and KV fit.
func TestEngineDefaultRunningCap(t *testing.T) {
	for _, tc := range []struct {
		name, model, prec, engine, gpu, topo string
		k                                    int
		perRank                              int // 0: the closed-form balance below
	}{
		{"vllm deepseek tp8", "DeepSeek-R1", "fp8", "vllm", "h200", "agg:tp8", 3, 1024},
		{"trtllm deepseek dep8", "DeepSeek-R1", "fp8", "trtllm", "b200", "agg:dep8", 3, 2048},
		{"vllm qwen3.5 tp4", "Qwen3.5-397B-A17B", "fp4", "vllm", "gb300", "agg:tp4", 3, 0},
		{"trtllm qwen3.5 tp4", "Qwen3.5-397B-A17B", "fp4", "trtllm", "gb300", "agg:tp4", 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := resolved(t, Query{Model: tc.model, Precision: tc.prec, Engine: tc.engine, GPU: tc.gpu, Workload: "agentx", AgentX: "duration=300", AL: 2.5})
			tp := topo(t, tc.topo)
			sc, err := r.Scenario(tp, 64, tc.k)
			if err != nil {
				t.Fatal(err)
			}
			e, err := NewEngine(sc.Model, r.GPU.withDomain(), tp.Agg, sc.Engine)
			if err != nil {
				t.Fatal(err)
			}
			mem := e.PlanMemory(&sc.Workload, PoolConfig{Role: roleAgg, MemFraction: DefaultMemFraction, Steps: tc.k, RadixCache: true})
			want := tc.perRank
			if want == 0 {
				// Budget less weights and draft over one request's state
				// plus its KV at the mean context (vLLM: share of all HBM;
				// TensorRT-LLM: share of what the weights, draft and state
				// leave, so solve f*(HBM - W - D - n*s) >= n*kv*ctx).
				w, d, s := e.weightBytes(), e.draftBytes(), e.stateBytes(tc.k)
				kv := e.kvPerToken(true) * sc.Workload.MeanContext()
				hbm := e.GPU.HBMBytes
				if tc.engine == "trtllm" {
					want = int(math.Floor(DefaultMemFraction * (hbm - w - d) / (DefaultMemFraction*s + kv)))
				} else {
					want = int(math.Floor((DefaultMemFraction*hbm - w - d) / (s + kv)))
				}
			}
			if d := mem.ReqSlots - want; d < -1 || d > 1 || !mem.Feasible {
				t.Errorf("request slots per rank %d (%s, feasible %v), want %d", mem.ReqSlots, mem.ReqSlotsFrom, mem.Feasible, want)
			}
		})
	}
}

// TestEngineDefaultNotQueued: the review's run, vLLM and TensorRT-LLM
// AgentX replays at 64 sessions on agg:tp4, no longer admit one request at
// a time.
func TestEngineDefaultNotQueued(t *testing.T) {
	for _, engine := range []string{"vllm", "trtllm"} {
		res, err := Predict(resolved(t, Query{Engine: engine, GPU: "gb300", Workload: "agentx", AgentX: "duration=300"}), topo(t, "agg:tp4"), 64, 3)
		if err != nil {
			t.Fatalf("%s: %v", engine, err)
		}
		if l := res.Limits[0]; l.Running < 64 || l.CappedBy == "--max-running" {
			t.Errorf("%s: agg limit %+v, want at least the 64 sessions, not capped by an unset --max-running", engine, l)
		}
	}
}
