package simulate

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/specsim/specsim/kernels"
)

// TestKernelTablesPriceGDN: --kernel-table's GDN decode rows (the
// AIConfigurator-layout fixture, B200, 16 value / 4 key heads: 64
// sequences 0.020 ms) replace the B200's carried-over pricing of the state
// update in a TP4 decode step of Qwen3.5-397B without speculation.
func TestKernelTablesPriceGDN(t *testing.T) {
	m, _ := LookupPreset("Qwen3.5-397B-A17B")
	g := gpu(t, "b200")
	imp, err := kernels.ReadAICFiles([]string{"../kernels/testdata/aic/gdn_perf.txt"})
	if err != nil {
		t.Fatal(err)
	}
	step := func(tables *kernels.AICImport) Breakdown {
		e, err := NewEngine(m, g, Parallel{TP: 4, EP: 4, PP: 1}, EngineConfig{Precision: FP8, SSMDType: kernels.FP32, KernelTables: tables, SchedOverhead: 0, SpecOverhead: 0})
		if err != nil {
			t.Fatal(err)
		}
		return e.DecodeStep(64, 0, 1024)
	}
	base, with := step(nil), step(imp)
	// 45 GDN layers; the table's decode kernel replaces the reference update of each
	c := kernels.NewCoster(g)
	ref := must(t)(c.GatedDeltaNet(kernels.GDNShape{Batch: 64, QLen: 1, KHeads: 4, VHeads: 16, KDim: 128, VDim: 128, StateDType: kernels.FP32})).Seconds
	want := base.GDN + 45*(20e-6-ref)
	if math.Abs(with.GDN-want) > 1e-3*want {
		t.Errorf("GDN with the table %.4f ms, want %.4f (base %.4f, reference update %.2f us)", with.GDN*1e3, want*1e3, base.GDN*1e3, ref*1e6)
	}
	if with.MoE != base.MoE || with.Attention != base.Attention {
		t.Error("a GDN-only table moved other parts of the step")
	}
}

func TestKernelTablesWrongDevice(t *testing.T) {
	q := Query{Model: "Qwen3.5-397B-A17B", Precision: "fp4", GPU: "h200", Workload: "fixed", ISL: 1024, OSL: 1024,
		SchedOverhead: -1, SpecOverhead: -1, KernelTables: []string{"../kernels/testdata/aic/gdn_perf.txt"}}
	_, err := q.Resolve(testCurves, testCatalog)
	var e *Error
	if !errors.As(err, &e) || e.Field != "KernelTables" || !strings.Contains(err.Error(), `measured on "NVIDIA B200"`) {
		t.Errorf("err %v", err)
	}
}
