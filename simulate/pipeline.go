package simulate

// ppStageLayers splits n decoder layers over pp pipeline stages the way
// SGLang does (python/sglang/srt/distributed/utils.py get_pp_indices,
// taken from vLLM): n/pp layers each, and the remainder one apiece to the
// stages before the last, from the second-to-last backwards, so that the
// last stage, which also runs lm_head and sampling, holds no extra layer.
// It returns each stage's first layer and the end (len pp+1).
func ppStageLayers(n, pp int) []int {
	parts := make([]int, pp)
	for i := range parts {
		parts[i] = n / pp
	}
	for i := 2; i < n%pp+2; i++ {
		parts[pp-i]++
	}
	bounds := make([]int, pp+1)
	for i, c := range parts {
		bounds[i+1] = bounds[i] + c
	}
	return bounds
}

// pipelineBubble is what a pipeline-parallel forward waits beyond the sum
// of its stages. The serving loop runs a PP instance as PP micro-batch
// lanes (SGLang's event_loop_pp keeps pp_size micro-batches in flight), so
// in steady state every stage serves each lane once per cycle and a lane's
// step is PP times the slowest stage, not the sum of the stages: the
// difference is the bubble the faster stages idle through. A stage costs
// its layers (layer(l) each, with their share of launches and inter-kernel
// gaps, total-lmHead spread evenly) and the last stage adds lm_head and
// sampling. Balanced stages pay nothing; the last stage's lm_head alone
// makes a bubble of (PP-1) x lm_head.
func (e *Engine) pipelineBubble(layer func(l int) float64, lmHead, total float64) float64 {
	m, pp := e.Model, e.Par.PP
	if pp <= 1 {
		return 0
	}
	var layersSum float64
	for l := range m.Layers {
		layersSum += layer(l)
	}
	// Everything that is neither a layer nor lm_head (launches, gaps,
	// hand-offs) is shared out per layer.
	rest := (total - layersSum - lmHead) / float64(m.Layers)
	bounds := ppStageLayers(m.Layers, pp)
	slowest := 0.0
	for st := range pp {
		t := 0.0
		for l := bounds[st]; l < bounds[st+1]; l++ {
			t += layer(l) + rest
		}
		if st == pp-1 {
			t += lmHead
		}
		slowest = max(slowest, t)
	}
	return max(float64(pp)*slowest-total, 0)
}
