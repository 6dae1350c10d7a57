package audit_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/audit"
	"github.com/specsim/specsim/audit/checkpointtest"
)

var tiny = checkpointtest.Dense{Layers: 2, Hidden: 64, Inter: 128, Vocab: 1000, Heads: 4, KVHeads: 2}

func TestSmallBF16SingleFile(t *testing.T) {
	dir := t.TempDir()
	if err := checkpointtest.WriteCheckpoint(dir, tiny.Tensors(), 1, tiny.Config(), nil); err != nil {
		t.Fatal(err)
	}
	r, err := audit.Run(dir, audit.Config{TP: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	// embed + lm_head 2 x 1000 x 64; per layer q and o 64x64, k and v
	// 32x64 (2 KV heads of 16), MLP 3 x 128 x 64, two norms; final norm.
	const layer = 2*64*64 + 2*32*64 + 3*128*64 + 2*64
	const params = 2*1000*64 + 2*layer + 64
	if r.DataBytes != 2*params || r.Shards != 1 || r.Tensors != 1+2*9+2 {
		t.Errorf("data %d bytes (want %d), %d shards, %d tensors", r.DataBytes, 2*params, r.Shards, r.Tensors)
	}
	if r.MTP.Present || r.MTP.ShippedDType != "NONE" || r.MTP.TensorCount != 0 {
		t.Errorf("mtp %+v", r.MTP)
	}
	if len(r.Findings) != 0 {
		t.Errorf("findings %+v", r.Findings)
	}
	// TP 2: vocab 1000 pads to 1024, 512 rows per rank; q/o/MLP halve; the
	// 2 KV heads split one per rank; norms whole.
	tp2 := 2 * (2*512*64 + 2*(float64(2*64*64+3*128*64)/2+float64(2*32*64)/2+2*64) + 64)
	if got := r.Memory[1].ModelGiB * (1 << 30); math.Abs(got-tp2) > 1e-4*(1<<30) {
		t.Errorf("tp=2 model %.0f bytes, want %.0f", got, tp2)
	}
}

// writeTinySharded writes the tiny model in 3 shards and returns the dir.
func writeTinySharded(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := checkpointtest.WriteCheckpoint(dir, tiny.Tensors(), 3, tiny.Config(), nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

func rewriteIndex(t *testing.T, dir string, edit func(total int64, wm map[string]string) int64) {
	t.Helper()
	wm := map[string]string{}
	var total int64
	for i, ts := range checkpointtest.Split(tiny.Tensors(), 3) {
		for _, x := range ts {
			wm[x.Name] = []string{"model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors", "model-00003-of-00003.safetensors"}[i]
			total += x.Bytes()
		}
	}
	total = edit(total, wm)
	if err := checkpointtest.WriteIndex(dir, total, wm); err != nil {
		t.Fatal(err)
	}
}

func TestIndexProblems(t *testing.T) {
	cases := []struct {
		name     string
		edit     func(dir string, total int64, wm map[string]string) int64
		code     string
		severity audit.Severity
		mention  string
	}{
		{"path traversal", func(_ string, total int64, wm map[string]string) int64 {
			wm["model.norm.weight"] = "../../etc/model.safetensors"
			return total
		}, "shard-outside-dir", audit.SeverityError, "../../etc/model.safetensors"},
		{"absolute shard", func(_ string, total int64, wm map[string]string) int64 {
			wm["model.norm.weight"] = "/etc/passwd"
			return total
		}, "shard-outside-dir", audit.SeverityError, "/etc/passwd"},
		{"missing tensor", func(_ string, total int64, wm map[string]string) int64 {
			wm["model.layers.9.mlp.up_proj.weight"] = "model-00001-of-00003.safetensors"
			return total
		}, "tensor-missing", audit.SeverityError, "model.layers.9.mlp.up_proj.weight"},
		{"extra tensor", func(_ string, total int64, wm map[string]string) int64 {
			delete(wm, "lm_head.weight")
			return total
		}, "tensor-unindexed", audit.SeverityWarning, "lm_head.weight"},
		{"wrong shard", func(_ string, total int64, wm map[string]string) int64 {
			wm["lm_head.weight"] = "model-00001-of-00003.safetensors"
			return total
		}, "tensor-wrong-shard", audit.SeverityError, "lm_head.weight"},
		{"total_size", func(_ string, total int64, wm map[string]string) int64 { return total + 2 }, "total-size-mismatch", audit.SeverityWarning, "+-2"},
		{"missing shard file", func(_ string, total int64, wm map[string]string) int64 {
			wm["lm_head.weight"] = "model-00009-of-00009.safetensors"
			return total
		}, "shard-missing", audit.SeverityError, "model-00009-of-00009.safetensors"},
		{"unindexed shard file", func(dir string, total int64, wm map[string]string) int64 {
			if _, err := checkpointtest.WriteFile(filepath.Join(dir, "mtp.safetensors"), []checkpointtest.Tensor{{Name: "mtp.fc.weight", DType: "BF16", Shape: []int64{64, 128}}}, nil); err != nil {
				panic(err)
			}
			return total
		}, "shard-unindexed", audit.SeverityWarning, "mtp.safetensors"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeTinySharded(t)
			rewriteIndex(t, dir, func(total int64, wm map[string]string) int64 { return c.edit(dir, total, wm) })
			r, err := audit.Run(dir, audit.Config{TP: []int{1}})
			if err != nil {
				t.Fatal(err)
			}
			f := findCode(r.Findings, c.code)
			if f == nil || f.Severity != c.severity || !strings.Contains(f.Message, strings.TrimPrefix(c.mention, "+")) {
				t.Fatalf("want %s %s mentioning %q; got %+v", c.severity, c.code, c.mention, r.Findings)
			}
		})
	}
}

func TestCorruptInputsNameTheFile(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(dir string) string // returns the file that must be named
	}{
		{"truncated shard header", func(dir string) string {
			p := filepath.Join(dir, "model-00002-of-00003.safetensors")
			must(t, os.Truncate(p, 20))
			return p
		}},
		{"huge header length", func(dir string) string {
			p := filepath.Join(dir, "model-00001-of-00003.safetensors")
			must(t, checkpointtest.WriteWithLength(p, 1<<40, []byte("{}"), 0))
			return p
		}},
		{"overlapping offsets", func(dir string) string {
			p := filepath.Join(dir, "model-00003-of-00003.safetensors")
			must(t, checkpointtest.WriteRaw(p, []byte(`{"lm_head.weight":{"dtype":"BF16","shape":[1000,64],"data_offsets":[0,128000]},"model.norm.weight":{"dtype":"BF16","shape":[64],"data_offsets":[64,192]}}`), 128000))
			return p
		}},
		{"dtype size mismatch", func(dir string) string {
			p := filepath.Join(dir, "model-00003-of-00003.safetensors")
			must(t, checkpointtest.WriteRaw(p, []byte(`{"lm_head.weight":{"dtype":"F32","shape":[1000,64],"data_offsets":[0,128000]}}`), 128000))
			return p
		}},
		{"bad index JSON", func(dir string) string {
			p := filepath.Join(dir, "model.safetensors.index.json")
			must(t, os.WriteFile(p, []byte(`{"weight_map": {`), 0o644))
			return p
		}},
		{"bad config JSON", func(dir string) string {
			p := filepath.Join(dir, "config.json")
			must(t, os.WriteFile(p, []byte(`{"hidden_size": 64,`), 0o644))
			return p
		}},
		{"bad quant config JSON", func(dir string) string {
			p := filepath.Join(dir, "hf_quant_config.json")
			must(t, os.WriteFile(p, []byte(`[`), 0o644))
			return p
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeTinySharded(t)
			file := c.break_(dir)
			_, err := audit.Run(dir, audit.Config{})
			var ce *audit.CorruptError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), file) {
				t.Fatalf("want a CorruptError naming %s, got %v", file, err)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestMTPFlagWithoutWeights(t *testing.T) {
	dir := writeQwen35(t, "nvidia--Qwen3.5-397B-A17B-NVFP4", checkpointtest.Options{MainLayers: 2, Shards: 2, SkipMTP: true})
	r, err := audit.Run(dir, audit.Config{TP: []int{4}})
	if err != nil {
		t.Fatal(err)
	}
	if r.MTP.Present || r.Memory[0].MTPBytes != 0 {
		t.Errorf("mtp %+v, memory %+v", r.MTP, r.Memory)
	}
	if f := findCode(r.Findings, "mtp-flag-without-weights"); f == nil || !strings.Contains(f.Message, "mtp_num_hidden_layers=1") {
		t.Errorf("want mtp_flag_without_weights, got %+v", r.Findings)
	}
}

// A separate EAGLE-style draft directory is all draft.
func TestDraftDirectory(t *testing.T) {
	dir := t.TempDir()
	ts := []checkpointtest.Tensor{
		{Name: "fc.weight", DType: "BF16", Shape: []int64{64, 192}},
		{Name: "midlayer.self_attn.q_proj.weight", DType: "BF16", Shape: []int64{64, 128}},
		{Name: "midlayer.mlp.down_proj.weight", DType: "BF16", Shape: []int64{64, 128}},
		{Name: "norm.weight", DType: "BF16", Shape: []int64{64}},
	}
	cfg := []byte(`{"architectures":["LlamaForCausalLMEagle3"],"hidden_size":64,"num_hidden_layers":1,"vocab_size":1000}`)
	must(t, checkpointtest.WriteCheckpoint(dir, ts, 1, cfg, nil))
	r, err := audit.Run(dir, audit.Config{TP: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	want := audit.MTPReport{Present: true, TensorCount: 4, ParamCount: 64*192 + 2*64*128 + 64, Bytes: 2 * (64*192 + 2*64*128 + 64), ShippedDType: "BF16", EffectiveDType: "BF16"}
	if r.MTP != want || r.Draft.Kind != audit.MTPDraftDir {
		t.Errorf("got %+v (%s), want %+v", r.MTP, r.Draft.Kind, want)
	}
}

func TestUnknownDTypeIsAFinding(t *testing.T) {
	dir := t.TempDir()
	ts := tiny.Tensors()
	ts[1].DType = "BF16"
	raw, n := checkpointtest.Header(ts, nil)
	// Rename one dtype in the header bytes: same width, unknown name.
	raw = []byte(strings.Replace(string(raw), `"model.layers.0.input_layernorm.weight":{"dtype":"BF16"`, `"model.layers.0.input_layernorm.weight":{"dtype":"Q4_K"`, 1))
	must(t, checkpointtest.WriteRaw(filepath.Join(dir, "model.safetensors"), raw, n))
	must(t, os.WriteFile(filepath.Join(dir, "config.json"), tiny.Config(), 0o644))
	r, err := audit.Run(dir, audit.Config{TP: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	if f := findCode(r.Findings, "dtype-unknown"); f == nil || !strings.Contains(f.Message, "Q4_K") || f.Severity != audit.SeverityWarning {
		t.Errorf("want a dtype_unknown warning, got %+v", r.Findings)
	}
}

// A FIFO named like a shard must not block the audit.
func TestFIFOShardDoesNotBlock(t *testing.T) {
	dir := writeTinySharded(t)
	fifo := filepath.Join(dir, "model-00002-of-00003.safetensors")
	must(t, os.Remove(fifo))
	if err := mkfifo(fifo); err != nil {
		t.Skip("mkfifo:", err)
	}
	_, err := audit.Run(dir, audit.Config{})
	var ce *audit.CorruptError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("want a CorruptError for the FIFO, got %v", err)
	}
}

func TestLayoutFindings(t *testing.T) {
	dir := t.TempDir()
	must(t, checkpointtest.WriteCheckpoint(dir, tiny.Tensors(), 1, tiny.Config(), nil))
	// tp 3 does not divide tiny's 4 attention heads: layout-invalid, as
	// predict refuses it (review 2, #10).
	r, err := audit.Run(dir, audit.Config{TP: []int{3}})
	must(t, err)
	if f := findCode(r.Findings, "layout-invalid"); f == nil || !strings.Contains(f.Message, "does not divide the 4 attention heads") || len(r.Memory) != 0 {
		t.Errorf("want tp=3 layout-invalid for 4 heads, got %+v %+v", r.Findings, r.Memory)
	}
	// With 6 heads tp 3 runs, and vocab 1000 pads to 1024, which 3 does
	// not divide.
	six := tiny
	six.Heads, six.KVHeads, six.Hidden = 6, 3, 96
	dir6 := t.TempDir()
	must(t, checkpointtest.WriteCheckpoint(dir6, six.Tensors(), 1, six.Config(), nil))
	r, err = audit.Run(dir6, audit.Config{TP: []int{3}})
	must(t, err)
	if f := findCode(r.Findings, "vocab-not-divisible"); f == nil || !strings.Contains(f.Message, "1024") || findCode(r.Findings, "layout-invalid") != nil {
		t.Errorf("want vocab_not_divisible, got %+v", r.Findings)
	}
	// tp 2 with dp 4: attention TP would be fractional, so the row is
	// skipped.
	r, err = audit.Run(dir, audit.Config{TP: []int{2, 4}, DP: 4})
	must(t, err)
	if f := findCode(r.Findings, "layout-invalid"); f == nil || len(r.Memory) != 1 || r.Memory[0].TP != 4 {
		t.Errorf("want tp=2 dp=4 rejected and tp=4 kept: %+v %+v", r.Findings, r.Memory)
	}
}
