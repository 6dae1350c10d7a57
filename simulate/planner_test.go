package simulate

import (
	"fmt"
	"strings"
	"testing"
)

// TestSGLangAutoMemFraction recomputes server_args._handle_gpu_memory_settings
// by hand (capacity and reserve in MiB).
func TestSGLangAutoMemFraction(t *testing.T) {
	cap300 := 288e9 / (1 << 20) // 274658.2 MiB
	cap200 := 141e9 / (1 << 20)
	for _, tc := range []struct {
		name  string
		hbm   float64
		chunk int
		cgbs  int
		par   Parallel
		spec  bool
		want  float64
	}{
		// 512 + 1.5*16384 + 2*6 + 1*1024/8 = 25228, + 2048 for MTP.
		{"gb300 tp1 mtp", 288e9, 16384, 6, Parallel{TP: 1, EP: 1, PP: 1}, true, round3((cap300 - 27276) / cap300)},
		// 512 + 12288 + 512 + 1024 = 14336.
		{"h200 tp8", 141e9, 8192, 256, Parallel{TP: 8, EP: 1, PP: 1}, false, round3((cap200 - 14336) / cap200)},
		// DP attention adds 3 MiB per graph batch per rank: + 6144.
		{"gb300 dep8 mtp", 288e9, 16384, 256, Parallel{TP: 8, EP: 8, PP: 1, DPAttention: true}, true, round3((cap300 - 34816) / cap300)},
		// Small reserves are lifted to 10 GiB on large GPUs.
		{"gb300 floor", 288e9, 2048, 8, Parallel{TP: 1, EP: 1, PP: 1}, false, round3((cap300 - 10240) / cap300)},
	} {
		if got := SGLangAutoMemFraction(tc.hbm, tc.chunk, tc.cgbs, tc.par, tc.spec); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := SGLangAutoMemFraction(288e9, 16384, 6, Parallel{TP: 1, EP: 1, PP: 1}, true); got != 0.901 {
		t.Errorf("gb300 tp1 = %v, want 0.901", got)
	}
}

func round3(x float64) float64 { return float64(int(x*1000+0.5)) / 1000 }

// TestSGLangPools sizes pools on round numbers (GiB budget, 64 MiB of
// linear-attention state a request, 16 KiB of KV a token, 262144 context)
// and checks each against the hand computation in its comment.
func TestSGLangPools(t *testing.T) {
	base := Memory{Budget: 100 * gib, Weights: 60 * gib, Draft: 4 * gib, KVPerToken: 16 << 10, PageSize: 64, Fraction: 0.9}
	perReq := float64(gib) / 16
	type want struct {
		slots, tokens, reqSlots, running int
		state                            float64 // GiB
		from                             string
	}
	for _, tc := range []struct {
		name string
		mem  Memory
		per  float64
		dp   int
		c    PoolConfig
		w    want
	}{
		// rest 36; mamba budget 36*0.9/1.9 = 17.05 GiB; slots =
		// floor(17.05*16/(1+4/3)) = 116; intermediate 1/16*min(16, 38)*4 = 4;
		// state 116/16 + 4 = 11.25; KV 24.75 GiB = 1622016 tokens.
		{"radix mtp3", base, perReq, 1, PoolConfig{MaxRunning: 16, Steps: 3, RadixCache: true},
			want{116, 1622016, 16, 16, 11.25, "--max-running"}},
		// extra_buffer (SGLang's auto for Qwen3.5): 5 slots a request;
		// slots = floor(17.05*16/(1+4/5)) = 151; intermediate
		// 1/16*min(16, 30)*4 = 4; state 151/16 + 4 = 13.4375; KV 22.5625
		// GiB = 1478656 tokens.
		{"radix mtp3 extra_buffer", base, perReq, 1, PoolConfig{MaxRunning: 16, Steps: 3, RadixCache: true, ExtraBuffer: true},
			want{151, 1478656, 16, 16, 13.4375, "--max-running"}},
		// extra_buffer_lazy: 4 a request; slots floor(272.84/2) = 136;
		// state 8.5 + 4 = 12.5; KV 23.5 GiB = 1540096 tokens.
		{"radix mtp3 lazy", base, perReq, 1, PoolConfig{MaxRunning: 16, Steps: 3, RadixCache: true, ExtraBuffer: true, ExtraBufferLazy: true},
			want{136, 1540096, 16, 16, 12.5, "--max-running"}},
		// radix off: slots = max-running 6; intermediate 1/16*6*7 = 2.625;
		// state 0.375 + 2.625 = 3; KV 33 GiB = 2162688 tokens.
		{"decode mtp6", base, perReq, 1, PoolConfig{MaxRunning: 6, Steps: 6},
			want{6, 2162688, 6, 6, 3, "--max-running"}},
		// --max-mamba-cache-size 30 over 2 DP ranks: 15 slots, 3 per
		// request = 5 request slots a rank; intermediate 1/16*5*4 = 1.25;
		// state 15/16 + 1.25 = 2.1875; KV 33.8125 GiB = 2215936 tokens.
		{"mamba cap dp2", base, perReq, 2, PoolConfig{MaxRunning: 32, Steps: 3, RadixCache: true, MambaCache: 30},
			want{15, 2215936, 5, 10, 2.1875, "mamba slots (15 / 3 per request)"}},
		// No linear attention, nothing set: 36 GiB = 2359296 tokens;
		// estimate 2359296/262144*512 = 4608, clamped to 4096.
		{"plain", base, 0, 1, PoolConfig{RadixCache: true},
			want{0, 2359296, 4096, 4096, 0, "pool estimate (tokens/context_len*512, clamped 2048..4096)"}},
	} {
		m := sglangPools(tc.mem, tc.per, tc.dp, 262144, 1000, tc.c)
		got := want{m.MambaSlots, m.TokensFit, m.ReqSlots, m.MaxRunning, m.State / gib, m.ReqSlotsFrom}
		if !m.Feasible || got.slots != tc.w.slots || got.tokens != tc.w.tokens || got.reqSlots != tc.w.reqSlots ||
			got.running != tc.w.running || !near(got.state, tc.w.state, 1e-9) || got.from != tc.w.from {
			t.Errorf("%s: got %+v (feasible %v), want %+v", tc.name, got, m.Feasible, tc.w)
		}
	}
	// The one refusal: the weights alone exceed the budget.
	heavy := base
	heavy.Weights = 97 * gib
	if m := sglangPools(heavy, perReq, 1, 262144, 1000, PoolConfig{MaxRunning: 6, Steps: 3}); m.Feasible || !strings.Contains(m.Explanation, "weights alone do not fit") {
		t.Errorf("97 + 4 GiB of weights in 100: feasible %v, %q", m.Feasible, m.Explanation)
	}
}

// TestPlannerNeverRefusesWhatRan: the 1P1D deployment that ran on GB300
// (Qwen3.5-397B NVFP4, TP1 prefill, TP2 decode capped at 6) is planned, not
// refused, and says what capped each role.
func TestPlannerNeverRefusesWhatRan(t *testing.T) {
	q := Query{Workload: "agentx", GPU: "gb300", MaxRunning: 6, CUDAGraphMaxBS: 6, AgentX: "duration=300"}
	res, err := Predict(resolved(t, q), topo(t, "disagg:1xtp1+1xtp2"), 38, 6)
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	if len(res.Limits) != 2 {
		t.Fatalf("limits %+v, want prefill and decode", res.Limits)
	}
	dec := res.Limits[1]
	if dec.Role != "decode" || dec.Running != 6 || dec.CappedBy != "--max-running" || dec.CUDAGraphMaxBS != 6 {
		t.Errorf("decode limit %+v, want 6 by --max-running with graphs to 6", dec)
	}
	if pre := res.Limits[0]; pre.Role != "prefill" || pre.Running < 1 || pre.CappedBy == "" {
		t.Errorf("prefill limit %+v", pre)
	}
}

// TestMambaStrategy: SGLang v0.5.14 resolves --mamba-scheduler-strategy
// auto to extra_buffer for the hybrids it supports (server_args.py
// _handle_mamba_radix_cache, _support_mamba_cache_extra_buffer) under the
// overlap scheduler; an explicit strategy wins.
func TestMambaStrategy(t *testing.T) {
	for _, tc := range []struct {
		strategy, arch string
		extra, lazy    bool
	}{
		{"", "Qwen3_5MoeForConditionalGeneration", true, false},
		{"auto", "Qwen3NextForCausalLM", true, false},
		{"auto", "DeepseekV3ForCausalLM", false, false},
		{"no_buffer", "Qwen3_5MoeForConditionalGeneration", false, false},
		{"extra_buffer", "DeepseekV3ForCausalLM", true, false},
		{"extra_buffer_lazy", "Qwen3_5MoeForConditionalGeneration", true, true},
	} {
		if e, l := mambaExtraBuffer(tc.strategy, tc.arch); e != tc.extra || l != tc.lazy {
			t.Errorf("%q on %s: extra %v lazy %v, want %v %v", tc.strategy, tc.arch, e, l, tc.extra, tc.lazy)
		}
	}
	if err := (ServerConfig{MambaStrategy: "ping_pong"}).validate(); err == nil {
		t.Error("--mamba-scheduler-strategy ping_pong accepted")
	}
}

// TestReplayRunningCap: a trace replay given no --max-running deploys
// SGLang's speculative default of 48 (server_args.py
// _handle_speculative_decoding), raised to the session trees a worker
// serves, and states it; where the KV pool left beside the speculative
// state of that many does not hold them all at the mean context (a role
// that decodes runs no more: runningCap), it is lowered to the most it
// does hold (checked at the cap and one above it, by the planner's own
// pool), in whole requests per attention-DP rank; without speculation the
// engine's default decides (0: unset).
func TestReplayRunningCap(t *testing.T) {
	for _, c := range []struct {
		topo       string
		conc, k    int
		first, dec int // -1: lowered below the rule's (checked by the bound)
	}{
		{"agg:tp4", 16, 3, 48, 0},
		{"agg:tp4", 200, 3, -1, 0},
		{"disagg:2xtp4+3xtp4", 400, 3, 0, 134}, // prefill drafts nothing: SGLang's pool default; decode ceil(400/3)
		{"agg:tp4", 16, 0, 0, 0},
		{"agg:dep8", 50, 6, 48, 0},              // 50 trees, floored to 6 a DP rank as SGLang divides it
		{"agg:dep64", 8, 6, 64, 0},              // 48 is below one a rank: one a rank
		{"disagg:8xtp1pp8+8xtp1", 16, 6, 0, -1}, // TP1 decode of the 397B model: 48 does not even fit
	} {
		r := resolved(t, Query{GPU: "gb300", Workload: "agentx", Model: "Qwen3.5-397B-A17B", Precision: "fp4"})
		tp := topo(t, c.topo)
		sc, err := r.Scenario(tp, c.conc, c.k)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlan(sc, r.GPU)
		if err != nil {
			t.Fatalf("%s c%d k%d: %v", c.topo, c.conc, c.k, err)
		}
		first, dec := p.DeployedMaxRunning()
		t.Logf("%s c%d k%d: caps %d / %d", c.topo, c.conc, c.k, first, dec)
		last := dec // the limits' last role is the one that decodes
		if !tp.Disagg {
			last = first
		}
		if d := p.caps[len(p.caps)-1].Deployed; d != last {
			t.Errorf("%s: limits say deployed %d, the plan %d / %d", c.topo, d, first, dec)
		}
		for _, got := range []struct {
			cap, want int
			e         *Engine
			mem       Memory
			rl        role
			workers   int
		}{{first, c.first, p.agg, p.aggMem, roleAgg, 1}, {dec, c.dec, p.decode, p.decMem, roleDecode, tp.DecodeWorkers}} {
			if got.rl == roleAgg && tp.Disagg {
				got.e, got.mem, got.rl, got.workers = p.prefill, p.preMem, rolePrefill, tp.PrefillWorkers
			}
			if got.e == nil {
				continue // no such role in this topology
			}
			if got.want != -1 {
				if got.cap != got.want {
					t.Errorf("%s c%d k%d: caps %d / %d, want %d / %d", c.topo, c.conc, c.k, first, dec, c.first, c.dec)
				}
				continue
			}
			held := func(n int) bool {
				pc := sc.poolConfig(got.rl, ceilDiv(c.conc, got.workers), p.chunk, p.memFrac, r.GPU.GPU.Name)
				pc.MaxRunning = n
				m := got.e.PlanMemory(&sc.Workload, pc)
				return m.Feasible && int(float64(m.TokensFit)/sc.Workload.MeanContext())*got.e.Par.AttentionDP() >= n
			}
			if !(got.cap >= 1 && got.cap < max(SGLangSpecDefaultRunning, ceilDiv(c.conc, got.workers)) && held(got.cap) && !held(got.cap+1)) {
				t.Errorf("%s c%d: cap %d, want the most the pool holds at the mean context", c.topo, c.conc, got.cap)
			}
			if !strings.Contains(got.mem.ReqSlotsFrom, fmt.Sprintf("set to %d: the most", got.cap)) {
				t.Errorf("%s: cap from %q, want it to say it was lowered", c.topo, got.mem.ReqSlotsFrom)
			}
		}
	}
}
