package enginelog

import (
	"strings"
	"testing"
)

func TestParseLoad(t *testing.T) {
	log := strings.Join([]string{
		`[2025-11-04 05:27:10 DP0 TP0 EP0] Load weight begin. avail mem=182.18 GB`,
		`[2025-11-04 05:27:13 DP0 TP0 EP0] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=75.11 GB, mem usage=107.07 GB.`,
		`[2025-11-04 05:27:40 DP0 TP0 EP0] Load weight end. type=DeepseekV3ForCausalLMNextN, dtype=torch.bfloat16, avail mem=62.00 GB, mem usage=13.11 GB.`,
		`[2026-03-01 10:00:00 TP1] Load weight end. elapsed=12.3 s, type=Qwen3_5MoeForConditionalGeneration, quant=compressed-tensors, avail mem=91.18 GB, mem usage=23.36 GB.`,
		`[2026-03-01 10:00:30 TP1] Load weight end. elapsed=2.1 s, type=Qwen3_5MoeForConditionalGeneration, avail mem=87.00 GB, mem usage=4.18 GB.`,
		`INFO 04-02 11:00:00 [gpu_model_runner.py:1234] Model loading took 18.1200 GiB and 30.512345 seconds`,
		`INFO Model loading took 17.66 GiB memory and 12.0 seconds`,
		`Load weight end. mem usage=abc GB`,
		`unrelated line mentioning mem usage=1.0 GB`,
	}, "\n")
	got, err := ParseLoad(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	want := []Load{
		{Engine: "sglang", Line: 2, Type: "DeepseekV3ForCausalLM", GiB: 107.07, Avail: 75.11, Rank: "DP0 TP0 EP0"},
		{Engine: "sglang", Line: 3, Type: "DeepseekV3ForCausalLMNextN", GiB: 13.11, Avail: 62.00, Rank: "DP0 TP0 EP0", Draft: true},
		{Engine: "sglang", Line: 4, Type: "Qwen3_5MoeForConditionalGeneration", Quant: "compressed-tensors", GiB: 23.36, Avail: 91.18, Rank: "TP1"},
		{Engine: "sglang", Line: 5, Type: "Qwen3_5MoeForConditionalGeneration", GiB: 4.18, Avail: 87.00, Rank: "TP1", Draft: true},
		{Engine: "vllm", Line: 6, GiB: 18.12},
		{Engine: "vllm", Line: 7, GiB: 17.66},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d lines: %+v", len(got), got)
	}
	for i, w := range want {
		g := got[i]
		g.Text = ""
		if g != w {
			t.Errorf("line %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func TestParseLoadSkipsHugeLines(t *testing.T) {
	huge := strings.Repeat("x", MaxLineBytes+10)
	log := huge + "\n[TP0] Load weight end. type=X, mem usage=1.50 GB.\n" + huge
	got, err := ParseLoad(strings.NewReader(log))
	if err != nil || len(got) != 1 || got[0].GiB != 1.5 || got[0].Line != 2 {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func FuzzParseLoad(f *testing.F) {
	f.Add("[TP0] Load weight end. type=A, avail mem=1 GB, mem usage=2.5 GB.\nModel loading took 3 GiB")
	f.Fuzz(func(t *testing.T, s string) {
		ls, err := ParseLoad(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls {
			if l.GiB < 0 || l.Line < 1 {
				t.Fatalf("bad load %+v", l)
			}
		}
	})
}
