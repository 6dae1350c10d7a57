package simulate

import (
	"slices"
	"testing"

	"github.com/specsim/specsim/audit/model"
)

func TestPPStageLayers(t *testing.T) {
	for _, c := range []struct {
		n, pp int
		want  []int
	}{
		{60, 2, []int{0, 30, 60}},
		{60, 8, []int{0, 7, 14, 21, 29, 37, 45, 53, 60}}, // 7 rem 4: stages 3..6 get one more
		{61, 4, []int{0, 15, 30, 46, 61}},                // 15 rem 1: the second-to-last stage
		{7, 4, []int{0, 2, 4, 6, 7}},                     // 1 rem 3: stages 0..2
	} {
		if got := ppStageLayers(c.n, c.pp); !slices.Equal(got, c.want) {
			t.Errorf("ppStageLayers(%d, %d) = %v, want %v", c.n, c.pp, got, c.want)
		}
	}
}

// TestPipelineBubble: four layers of 1 ms over two stages, lm_head 0.5 ms
// on the last: stages of 2 and 2.5 ms, so a lane's step is 2 x 2.5 = 5 ms
// against the 4.5 ms sum, a 0.5 ms bubble. Put two of the layers at 2 ms
// on the first stage and the stages are 4 and 2.5 ms: 8 - 6.5 = 1.5 ms.
func TestPipelineBubble(t *testing.T) {
	e := &Engine{Model: &Model{Architecture: model.Architecture{Layers: 4}}, Par: Parallel{TP: 1, EP: 1, PP: 2}}
	const ms = 1e-3
	flat := func(int) float64 { return ms }
	if got := e.pipelineBubble(flat, 0.5*ms, 4.5*ms); !near(got, 0.5*ms, 1e-9) {
		t.Errorf("bubble %.3f ms, want 0.5", got/ms)
	}
	heavy := func(l int) float64 {
		if l < 2 {
			return 2 * ms
		}
		return ms
	}
	if got := e.pipelineBubble(heavy, 0.5*ms, 6.5*ms); !near(got, 1.5*ms, 1e-9) {
		t.Errorf("bubble %.3f ms, want 1.5", got/ms)
	}
	e.Par.PP = 1
	if got := e.pipelineBubble(flat, 0.5*ms, 4.5*ms); got != 0 {
		t.Errorf("one stage: bubble %g, want 0", got)
	}
}

// TestPipelineStepAtLeastSlowestStage: a PP2 Qwen3.5 step is at least the
// PP1 step of the same lane batch (same layers, plus hand-offs and the
// bubble), and the bubble is at least (PP-1) x lm_head.
func TestPipelineStepAtLeastSlowestStage(t *testing.T) {
	m, _ := LookupPreset("Qwen3.5-397B-A17B")
	g := gpu(t, "b200")
	one, err := NewEngine(m, g, Parallel{TP: 4, EP: 1, PP: 1}, EngineConfig{Precision: FP4, SchedOverhead: 0, SpecOverhead: 0})
	if err != nil {
		t.Fatal(err)
	}
	two, err := NewEngine(m, g, Parallel{TP: 4, EP: 1, PP: 2}, EngineConfig{Precision: FP4, SchedOverhead: 0, SpecOverhead: 0})
	if err != nil {
		t.Fatal(err)
	}
	a, b := one.DecodeStep(16, 0, 1024), two.DecodeStep(16, 0, 1024)
	if !(b.Total()-a.Total() >= a.LMHead) {
		t.Errorf("PP2 step %.3f ms vs PP1 %.3f ms: want at least lm_head %.3f ms more", b.Total()*1e3, a.Total()*1e3, a.LMHead*1e3)
	}
}
