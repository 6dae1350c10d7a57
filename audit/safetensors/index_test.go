package safetensors_test

import (
	"testing"

	"github.com/specsim/specsim/audit/safetensors"
)

func TestParseIndex(t *testing.T) {
	cases := []struct {
		name      string
		json      string
		wantErr   bool
		total     int64
		hasTotal  bool
		wantCount int
	}{
		{"integer total", `{"metadata":{"total_size":352494542848},"weight_map":{"a":"m-1.safetensors","b":"m-2.safetensors"}}`, false, 352494542848, true, 2},
		{"string total", `{"metadata":{"total_size":"1024","total_parameters":"12"},"weight_map":{"a":"m.safetensors"}}`, false, 1024, true, 1},
		{"float total", `{"metadata":{"total_size":2048.0},"weight_map":{}}`, false, 2048, true, 0},
		{"no metadata", `{"weight_map":{"a":"m.safetensors"}}`, false, 0, false, 1},
		{"no weight map", `{"metadata":{}}`, true, 0, false, 0},
		{"negative total", `{"metadata":{"total_size":-1},"weight_map":{}}`, true, 0, false, 0},
		{"fractional total", `{"metadata":{"total_size":1.5},"weight_map":{}}`, true, 0, false, 0},
		{"non-string shard", `{"weight_map":{"a":3}}`, true, 0, false, 0},
		{"not JSON", `{"weight_map":`, true, 0, false, 0},
	}
	for _, c := range cases {
		idx, err := safetensors.ParseIndex([]byte(c.json))
		if (err != nil) != c.wantErr {
			t.Errorf("%s: err = %v, want error %v", c.name, err, c.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if idx.TotalSize != c.total || idx.HasTotalSize != c.hasTotal || len(idx.WeightMap) != c.wantCount {
			t.Errorf("%s: got total %d (%v), %d entries", c.name, idx.TotalSize, idx.HasTotalSize, len(idx.WeightMap))
		}
	}
}

func TestLocalShard(t *testing.T) {
	cases := map[string]bool{
		"model-00001-of-00002.safetensors": true,
		"sub/model.safetensors":            true,
		"../model.safetensors":             false,
		"sub/../../x.safetensors":          false,
		"/etc/passwd":                      false,
		"":                                 false,
		`..\model.safetensors`:             false,
		"a\x00b":                           false,
		".":                                false,
	}
	for name, want := range cases {
		if got := safetensors.LocalShard(name); got != want {
			t.Errorf("LocalShard(%q) = %v, want %v", name, got, want)
		}
	}
}

func FuzzParseIndex(f *testing.F) {
	f.Add([]byte(`{"metadata":{"total_size":10},"weight_map":{"a":"x.safetensors"}}`))
	f.Add([]byte(`{"metadata":{"total_size":"1e3"},"weight_map":{}}`))
	f.Add([]byte(`{"weight_map":{"a":"../x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		idx, err := safetensors.ParseIndex(data)
		if err != nil {
			return
		}
		if idx.WeightMap == nil || idx.TotalSize < 0 {
			t.Fatalf("accepted index without weight map or with negative size: %+v", idx)
		}
		for _, s := range idx.Shards() {
			_ = safetensors.LocalShard(s)
		}
	})
}
