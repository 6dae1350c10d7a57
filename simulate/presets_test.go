package simulate

import (
	"testing"

	"github.com/specsim/specsim/audit/model"
)

// TestPresetArchitectures: the presets, now read from their config.json,
// have the numbers they had when written out by hand from the same files.
func TestPresetArchitectures(t *testing.T) {
	want := map[string]model.Architecture{
		"Qwen3.5-397B-A17B": {Hidden: 4096, Layers: 60, Vocab: 248320, Attention: GQA, Heads: 32, KVHeads: 2, HeadDim: 256, OutputGate: true, FullAttnInterval: 4, LinearKHeads: 16, LinearVHeads: 64, LinearKDim: 128, LinearVDim: 128, ConvKernel: 4, Experts: 512, TopK: 10, MoEInter: 1024, SharedExperts: 1, SharedInter: 1024, MaxContext: 262144},
		"Qwen3.5-122B-A10B": {Hidden: 3072, Layers: 48, Vocab: 248320, Attention: GQA, Heads: 32, KVHeads: 2, HeadDim: 256, OutputGate: true, FullAttnInterval: 4, LinearKHeads: 16, LinearVHeads: 64, LinearKDim: 128, LinearVDim: 128, ConvKernel: 4, Experts: 256, TopK: 8, MoEInter: 1024, SharedExperts: 1, SharedInter: 1024, MaxContext: 262144},
		"Qwen3.5-35B-A3B":   {Hidden: 2048, Layers: 40, Vocab: 248320, Attention: GQA, Heads: 16, KVHeads: 2, HeadDim: 256, OutputGate: true, FullAttnInterval: 4, LinearKHeads: 16, LinearVHeads: 32, LinearKDim: 128, LinearVDim: 128, ConvKernel: 4, Experts: 256, TopK: 8, MoEInter: 512, SharedExperts: 1, SharedInter: 512, MaxContext: 262144},
		"DeepSeek-V3":       {Hidden: 7168, Layers: 61, Vocab: 129280, Attention: MLA, Heads: 128, QLoRA: 1536, KVLoRA: 512, RopeDim: 64, NopeDim: 128, VHeadDim: 128, DenseLayers: 3, DenseInter: 18432, Experts: 256, TopK: 8, MoEInter: 2048, SharedExperts: 1, SharedInter: 2048, MaxContext: 163840},
		"GLM-5":             {Hidden: 6144, Layers: 78, Vocab: 154880, Attention: DSA, Heads: 64, QLoRA: 2048, KVLoRA: 512, RopeDim: 64, NopeDim: 192, VHeadDim: 256, IndexTopK: 2048, IndexHeads: 32, IndexHeadDim: 128, DenseLayers: 3, DenseInter: 12288, Experts: 256, TopK: 8, MoEInter: 2048, SharedExperts: 1, SharedInter: 2048, MaxContext: 202752},
		"Kimi-K2.5":         {Hidden: 7168, Layers: 61, Vocab: 163840, Attention: MLA, Heads: 64, QLoRA: 1536, KVLoRA: 512, RopeDim: 64, NopeDim: 128, VHeadDim: 128, DenseLayers: 1, DenseInter: 18432, Experts: 384, TopK: 8, MoEInter: 2048, SharedExperts: 1, SharedInter: 2048, MaxContext: 262144},
		"MiniMax-M2.5":      {Hidden: 3072, Layers: 62, Vocab: 200064, Attention: GQA, Heads: 48, KVHeads: 8, HeadDim: 128, Experts: 256, TopK: 8, MoEInter: 1536, MaxContext: 196608},
	}
	ps := Presets()
	if len(ps) != len(want) {
		t.Errorf("%d presets, want %d", len(ps), len(want))
	}
	for _, p := range ps {
		w, ok := want[p.Name]
		if !ok {
			t.Errorf("unexpected preset %s", p.Name)
			continue
		}
		if p.Architecture != w {
			t.Errorf("%s from %s:\n got %+v\nwant %+v", p.Name, p.Source, p.Architecture, w)
		}
	}
}
