package audit_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/specsim/specsim/audit"
	"github.com/specsim/specsim/audit/checkpointtest"
)

// TestIndexOnlyQwen35 audits what a reviewer downloads of
// nvidia/Qwen3.5-397B-A17B-NVFP4: configs and index, no shards. The MTP
// facts come from the weight map (qMTPTensors, counted by hand in
// qwen35_test.go); the inferred dtypes and shapes must give the same
// sizes as the shard headers of the same checkpoint.
func TestIndexOnlyQwen35(t *testing.T) {
	const model = "nvidia--Qwen3.5-397B-A17B-NVFP4"
	dir := writeQwen35(t, model, checkpointtest.Options{MainLayers: 4, Shards: 6})
	full, err := audit.Run(dir, audit.Config{TP: []int{1, 2, 4}})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkpointtest.RemoveShards(dir); err != nil {
		t.Fatal(err)
	}
	r, err := audit.Run(dir, audit.Config{TP: []int{1, 2, 4}})
	if err != nil {
		t.Fatalf("index-only audit: %v", err)
	}
	if !r.IndexOnly || !r.MTP.ShippedInferred {
		t.Errorf("index_only=%v shipped_inferred=%v", r.IndexOnly, r.MTP.ShippedInferred)
	}
	if r.MTP.TensorCount != qMTPTensors || r.MTP.ScaleTensorCount != 0 || r.MTP.ShippedDType != audit.PrecBF16 {
		t.Errorf("mtp: %d tensors, %d scales, shipped %s; want %d, 0, BF16", r.MTP.TensorCount, r.MTP.ScaleTensorCount, r.MTP.ShippedDType, qMTPTensors)
	}
	if r.MTP.ParamCount != qMTPParam || r.MTP.Bytes != 2*qMTPParam {
		t.Errorf("mtp params %d bytes %d, want %d and %d", r.MTP.ParamCount, r.MTP.Bytes, qMTPParam, 2*qMTPParam)
	}
	if r.Tensors != full.Tensors || r.DataBytes != full.DataBytes {
		t.Errorf("tensors %d / %d bytes inferred, headers say %d / %d", r.Tensors, r.DataBytes, full.Tensors, full.DataBytes)
	}
	for i, m := range r.Memory {
		if m != full.Memory[i] {
			t.Errorf("memory row %d: inferred %+v, headers %+v", i, m, full.Memory[i])
		}
	}
	var info, fc int
	for _, f := range r.Findings {
		switch {
		case strings.HasPrefix(f.Code, "shard-") || f.Code == "tensor-missing" || f.Code == "mtp-flag-without-weights":
			t.Errorf("index-only audit reports %s: %s", f.Code, f.Message)
		case f.Code == "index-only":
			info++
			if f.Severity != audit.SeverityInfo {
				t.Errorf("index-only finding is %s", f.Severity)
			}
		}
		if strings.Contains(f.Message, "mtp.fc") {
			fc++
		}
	}
	if info != 1 || fc == 0 {
		t.Errorf("want one index-only info line (got %d) and mtp.fc named (got %d findings)", info, fc)
	}
	if code := exitCode(r); code != 0 && code != 1 {
		t.Errorf("exit code %d", code)
	}
}

func exitCode(r *audit.Report) int {
	for _, f := range r.Findings {
		if f.Severity == audit.SeverityError {
			return 1
		}
	}
	return 0
}

// TestIndexOnlyInfersHeaders: for every tensor of three release layouts
// (Qwen3.5 NVFP4 with a BF16 MTP head, DeepSeek-V3.1 NVFP4 with an inline
// BF16 NextN layer, DeepSeek-R1 block FP8), the dtype and shape inferred
// from the weight map and config.json equal what the shard header says.
func TestIndexOnlyInfersHeaders(t *testing.T) {
	for _, tc := range []struct {
		name        string
		build       func(string, checkpointtest.Options) ([]checkpointtest.Tensor, []checkpointtest.Tensor, error)
		config, hfq string
	}{
		{"qwen3.5 nvfp4", checkpointtest.Qwen35MoE, "nvidia--Qwen3.5-397B-A17B-NVFP4_config.json", "nvidia--Qwen3.5-397B-A17B-NVFP4_hf_quant_config.json"},
		{"deepseek nvfp4", checkpointtest.DeepSeekV3NVFP4, "nvidia--DeepSeek-V3.1-NVFP4_config.json", "nvidia--DeepSeek-V3.1-NVFP4_hf_quant_config.json"},
		{"deepseek fp8 block", checkpointtest.DeepSeekV3FP8, "deepseek-ai--DeepSeek-R1_config.json", ""},
	} {
		dir := t.TempDir()
		hfq := ""
		if tc.hfq != "" {
			hfq = configs + tc.hfq
		}
		if _, _, err := checkpointtest.WriteFromConfigs(dir, tc.build, configs+tc.config, hfq, checkpointtest.Options{MainLayers: 4, Shards: 3}); err != nil {
			t.Fatal(err)
		}
		headers, err := audit.ReadCheckpoint(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkpointtest.RemoveShards(dir); err != nil {
			t.Fatal(err)
		}
		inferred, err := audit.ReadCheckpoint(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !inferred.IndexOnly || len(inferred.Tensors) != len(headers.Tensors) {
			t.Fatalf("%s: index-only %v, %d tensors vs %d", tc.name, inferred.IndexOnly, len(inferred.Tensors), len(headers.Tensors))
		}
		bad := 0
		for i, h := range headers.Tensors {
			g := inferred.Tensors[i]
			if g.Name != h.Name || g.DType != h.DType || fmt.Sprint(g.Shape) != fmt.Sprint(h.Shape) || g.Bytes() != h.Bytes() {
				if bad < 5 {
					t.Errorf("%s: %s header %s %v, inferred %s %s %v", tc.name, h.Name, h.DType, h.Shape, g.Name, g.DType, g.Shape)
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d tensors inferred wrong", tc.name, bad, len(headers.Tensors))
		}
	}
}
