package recipe

import (
	"os"
	"testing"
)

// BenchmarkLoadAndCheck: parse the 7-variant disaggregated bundle, resolve
// its roles and run every check.
func BenchmarkLoadAndCheck(b *testing.B) {
	const p = "../../testdata/recipes/schema2_qwen3.5_sglang_gb300-fp4_agentx_disagg-variants.yaml"
	data, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for range b.N {
		r, err := Parse(p, data, "")
		if err != nil {
			b.Fatal(err)
		}
		Check(r, Options{Curves: publishedCurves})
	}
}
