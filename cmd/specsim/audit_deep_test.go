package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nlpodyssey/safetensors"

	"github.com/specsim/specsim/kernels/numfmt"
)

// deepCheckpoint writes a small Qwen3.5-style BF16 checkpoint with an MTP
// head (written with github.com/nlpodyssey/safetensors, so the layout does
// not come from our own writer). With laundered set, the MTP weights are
// NVFP4-quantized (ModelOpt two-level scaling) and written back as BF16.
func deepCheckpoint(t *testing.T, laundered bool) string {
	t.Helper()
	dir := t.TempDir()
	cfg := `{"architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
 "text_config": {"hidden_size": 256, "num_hidden_layers": 2, "mtp_num_hidden_layers": 1,
  "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 128, "vocab_size": 512,
  "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 128, "tie_word_embeddings": false}}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(11, 12))
	weight := func(rows, cols int, quantize bool) safetensors.TensorView {
		v := make([]float32, rows*cols)
		for i := range v {
			v[i] = float32(r.NormFloat64() * 0.02)
		}
		if quantize {
			var amax float32
			for _, x := range v {
				amax = max(amax, float32(math.Abs(float64(x))))
			}
			global := amax / (6 * 448)
			for b := 0; b < len(v); b += 16 {
				var bmax float32
				for _, x := range v[b : b+16] {
					bmax = max(bmax, float32(math.Abs(float64(x))))
				}
				s := numfmt.E4M3(numfmt.ToE4M3(float64(bmax/(6*global)))) * global
				for i := b; i < b+16; i++ {
					v[i] = numfmt.E2M1(numfmt.ToE2M1(float64(v[i]/s))) * s
				}
			}
		}
		data := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(data[2*i:], numfmt.ToBF16(x))
		}
		tv, err := safetensors.NewTensorView(safetensors.BF16, []uint64{uint64(rows), uint64(cols)}, data)
		if err != nil {
			t.Fatal(err)
		}
		return tv
	}
	ts := map[string]safetensors.TensorView{
		"model.language_model.embed_tokens.weight": weight(512, 256, false),
		"lm_head.weight": weight(512, 256, false),
		"model.language_model.layers.0.self_attn.q_proj.weight": weight(256, 256, false),
		"model.language_model.layers.1.self_attn.q_proj.weight": weight(256, 256, false),
		"mtp.fc.weight":                             weight(256, 512, laundered),
		"mtp.layers.0.self_attn.q_proj.weight":      weight(256, 256, laundered),
		"mtp.layers.0.mlp.experts.0.up_proj.weight": weight(128, 256, laundered),
	}
	var buf bytes.Buffer
	if err := safetensors.SerializeToWriter(ts, map[string]string{"format": "pt"}, &buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestAuditDeep(t *testing.T) {
	for _, laundered := range []bool{false, true} {
		dir := deepCheckpoint(t, laundered)
		var out, errOut bytes.Buffer
		code := run([]string{"audit", dir, "--deep", "--deep-budget", "1MiB", "--json"}, &out, &errOut)
		var rep struct {
			Findings []struct{ Code, Severity string }
			Deep     struct {
				BytesRead int64 `json:"bytes_read"`
				Tensors   []struct {
					Name           string  `json:"name"`
					DType          string  `json:"dtype"`
					BlocksTested   int     `json:"blocks_tested"`
					Verdict        string  `json:"verdict"`
					OnGridFraction float64 `json:"on_grid_fraction"`
				}
				Modules []struct{ Name, Verdict string }
			}
		}
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("laundered=%v: exit %d, %v\n%s\n%s", laundered, code, err, out.String(), errOut.String())
		}
		if len(rep.Deep.Tensors) != 3 || rep.Deep.BytesRead <= 0 || rep.Deep.BytesRead > 1<<20 || len(rep.Deep.Modules) != 3 {
			t.Fatalf("laundered=%v: deep %+v", laundered, rep.Deep)
		}
		want := "genuine BF16"
		if laundered {
			want = "values on an NVFP4 grid"
		}
		for _, tr := range rep.Deep.Tensors {
			if !strings.HasPrefix(tr.Name, "mtp.") || tr.Verdict != want || tr.BlocksTested == 0 {
				t.Errorf("laundered=%v: %+v", laundered, tr)
			}
		}
		quantized := 0
		for _, f := range rep.Findings {
			if f.Code == "draft-values-quantized" && f.Severity == "error" {
				quantized++
			}
		}
		if laundered && (quantized != 3 || code != exitFindings) {
			t.Errorf("laundered: %d draft-values-quantized findings, exit %d; want 3, 1", quantized, code)
		}
		if !laundered && (quantized != 0 || code == exitBadInput) {
			t.Errorf("genuine: %d draft-values-quantized findings, exit %d", quantized, code)
		}
	}
}

func TestAuditDeepTextAndMarkdown(t *testing.T) {
	dir := deepCheckpoint(t, true)
	var out, errOut bytes.Buffer
	run([]string{"audit", dir, "--deep-all", "--format", "markdown"}, &out, &errOut)
	md := out.String()
	for _, want := range []string{"Deep value test", "| mtp.fc | values on an NVFP4 grid |", "genuine BF16", "draft-values-quantized", "false alarm < 1e-"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	out.Reset()
	run([]string{"audit", dir, "--deep"}, &out, &errOut)
	if !strings.Contains(out.String(), "Deep value test: 3 tensors tested") {
		t.Errorf("text:\n%s", out.String())
	}
	if code := run([]string{"audit", dir, "--deep", "--deep-budget", "lots"}, &out, &errOut); code != exitBadInput ||
		!strings.Contains(errOut.String(), "--deep-budget") {
		t.Errorf("bad budget: exit %d, %s", code, errOut.String())
	}
}

// TestAuditDeepMissingShard: --deep on a checkpoint whose index names a
// shard file that is not there (a partial download) says so and exits 2,
// rather than passing on the bare open error.
func TestAuditDeepMissingShard(t *testing.T) {
	dir := deepCheckpoint(t, false)
	idx := `{"metadata": {}, "weight_map": {"model.language_model.embed_tokens.weight": "model.safetensors",
 "lm_head.weight": "model.safetensors", "mtp.fc.weight": "model-00002-of-00002.safetensors"}}`
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), []byte(idx), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI("audit", dir, "--deep")
	if code != exitBadInput || !strings.Contains(errs, "a shard file the index names is missing") {
		t.Errorf("exit %d: %s", code, errs)
	}
}
