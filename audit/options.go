package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/specsim/specsim/kernels"
)

// sglangQuantizations are the values SGLang's argument parser accepts for
// --quantization and --speculative-draft-model-quantization
// (sgl-project/sglang python/sglang/srt/server_args.py,
// QUANTIZATION_CHOICES). A value outside the list makes the server refuse to
// start, so an audit for it would describe a run that cannot happen.
var sglangQuantizations = []string{
	"awq", "fp8", "mxfp8", "gptq", "marlin", "gptq_marlin", "awq_marlin", "bitsandbytes", "gguf",
	"modelopt", "modelopt_fp8", "modelopt_fp4", "nvfp4_online", "modelopt_mixed", "petit_nvfp4",
	"w8a8_int8", "w8a8_fp8", "moe_wna16", "w4afp8", "mxfp4", "auto-round", "auto-round-int8",
	"compressed-tensors", "modelslim", "mxfp_w4a8", "quark", "quark_int4fp8_moe", "quark_mxfp4",
	"mlx_q4", "mlx_q8", "unquant", "humming",
}

// Validate refuses options no engine run can have: an unknown engine, a draft
// quantization SGLang's parser rejects (or any with another engine, which has
// no such flag), and a MoE backend the engine's backend table
// (kernels/data/backends.yaml) does not list.
func (o Options) Validate() error {
	if !slices.Contains(Engines(), o.Engine) {
		return fmt.Errorf("--engine %q: want %s", o.Engine, strings.Join(Engines(), " or "))
	}
	if dq := strings.ToLower(o.DraftQuantization); dq != "" {
		if o.Engine != EngineSGLang {
			return fmt.Errorf("--draft-quantization is SGLang's --speculative-draft-model-quantization; engine %s has no such flag", o.Engine)
		}
		if !slices.Contains(sglangQuantizations, dq) {
			return fmt.Errorf("--draft-quantization %q: SGLang accepts %s", o.DraftQuantization, strings.Join(sglangQuantizations, ", "))
		}
	}
	if mb := strings.ToLower(strings.TrimSpace(o.MoEBackend)); mb != "" && mb != "auto" {
		var names []string
		for _, b := range kernels.Backends() {
			if b.Engine == o.Engine {
				names = append(names, b.Name)
			}
		}
		if !slices.Contains(names, mb) {
			return fmt.Errorf("--moe-backend %q: %s's backends are auto, %s", o.MoEBackend, o.Engine, strings.Join(names, ", "))
		}
	}
	return nil
}
