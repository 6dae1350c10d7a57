package simulate

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/specsim/specsim/audit/model"
	"github.com/specsim/specsim/golden"
	"github.com/specsim/specsim/kernels"
)

// testCatalog is the embedded GPU catalog, its calibrations fitted once for
// the package's tests.
var testCatalog = kernels.DefaultCatalog()

// testCurves are the embedded golden curves.
var testCurves = func() *golden.Set {
	s, err := golden.Default()
	if err != nil {
		panic(err)
	}
	return s
}()

func gpu(t testing.TB, name string) *kernels.GPU {
	t.Helper()
	g, err := testCatalog.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b)) }

// tinyDense is a 2-layer dense GQA model small enough to price by hand.
func tinyDense() *Model {
	return &Model{Name: "tiny-dense", Architecture: model.Architecture{Hidden: 256, Layers: 2, Vocab: 1000, Attention: GQA, Heads: 4, KVHeads: 2, HeadDim: 64,
		DenseInter: 512, MaxContext: 4096}}
}

// tinyMoE is a 1-layer MoE model with one shared expert and an MTP draft.
func tinyMoE() *Model {
	return &Model{Name: "tiny-moe", Architecture: model.Architecture{Hidden: 128, Layers: 1, Vocab: 512, Attention: GQA, Heads: 4, KVHeads: 4, HeadDim: 32,
		Experts: 8, TopK: 2, MoEInter: 64, SharedExperts: 1, SharedInter: 64, MaxContext: 4096},
		Draft: DraftSpec{Kind: "mtp", Layers: 1, MoE: true, FP4Effective: "bf16"}}
}

