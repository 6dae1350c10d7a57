package deep

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/specsim/specsim/kernels/numfmt"
)

// qwen35Draft lists the BF16 tensors of a Qwen3.5-397B-A17B MTP head with
// fused experts: about 13.2 GB.
var qwen35Draft = []shaped{
	{"mtp.fc.weight", []int64{4096, 8192}},
	{"mtp.layers.0.input_layernorm.weight", []int64{4096}},
	{"mtp.layers.0.mlp.experts.down_proj", []int64{512, 4096, 1024}},
	{"mtp.layers.0.mlp.experts.gate_up_proj", []int64{512, 2048, 4096}},
	{"mtp.layers.0.mlp.gate.weight", []int64{512, 4096}},
	{"mtp.layers.0.mlp.shared_expert.down_proj.weight", []int64{4096, 1024}},
	{"mtp.layers.0.mlp.shared_expert.gate_proj.weight", []int64{1024, 4096}},
	{"mtp.layers.0.mlp.shared_expert.up_proj.weight", []int64{1024, 4096}},
	{"mtp.layers.0.mlp.shared_expert_gate.weight", []int64{1, 4096}},
	{"mtp.layers.0.post_attention_layernorm.weight", []int64{4096}},
	{"mtp.layers.0.self_attn.k_proj.weight", []int64{512, 4096}},
	{"mtp.layers.0.self_attn.o_proj.weight", []int64{4096, 8192}},
	{"mtp.layers.0.self_attn.q_proj.weight", []int64{16384, 4096}},
	{"mtp.layers.0.self_attn.v_proj.weight", []int64{512, 4096}},
	{"mtp.norm.weight", []int64{4096}},
}

type shaped struct {
	name  string
	shape []int64
}

// deepseekDraft lists the BF16 tensors of a DeepSeek-V3 MTP layer
// (model.layers.61) with per-expert names: 256 routed experts, about 11.8
// GB without the embedding and head copies.
func deepseekDraft() []shaped {
	p := "model.layers.61."
	out := []shaped{
		{p + "eh_proj.weight", []int64{7168, 14336}},
		{p + "self_attn.q_a_proj.weight", []int64{1536, 7168}},
		{p + "self_attn.q_b_proj.weight", []int64{24576, 1536}},
		{p + "self_attn.kv_a_proj_with_mqa.weight", []int64{576, 7168}},
		{p + "self_attn.kv_b_proj.weight", []int64{32768, 512}},
		{p + "self_attn.o_proj.weight", []int64{7168, 16384}},
		{p + "mlp.gate.weight", []int64{256, 7168}},
	}
	for e := range 256 {
		x := p + "mlp.experts." + strconv.Itoa(e) + "."
		out = append(out, shaped{x + "gate_proj.weight", []int64{2048, 7168}},
			shaped{x + "up_proj.weight", []int64{2048, 7168}}, shaped{x + "down_proj.weight", []int64{7168, 2048}})
	}
	return out
}

// sparseDraft writes a sparse file as large as the real draft and fills
// every region the sampler will read, under this budget, with real
// Gaussian BF16 values; the rest is a hole costing no disk.
func sparseDraft(b *testing.B, budget int64, draft []shaped, laundered bool) []Tensor {
	path := filepath.Join(b.TempDir(), "mtp.safetensors")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var ts []Tensor
	off := int64(4096) // room for a header; the audit never reads it
	for _, d := range draft {
		n := int64(2)
		for _, x := range d.shape {
			n *= x
		}
		ts = append(ts, Tensor{Path: path, Name: d.name, DType: "BF16", Shape: d.shape, Begin: off, End: off + n})
		off += n
	}
	if err := f.Truncate(off); err != nil {
		b.Fatal(err)
	}
	// Replay the budget split of Audit to find the regions it will read.
	r := rand.New(rand.NewPCG(5, 6))
	left := budget
	order := append([]Tensor(nil), ts...)
	sortBySize(order)
	var written int64
	for i := range order {
		p := newPlan(&order[i], storages["BF16"], left/int64(len(order)-i), budget)
		buf := make([]byte, p.width*2)
		vals := make([]float32, p.width)
		for _, u := range p.units {
			for row := range p.height {
				for k := range vals {
					vals[k] = float32(r.NormFloat64() * 0.02)
				}
				if laundered { // NVFP4 under one tensor scale (amax 0.12, 6 sigma)
					vals = nvfp4Dequant(matrix{1, len(vals), vals}, false, 0.12/(6*448)).v
				}
				for k, v := range vals {
					binary.LittleEndian.PutUint16(buf[2*k:], numfmt.ToBF16(v))
				}
				if _, err := f.WriteAt(buf, p.rowOffset(u, row)); err != nil {
					b.Fatal(err)
				}
				written += int64(len(buf))
			}
		}
		left -= p.bytes()
	}
	b.Logf("sparse draft: %.1f GB apparent, %.1f MiB of data written", float64(off)/1e9, float64(written)/(1<<20))
	return ts
}

func sortBySize(ts []Tensor) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].End-ts[j].Begin < ts[j-1].End-ts[j-1].Begin; j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

// BenchmarkDeepAudit13GB audits a 13.2 GB BF16 Qwen3.5 MTP head with the
// default 64 MiB budget: go test -bench DeepAudit13GB ./audit/deep/
func BenchmarkDeepAudit13GB(b *testing.B) { benchDeep(b, qwen35Draft, false) }

// BenchmarkDeepAudit13GBLaundered is the same draft NVFP4-quantized and
// written back as BF16: no grid is ruled out early, so every planned block
// is read and tested (the slow case).
func BenchmarkDeepAudit13GBLaundered(b *testing.B) { benchDeep(b, qwen35Draft, true) }

// BenchmarkDeepAuditDeepSeek775Tensors: a DeepSeek-V3 MTP layer with 768
// per-expert tensors, where the budget, not the per-tensor cap, binds.
func BenchmarkDeepAuditDeepSeek775Tensors(b *testing.B) { benchDeep(b, deepseekDraft(), false) }

func benchDeep(b *testing.B, draft []shaped, laundered bool) {
	ts := sparseDraft(b, DefaultBudget, draft, laundered)
	b.ResetTimer()
	var rep *Report
	for range b.N {
		var err error
		rep, err = Audit(ts, Options{})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if rep.BytesRead > DefaultBudget {
		b.Fatalf("read %d bytes, over the %d budget", rep.BytesRead, DefaultBudget)
	}
	want := "none"
	if laundered {
		want = "nvfp4"
	}
	for _, t := range rep.Tensors {
		if t.Grid != want {
			b.Fatalf("%s: %s, want grid %q (a sampled region held no data?)", t.Name, t.Verdict, want)
		}
	}
	b.ReportMetric(float64(rep.BytesRead)/(1<<20), "MiB_read")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/audit")
}
