package simulate

import (
	"math"
	"testing"
)

// kvLane is an aggregated lane of one rank under policy kv: a pool of
// pool tokens holding held of them, and running requests given as
// (ISL, OSL, tokens emitted), their context ISL + emitted.
func kvLane(kv kvPolicy, pool, held int, ratio float64, running [][3]int) *instance {
	in := &instance{kv: kv, ranks: 1, capTok: pool, rankTok: []int{held}, rankRun: []int{len(running)},
		live: []int{len(running)}, ratio: []float64{ratio}}
	for _, m := range running {
		r := &simRequest{Request: Request{ISL: m[0], OSL: m[1]}}
		in.running = append(in.running, r)
		in.hot = append(in.hot, memberState{left: int32(m[1] - m[2]), ctx: m[0] + m[2]})
		in.ctxSum += m[0] + m[2]
	}
	in.top = len(running)
	return in
}

// TestAdmits checks SGLang's and vLLM's admission against sums done by
// hand.
func TestAdmits(t *testing.T) {
	running := [][3]int{{1000, 6000, 904}, {1000, 1100, 1000}}
	for _, c := range []struct {
		name     string
		kv       kvPolicy
		isl, osl int
		k        int
		want     bool
	}{
		// SGLang: 10,000 - 4,000 held - 0.5 x (min(5,096, 4,096) + 100)
		// = 3,902 tokens left; a request needs its prompt and its output
		// clipped to 4,096, strictly less than that.
		{"sglang fits", kvShare, 1000, 2800, 0, true},   // 3,800 < 3,902
		{"sglang short", kvShare, 1000, 2950, 0, false}, // 3,950
		{"sglang clips the output", kvShare, 0, 9000, 0, false},
		{"sglang clipped fits", kvShare, 3000, 900, 0, true}, // 3,900 < 3,902
		// vLLM: 6,000 free, of which the two running requests take 2k+1
		// each first (k+1 new tokens, k lookahead slots); the new one
		// needs its prompt and k lookahead slots.
		{"vllm fits", kvPaged, 5990, 8000, 1, true},   // 5,991 <= 5,994
		{"vllm short", kvPaged, 5990, 8000, 3, false}, // 5,993 > 5,986
	} {
		in := kvLane(c.kv, 10000, 4000, 0.5, running)
		if c.kv == kvShare {
			in.shareOffsets()
			if got := in.runOff[0]; got != 2098 {
				t.Fatalf("%s: running offset %v, want 0.5 x 4,196 = 2,098", c.name, got)
			}
		}
		r := &simRequest{Request: Request{ISL: c.isl, OSL: c.osl}}
		if got := in.admits(r, c.isl, c.k); got != c.want {
			t.Errorf("%s: admits %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRetract checks who leaves a short pool and SGLang's new ratio.
func TestRetract(t *testing.T) {
	// Four requests of a 10,000-token pool: (ISL, OSL, emitted).
	running := [][3]int{{2000, 4000, 500}, {1000, 4000, 100}, {3000, 4000, 100}, {500, 4000, 1500}}
	held := 2500 + 1100 + 3100 + 2000 // 8,700
	t.Run("sglang without a draft", func(t *testing.T) {
		in := kvLane(kvShare, 10000, held, 0.3, running)
		// Fewest emitted first (100), then the longest prompt: the
		// 3,000-token one (3,100 held); the three left then fit one
		// token each, so one goes.
		out := in.retract(0, 0, nil)
		if len(out) != 1 || out[0].ISL != 3000 || out[0].redo != 100 || out[0].prompt() != 3100 {
			t.Fatalf("retracted %+v, want the 3,000-token prompt with 100 to redo", out)
		}
		if in.rankTok[0] != held-3100 || in.live[0] != 3 || len(in.running) != 3 || in.rankRun[0] != 3 {
			t.Errorf("after: held %d live %d running %d slots %d", in.rankTok[0], in.live[0], len(in.running), in.rankRun[0])
		}
		// (500 + 100 + 1,500 emitted + 20 x 3) / (3 x 4,000 + 1).
		if got, want := in.ratio[0], 2160.0/12001; math.Abs(got-want) > 1e-12 {
			t.Errorf("ratio %v, want %v", got, want)
		}
	})
	t.Run("sglang with a draft", func(t *testing.T) {
		// retract_decode does not sort under speculative decoding: the
		// back of the batch goes, (500, 4000, 1500), 2,000 held; ratio
		// (500 + 100 + 100 + 20 x 3) / 12,001.
		in := kvLane(kvShare, 10000, held, 0.3, running)
		out := in.retract(0, 3, nil)
		if len(out) != 1 || out[0].ISL != 500 || out[0].prompt() != 2000 {
			t.Fatalf("retracted %+v, want the back of the batch", out)
		}
		if got, want := in.ratio[0], 760.0/12001; math.Abs(got-want) > 1e-12 {
			t.Errorf("ratio %v, want %v", got, want)
		}
	})
	t.Run("how many go", func(t *testing.T) {
		// Four alike requests of 20 tokens each in a 75-token pool,
		// short of 4 x 7 tokens at k 3: both engines give up the back two
		// (60 + 3 x 7 > 75, 40 + 2 x 7 <= 75); SGLang's ratio is then
		// (20 emitted + 20 x 2) / 201.
		alike := [][3]int{{10, 100, 10}, {10, 100, 10}, {10, 100, 10}, {10, 100, 10}}
		in := kvLane(kvShare, 75, 80, 0.5, alike)
		if out := in.retract(0, 3, nil); len(out) != 2 {
			t.Errorf("sglang retracted %d, want 2", len(out))
		}
		if got, want := in.ratio[0], 60.0/201; math.Abs(got-want) > 1e-12 {
			t.Errorf("ratio %v, want %v", got, want)
		}
		in = kvLane(kvPaged, 75, 80, 0, alike)
		if out := in.retract(0, 3, nil); len(out) != 2 {
			t.Errorf("vllm preempted %d, want 2", len(out))
		}
	})
	t.Run("vllm", func(t *testing.T) {
		// The last scheduled goes first: (500, 4000, 1500), 2,000 held;
		// 1,300 + 2,000 free then hold the three left's 7 tokens each.
		in := kvLane(kvPaged, 10000, held, 0, running)
		out := in.retract(0, 3, nil)
		if len(out) != 1 || out[0].ISL != 500 || out[0].prompt() != 2000 {
			t.Fatalf("preempted %+v, want the last scheduled", out)
		}
	})
	t.Run("never the last", func(t *testing.T) {
		in := kvLane(kvPaged, 100, 2500, 0, running[:1])
		if out := in.retract(0, 3, nil); len(out) != 0 {
			t.Errorf("retracted the only request")
		}
	})
}

// TestKVBoundAdmission runs the 8 x H200 FP8 TP8 instance at 1024/8192
// tokens and 512 sessions, whose 3,111,232-token pool holds 375 whole
// reservations of the mean request (0.9 x 9,216 tokens) but 512 requests
// at their mean context (0.9 x (1,024 + 4,096) = 4,608 tokens, 2.36M):
// SGLang and vLLM run more than 375 at once and retract some on the way,
// TensorRT-LLM, which reserves whole outputs, never retracts. The
// mean-field estimate sizes the batch by the same rule.
func TestKVBoundAdmission(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds")
	}
	for _, engine := range []string{"sglang", "vllm", "trtllm"} {
		r := resolved(t, Query{GPU: "h200", Precision: "fp8", Engine: engine, Workload: "fixed", ISL: 1024, OSL: 8192, RangeRatio: 0.8})
		res, err := Predict(r, topo(t, "agg:tp8"), 512, 6)
		if err != nil {
			t.Fatalf("%s: %v", engine, err)
		}
		est, err := EstimatePoint(r, topo(t, "agg:tp8"), 512, 6)
		if err != nil {
			t.Fatalf("%s: %v", engine, err)
		}
		if engine == "trtllm" {
			if res.Retracted != 0 {
				t.Errorf("trtllm retracted %d", res.Retracted)
			}
			continue
		}
		if res.Retracted == 0 || res.DecodeBatch <= 375 || est.DecodeBatch <= 375 {
			t.Errorf("%s: retracted %d, mean decode batch %.1f (estimate %.1f), want some and above 375", engine, res.Retracted, res.DecodeBatch, est.DecodeBatch)
		}
	}
	// SGLang without its radix cache admits the benchmark's ignore_eos
	// requests by add_one_req_ignore_eos, on whole outputs: no more than
	// the 375 whole reservations run, and none is retracted.
	r := resolved(t, Query{GPU: "h200", Precision: "fp8", Workload: "fixed", ISL: 1024, OSL: 8192, RangeRatio: 0.8})
	r.Q.Server.NoPrefixCache = true
	if res, err := Predict(r, topo(t, "agg:tp8"), 512, 6); err != nil || res.Retracted != 0 || res.DecodeBatch > 376 {
		t.Errorf("sglang --no-prefix-cache: %v, retracted %d, mean decode batch %.1f, want none and at most 375 (+1 for an idle rank's exception)", err, res.Retracted, res.DecodeBatch)
	}
	// SGLang's disaggregated decode side (kvDecodeReserve): the decode
	// worker runs more than the whole reservations its pool holds
	// (pool tokens over 0.9 x 9,216), retracting some to the host.
	r = resolved(t, Query{GPU: "h200", Precision: "fp8", Workload: "fixed", ISL: 1024, OSL: 8192, RangeRatio: 0.8})
	res, err := Predict(r, topo(t, "disagg:1xtp8+1xtp8"), 512, 6)
	if err != nil {
		t.Fatal(err)
	}
	whole := 0.0
	for _, l := range res.Limits {
		if l.Role == "decode" {
			whole = math.Floor(float64(l.PoolTokens) / 8294.4)
		}
	}
	if whole == 0 || res.Retracted == 0 || res.DecodeBatch <= whole {
		t.Errorf("sglang decode worker: retracted %d, mean decode batch %.1f, want some and above the %.0f whole reservations", res.Retracted, res.DecodeBatch, whole)
	}
	// Not KV-bound: no retraction.
	r = resolved(t, Query{GPU: "h200", Precision: "fp8", Workload: "fixed", ISL: 1024, OSL: 1024})
	res, err = Predict(r, topo(t, "agg:tp8"), 64, 6)
	if err != nil {
		t.Fatal(err)
	}
	if res.Retracted != 0 {
		t.Errorf("1024/1024 at 64 sessions retracted %d", res.Retracted)
	}
}