// TestDecodeStepByHand prices a plain decode of the tiny dense model at TP1
// op by op, with the shapes written out by hand from the architecture.
func TestDecodeStepByHand(t *testing.T) {
	m := tinyDense()
	g := gpu(t, "h200")
	e, err := NewEngine(m, g, Parallel{TP: 1, EP: 1, PP: 1}, EngineConfig{Precision: BF16, SchedOverhead: 0.1e-3, SpecOverhead: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := kernels.NewCoster(g)
	const B, ctx = 8, 1000 // ctx bucket: (1000>>8)<<8 + 128 = 896
	kv := 896 + 1
	perLayer := must(t)(c.GEMM("bf16", B, 4*64+2*2*64, 256)).Seconds + // q, k, v projections
		must(t)(c.Attention(kernels.AttentionShape{Batch: B, QLen: 1, KVLen: kv, Heads: 4, KVHeads: 2, HeadDim: 64, KVDType: "fp8"})).Seconds +
		must(t)(c.GEMM("bf16", B, 256, 4*64)).Seconds + // o_proj
		must(t)(c.GEMM("bf16", B, 2*512, 256)).Seconds + must(t)(c.GEMM("bf16", B, 256, 512)).Seconds + // gate_up, down
		2*must(t)(c.Norm(B, 256)).Seconds +
		3*must(t)(c.Elementwise(float64(B*256)*2*2)).Seconds // rope + KV write, q and k norms (BF16: no activation quantization)
	// Each layer also waits 25 us between its dependent kernels (layerGap).
	want := 2*(perLayer+25e-6) + must(t)(c.LMHeadSample(B, 256, 1000, "bf16")).Seconds + c.Launch(2*14+6, true).Seconds + 0.1e-3
	got := e.DecodeStep(B, 0, ctx)
	if !near(got.Total(), want, 1e-9) {
		t.Errorf("DecodeStep = %.6f ms, want %.6f ms by hand", got.Total()*1e3, want*1e3)
	}
	if got.Communication != 0 || got.Draft != 0 || got.MoE != 0 {
		t.Errorf("TP1 plain decode has communication %g, draft %g, moe %g", got.Communication, got.Draft, got.MoE)
	}
}

// TestVerifyAndDraftByHand prices one MTP iteration (k = 2) of the tiny MoE
// model at TP2 EP2: verify over 3 tokens per request, one draft decode step
// and the draft-extend forward over 3 tokens.
func TestVerifyAndDraftByHand(t *testing.T) {
	m := tinyMoE()
	g := gpu(t, "b200")
	e, err := NewEngine(m, g, Parallel{TP: 2, EP: 2, PP: 1}, EngineConfig{Precision: FP8, SchedOverhead: 0, SpecOverhead: 0})
	if err != nil {
		t.Fatal(err)
	}
	c := kernels.NewCoster(g)
	const B, k = 4, 2
	q := k + 1
	T := B * q // 12 tokens
	kv := 128 + q
	attn := func(tokens, qlen, kvlen int, dt kernels.DType) float64 {
		return must(t)(c.GEMM(dt, tokens, 2*32+2*2*32, 128)).Seconds +
			must(t)(c.Attention(kernels.AttentionShape{Batch: B, QLen: qlen, KVLen: kvlen, Heads: 2, KVHeads: 2, HeadDim: 32, KVDType: "fp8"})).Seconds +
			must(t)(c.GEMM(dt, tokens, 128, 2*32)).Seconds
	}
	moe := func(tokens int, dt kernels.DType, eff float64) float64 {
		return must(t)(c.GEMM("bf16", tokens, 8, 128)).Seconds +
			must(t)(c.MoE(kernels.MoEShape{Tokens: tokens, Experts: 4, TopK: 1, Hidden: 128, Inter: 64, DType: dt})).Seconds/eff // each EP rank: every token, one of its two picks
	}
	shared := func(tokens int, dt kernels.DType) float64 {
		return must(t)(c.GEMM(dt, tokens, 2*32, 128)).Seconds + must(t)(c.GEMM(dt, tokens, 128, 32)).Seconds
	}
	// SGLang's custom all-reduce at TP2 (published H100 figures, scaled to
	// NVLink 5): 3.7 us at 512 B and 3.9 us at 4 KiB; messages of 3 KiB and
	// 6 KiB interpolate log-log between them.
	comm := func(tokens int) float64 {
		ar, ok := c.CustomAllReduce(float64(tokens*128*2), 2)
		if !ok {
			t.Fatalf("custom all-reduce not taken for %d tokens", tokens)
		}
		return 2 * ar.Seconds
	}
	// SGLang's lm_head at TP2 over the tiny model's 512-entry vocabulary
	// (LogitsProcessor._get_logits): each rank's GEMM and sampling over its
	// 256 entries, the all-gather of every row's BF16 half (256 x 2 bytes),
	// then per row, counted by hand: the FP32 copy of all 512 logits reads
	// 1024 and writes 2048 bytes, and sampling reads the 256 FP32 entries
	// of the other half, 1024 bytes: 4096 bytes per row.
	lm := func(rows, vocab int) float64 {
		if vocab != 512 {
			t.Fatalf("lm priced by hand for a vocabulary of 512, got %d", vocab)
		}
		return must(t)(c.LMHeadSample(rows, 128, 256, "bf16")).Seconds + c.Collective("allgather", float64(rows*256*2), 2).Seconds +
			must(t)(c.Elementwise(float64(rows*4096))).Seconds
	}
	// rope + KV write, q and k norms, FP8 quantization of the attention and
	// expert inputs, top-k routing: six activation-sized kernels per layer.
	aux := func(tokens int) float64 { return 6 * must(t)(c.Elementwise(float64(tokens*128)*2*2)).Seconds }
	verify := attn(T, q, kv, "fp8") + moe(T, "fp8", e.TargetMoEEff) + shared(T, "fp8") + 2*must(t)(c.Norm(T, 128)).Seconds + aux(T) + comm(T) +
		lm(T, 512) + c.Launch(14+6, true).Seconds + 25e-6 // one layer's inter-kernel gap (layerGap)
	draftStep := func(tokens, qlen, kvlen, rows int) float64 {
		return must(t)(c.GEMM("fp8", tokens, 128, 256)).Seconds + attn(tokens, qlen, kvlen, "fp8") + moe(tokens, "fp8", e.DraftMoEEff) +
			shared(tokens, "fp8") + 3*must(t)(c.Norm(tokens, 128)).Seconds + aux(tokens) + comm(tokens) + lm(rows, 512) + c.Launch(20, true).Seconds +
			25e-6 // the draft layer's inter-kernel gap
	}
	draft := draftStep(B, 1, 128+1+1, B) + draftStep(T, q, kv, T)
	got := e.DecodeStep(B, k, 100) // ctx bucket 0 -> 128
	if !near(got.Draft, draft, 1e-9) {
		t.Errorf("draft = %.6f ms, want %.6f ms", got.Draft*1e3, draft*1e3)
	}
	if !near(got.Total()-got.Draft, verify, 1e-9) {
		t.Errorf("verify = %.6f ms, want %.6f ms", (got.Total()-got.Draft)*1e3, verify*1e3)
	}
}

func TestBF16DraftCostsMoreThanNVFP4(t *testing.T) {
	m, _ := LookupPreset("Qwen3.5-397B-A17B")
	g := gpu(t, "gb300")
	par := Parallel{TP: 2, EP: 1, PP: 1}
	bf, err := NewEngine(m, g, par, EngineConfig{Precision: FP4, SchedOverhead: -1, SpecOverhead: -1})
	if err != nil {
		t.Fatal(err)
	}
	fp4, err := NewEngine(m, g, par, EngineConfig{Precision: FP4, DraftDType: "nvfp4", SchedOverhead: -1, SpecOverhead: -1})
	if err != nil {
		t.Fatal(err)
	}
	if bf.Draft.Experts != "bf16" || fp4.Draft.Experts != "nvfp4" {
		t.Fatalf("draft dtypes %s / %s", bf.Draft.Experts, fp4.Draft.Experts)
	}
	// Unset --moe-runner-backend is SGLang's "auto", which v0.5.14's
	// _handle_model_specific_adjustments resolves to flashinfer_trtllm for
	// Qwen3.5 on SM100 (the draft inherits it: kernels
	// TestSGLangDraftInheritsTargetBackend); on Hopper it stays auto and
	// the unquantized draft MoE runs Triton.
	if bf.DraftBackend != "flashinfer_trtllm" || bf.DraftFellBack {
		t.Errorf("BF16 draft MoE on auto, GB300: %s (fell back %v), want flashinfer_trtllm", bf.DraftBackend, bf.DraftFellBack)
	}
	hop, err := NewEngine(m, gpu(t, "h200"), Parallel{TP: 8, EP: 1, PP: 1}, EngineConfig{Precision: BF16, SchedOverhead: -1, SpecOverhead: -1})
	if err != nil {
		t.Fatal(err)
	}
	if hop.DraftBackend != "triton" || hop.DraftMoEEff >= 1 {
		t.Errorf("BF16 draft MoE on auto, H200: %s eff %.2f, want the slower Triton", hop.DraftBackend, hop.DraftMoEEff)
	}
	// On the recipes' flashinfer_trtllm the BF16 draft stays there; on
	// flashinfer_cutedsl it falls back.
	for backend, want := range map[string]string{"flashinfer_trtllm": "flashinfer_trtllm", "flashinfer_cutedsl": "triton"} {
		e, err := NewEngine(m, g, par, EngineConfig{Precision: FP4, MoEBackend: backend, SchedOverhead: -1, SpecOverhead: -1})
		if err != nil {
			t.Fatal(err)
		}
		if e.DraftBackend != want || e.DraftFellBack != (want != backend) {
			t.Errorf("--moe-runner-backend %s: draft on %s fellBack=%v, want %s", backend, e.DraftBackend, e.DraftFellBack, want)
		}
	}
	for _, b := range []int{1, 8, 64} {
		a, n := bf.DecodeStep(b, 6, 4096).Draft, fp4.DecodeStep(b, 6, 4096).Draft
		if !(a > n) {
			t.Errorf("batch %d: BF16 draft %.3f ms is not slower than NVFP4 %.3f ms", b, a*1e3, n*1e3)
		}
	}
	// Weight bytes differ by exactly the draft's expert parameters times
	// (2 - 0.5625) bytes: 512 routed experts of 3 x 4096 x 1024 at TP2 (EP1:
	// every expert, half its intermediate) and the shared expert halved.
	// Attention and the fusion projection stay BF16 either way, as the
	// target's attention does in the NVFP4 release.
	experts := 512.0 * 3 * 4096 * 512
	shared := 3.0 * 4096 * 1024 / 2
	want := (experts + shared) * (2 - 0.5625)
	got := bf.draftBytes() - fp4.draftBytes()
	if !near(got, want, 1e-9) {
		t.Errorf("BF16 - NVFP4 draft bytes = %.0f, want %.0f", got, want)
	}
}

func TestMemoryInfeasible(t *testing.T) {
	m, _ := LookupPreset("DeepSeek-V3")
	r := &Resolved{Model: m, GPU: GPUSpec{GPU: gpu(t, "h100")}, Workload: FixedWorkload(1024, 1024), Engine: EngineConfig{Precision: BF16}}
	sc, err := r.Scenario(Topology{Agg: Parallel{TP: 8, EP: 1, PP: 1}}, 8, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewPlan(sc, r.GPU)
	var inf *InfeasibleError
	if !errors.As(err, &inf) {
		t.Fatalf("DeepSeek-V3 BF16 on 8 x H100: err %v, want InfeasibleError", err)
	}
	// 671B parameters in BF16 over 8 GPUs is ~160 GiB a GPU against 80 GB.
	if inf.Mem.Weights/gib < 140 || !strings.Contains(err.Error(), "the weights alone do not fit") {
		t.Errorf("weights %.1f GiB; message:\n%v", inf.Mem.Weights/gib, err)
	}
}

// TestWeightsMatchParameterCount checks the per-GPU weight bytes against the
// published total parameter count: Qwen3.5-397B-A17B in BF16 at TP1 holds
// about 397B parameters (the vision tower and MTP excluded) = ~740 GiB.
func TestWeightsMatchParameterCount(t *testing.T) {
	for _, c := range []struct {
		name   string
		params float64
	}{{"Qwen3.5-397B-A17B", 397e9}, {"DeepSeek-V3", 671e9}, {"Qwen3.5-35B-A3B", 35e9}, {"Kimi-K2.5", 1.03e12}} {
		m, _ := LookupPreset(c.name)
		e, err := NewEngine(m, gpu(t, "b300"), Parallel{TP: 1, EP: 1, PP: 1}, EngineConfig{Precision: BF16})
		if err != nil {
			t.Fatal(err)
		}
		params := e.weightBytes() / 2
		if !near(params, c.params, 0.06) {
			t.Errorf("%s: %.1fB parameters, want about %.0fB", c.name, params/1e9, c.params/1e9)
		}
	}
}

// TestLocalRouting checks that one EP rank's restated routing gives the
// expected distinct experts and routed rows of the global top-k routing.
func TestLocalRouting(t *testing.T) {
	for _, c := range []struct{ tokens, experts, topk, ep int }{
		{1, 256, 8, 4}, {4, 256, 8, 4}, {384, 256, 8, 8}, {1, 256, 8, 16}, {32, 256, 8, 16}, {3, 512, 10, 4}, {7, 8, 2, 1},
	} {
		tok, k := localRouting(c.tokens, c.topk, c.ep)
		local := c.experts / c.ep
		got := kernels.ExpectedDistinctExperts(tok, local, k, 0)
		// Each expert is missed by one token with probability 1 - topk/E.
		want := float64(local) * (1 - math.Pow(1-float64(c.topk)/float64(c.experts), float64(c.tokens)))
		if !near(got, want, 0.08) && math.Abs(got-want) > 0.6 {
			t.Errorf("%+v: %d tokens x top-%d on %d experts touch %.3f, want %.3f", c, tok, k, local, got, want)
		}
		if rows, wantRows := tok*k, float64(c.tokens*c.topk)/float64(c.ep); float64(rows) < wantRows || float64(rows) > wantRows+1 {
			t.Errorf("%+v: %d routed rows, want %.1f", c, rows, wantRows)
		}
	}
}

// TestDeepEPAcrossNodes: SGLang's DP-attention instance that spans two HGX
// nodes exchanges tokens with DeepEP all-to-all (FP8 dispatch to the ranks
// holding a token's experts, BF16 combine); inside one node it all-gathers.
func TestDeepEPAcrossNodes(t *testing.T) {
	m, _ := LookupPreset("DeepSeek-V3")
	g := gpu(t, "h200")
	par := Parallel{TP: 16, EP: 16, PP: 1, DPAttention: true}
	e, err := NewEngine(m, g, par, EngineConfig{Precision: FP8, EngineName: "sglang", SchedOverhead: -1, SpecOverhead: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !e.deepEP() {
		t.Fatal("dep16 on 8-GPU nodes should use DeepEP")
	}
	c := kernels.NewCoster(g)
	const ta = 2 // tokens per attention rank
	ranks := 16 * (1 - math.Pow(15.0/16, 8))
	dispatch := ta * ranks * 7168.0
	want := c.Collective("alltoall", dispatch, 16).Seconds + c.Collective("alltoall", 2*dispatch, 16).Seconds
	if got := e.layerComm(ta, 16*ta); !near(got, want, 1e-9) {
		t.Errorf("dep16 layer exchange %.2f us, want %.2f us", got*1e6, want*1e6)
	}
	inNode, _ := NewEngine(m, g, Parallel{TP: 8, EP: 8, PP: 1, DPAttention: true}, EngineConfig{Precision: FP8, EngineName: "sglang"})
	trt, _ := NewEngine(m, g, par, EngineConfig{Precision: FP8, EngineName: "trtllm"})
	if inNode.deepEP() || trt.deepEP() {
		t.Error("DeepEP is SGLang's cross-node path only")
	}
}

// TestMixedExtraByHand prices three context chunks carried by a decode
// iteration of 4 requests on the tiny MoE model with DP attention over 2
// ranks (TensorRT-LLM): largest first to the least-loaded rank puts 300
// tokens on rank 0 and 200 + 50 on rank 1, so rank 0 sets the time.
func TestMixedExtraByHand(t *testing.T) {
	m := tinyMoE()
	g := gpu(t, "b200")
	e, err := NewEngine(m, g, Parallel{TP: 2, EP: 2, PP: 1, DPAttention: true}, EngineConfig{Precision: BF16, EngineName: "trtllm"})
	if err != nil {
		t.Fatal(err)
	}
	if !e.MixesContext() {
		t.Fatal("TensorRT-LLM carries contexts in generation iterations")
	}
	parts := []PrefillPart{{New: 300, Last: true}, {New: 200, Last: true}, {New: 50, Before: 50}}
	c := kernels.NewCoster(g)
	// Rank 0: 2 generation tokens + 300 context tokens; all ranks: 4 + 550.
	const ta, nb, tAll, total = 2, 300, 4, 550
	att := must(t)(c.GEMM("bf16", nb, 4*32+2*4*32, 128)).Seconds +
		must(t)(c.Attention(kernels.AttentionShape{Batch: 1, QLen: nb, KVLen: nb, Heads: 4, KVHeads: 4, HeadDim: 32, KVDType: "fp8", Prefill: true})).Seconds +
		must(t)(c.GEMM("bf16", nb, 128, 4*32)).Seconds
	// Router over the rank's tokens; experts: EP2 and top-2, so each rank
	// sees every token with one pick of its 4 experts.
	experts := func(tokens int) float64 {
		return must(t)(c.MoE(kernels.MoEShape{Tokens: tokens, Experts: 4, TopK: 1, Hidden: 128, Inter: 64, DType: "bf16"})).Seconds / e.TargetMoEEff
	}
	moe := must(t)(c.GEMM("bf16", ta+nb, 8, 128)).Seconds - must(t)(c.GEMM("bf16", ta, 8, 128)).Seconds + experts(tAll+total) - experts(tAll)
	shared := func(tok int) float64 {
		return must(t)(c.GEMM("bf16", tok, 128, 128)).Seconds + must(t)(c.GEMM("bf16", tok, 128, 64)).Seconds
	}
	// Norms: 2 RMSNorms; aux: rope+KV write, q/k norms, top-k routing.
	aux := func(tok int) float64 { return 4 * must(t)(c.Elementwise(float64(tok*128)*4)).Seconds }
	comm := func(tok int) float64 {
		msg := float64(tok*128) * 2
		return c.Collective("allgather", msg, 2).Seconds + c.Collective("reducescatter", 2*msg, 2).Seconds
	}
	// The gather grows by all 550 context tokens: 275 more per rank.
	want := att + moe + shared(ta+nb) - shared(ta) +
		2*(must(t)(c.Norm(ta+nb, 128)).Seconds-must(t)(c.Norm(ta, 128)).Seconds) + aux(ta+nb) - aux(ta) + comm(ta+total/2) - comm(ta) +
		must(t)(c.LMHeadSample(1, 128, 512, "bf16")).Seconds // the 300-token prompt completes
	if got := e.MixedExtra(4, 1, parts, false); !near(got, want, 1e-9) {
		t.Errorf("MixedExtra = %.3f us, want %.3f us", got*1e6, want*1e6)
	}
	// Carried by an iteration that already reads the weights, the chunks
	// cost less than the same rank's prefill forward alone.
	if got, alone := e.MixedExtra(4, 1, parts[:1], false), e.Prefill(parts[:1], false).Total(); !(got < alone) {
		t.Errorf("carried context %.1f us, alone %.1f us: sharing the iteration should be cheaper", got*1e6, alone*1e6)
	}
	// NVFP4 experts: TensorRT-LLM pads every rank to the busiest one before
	// the gather, so the exchange grows by 300 tokens per rank, not 275.
	fp4, err := NewEngine(m, g, Parallel{TP: 2, EP: 2, PP: 1, DPAttention: true}, EngineConfig{Precision: FP4, EngineName: "trtllm"})
	if err != nil {
		t.Fatal(err)
	}
	if !fp4.dpPadding() || e.dpPadding() {
		t.Fatal("DP padding is TensorRT-LLM's NVFP4 path only")
	}
	unpadded := *fp4
	unpadded.EngineName = "vllm" // same costs, variable-size gather
	if got, want := fp4.MixedExtra(4, 1, parts, false)-unpadded.MixedExtra(4, 1, parts, false), comm(ta+nb)-comm(ta+total/2); !near(got, want, 1e-9) {
		t.Errorf("padding adds %.3f us, want %.3f us", got*1e6, want*1e6)
	}
	if got := e.MixedExtra(4, 1, nil, false); got != 0 {
		t.Errorf("no contexts add %g s", got)
	}
	sg, _ := NewEngine(m, g, Parallel{TP: 2, EP: 2, PP: 1, DPAttention: true}, EngineConfig{Precision: BF16, EngineName: "sglang"})
	if sg.MixesContext() {
		t.Error("SGLang runs prefill batches of their own")
	}
}

// TestMemoryFractionSemantics: the same --mem-fraction sizes the KV pool
// differently per engine. SGLang: a share of all HBM, weights included.
// TensorRT-LLM (free_gpu_memory_fraction): a share of what the weights
// leave free.
func TestMemoryFractionSemantics(t *testing.T) {
	m := tinyMoE()
	g := gpu(t, "h200")
	w := FixedWorkload(1024, 1024)
	for _, tc := range []struct {
		engine string
		kv     func(hbm, weights float64) float64
	}{
		{"sglang", func(hbm, weights float64) float64 { return 0.8*hbm - weights }},
		{"trtllm", func(hbm, weights float64) float64 { return 0.8 * (hbm - weights) }},
	} {
		e, err := NewEngine(m, g, Parallel{TP: 1, EP: 1, PP: 1}, EngineConfig{Precision: BF16, EngineName: tc.engine})
		if err != nil {
			t.Fatal(err)
		}
		mem := e.Memory(&w, 8, 0, 0.8)
		want := tc.kv(g.HBMBytes, mem.Weights)
		if !near(mem.KVCapacity, want, 1e-12) {
			t.Errorf("%s: KV pool %.3f GB, want %.3f GB", tc.engine, mem.KVCapacity/1e9, want/1e9)
		}
		if got := mem.Weights + mem.KVCapacity; !near(mem.Budget, got, 1e-12) {
			t.Errorf("%s: budget %.3f GB, want weights + KV = %.3f GB", tc.engine, mem.Budget/1e9, got/1e9)
		}
		if mem.FractionOfFree != (tc.engine == "trtllm") {
			t.Errorf("%s: FractionOfFree = %v", tc.engine, mem.FractionOfFree)
		}
	}
}

// must fails tb on a shape error and returns the cost.
func must(tb testing.TB) func(kernels.Cost, error) kernels.Cost {
	return func(c kernels.Cost, err error) kernels.Cost {
		if err != nil {
			tb.Helper()
			tb.Fatal(err)
		}
		return c
	}
}

// A step the engine prices with a shape no kernel runs used to cost zero;
// now its kernels.ShapeError sticks on the Engine and the plan that priced
// it returns that error in place of a result. NewEngine's Model.Validate
// refuses such a model, so the test zeroes the head size after the engine
// is built: the q/k/v projection becomes a GEMM of n = 0. A good step
// leaves no error.
func TestEngineShapeErrorFailsThePlan(t *testing.T) {
	m := tinyDense()
	e, err := NewEngine(m, gpu(t, "h200"), Parallel{TP: 1, EP: 1, PP: 1}, EngineConfig{Precision: BF16, SchedOverhead: -1, SpecOverhead: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.DecodeStep(8, 0, 1000)
	if e.Err() != nil {
		t.Fatalf("a good step left %v", e.Err())
	}
	m.HeadDim = 0
	e.DecodeStep(8, 0, 5000)
	var se *kernels.ShapeError
	if !errors.As(e.Err(), &se) || se.Op != "gemm" {
		t.Fatalf("Err() = %v, want a gemm ShapeError", e.Err())
	}
	p := &Plan{sc: Scenario{Model: m}, agg: e, gpuName: "h200"}
	if r, err := p.shapeChecked(&Result{}, nil); r != nil || !errors.As(err, &se) || !strings.Contains(err.Error(), "tiny-dense on h200") {
		t.Errorf("shapeChecked = %v, %v; want no result and the ShapeError naming model and GPU", r, err)
	}
}

// TestPlannedMemoryMemo: the memoized plan is PlanMemory's for each
// workload and pool configuration, asked in any order, and a caller's
// change to its copy does not reach the memo.
func TestPlannedMemoryMemo(t *testing.T) {
	m, err := LookupPreset("Qwen3.5-397B-A17B")
	if err != nil {
		t.Fatal(err)
	}
	g := gpu(t, "h200")
	short, long := FixedWorkload(1024, 1024), FixedWorkload(8192, 1024)
	for _, engine := range []string{"sglang", "vllm"} {
		e, err := NewEngine(m, g, Parallel{TP: 8, EP: 8, PP: 1}, EngineConfig{Precision: FP8, EngineName: engine})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			w  *Workload
			pc PoolConfig
		}{
			{&short, PoolConfig{Role: roleAgg, MaxRunning: 8}},
			{&long, PoolConfig{Role: roleAgg, MaxRunning: 8}},
			{&short, PoolConfig{Role: roleAgg, MaxRunning: 64, Steps: 3}},
			{&short, PoolConfig{Role: roleAgg, MaxRunning: 8}},
			{&long, PoolConfig{Role: rolePrefill, MaxRunning: 8, RadixCache: true}},
		} {
			want := e.PlanMemory(c.w, c.pc)
			got := e.plannedMemory(c.w, c.pc)
			if got != want {
				t.Errorf("%s %+v: plannedMemory %+v, PlanMemory %+v", engine, c.pc, got, want)
			}
			got.Explanation += " changed"
			if again := e.plannedMemory(c.w, c.pc); again != want {
				t.Errorf("%s %+v: the memo kept a caller's change", engine, c.pc)
			}
		}
	}
}
