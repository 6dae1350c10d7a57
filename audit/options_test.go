package audit

import (
	"strings"
	"testing"
)

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string // "" = valid
	}{
		{Options{Engine: EngineSGLang}, ""},
		{Options{Engine: EngineSGLang, DraftQuantization: "unquant", MoEBackend: "triton"}, ""},
		{Options{Engine: EngineSGLang, DraftQuantization: "NVFP4_ONLINE", MoEBackend: "auto"}, ""},
		{Options{Engine: EngineVLLM, MoEBackend: "marlin"}, ""},
		{Options{Engine: "sglng"}, `Engine "sglng": want sglang or vllm`}, // cmd maps the field to --engine
		{Options{Engine: EngineSGLang, DraftQuantization: "fp3"}, `DraftQuantization fp3: SGLang accepts`},
		{Options{Engine: EngineVLLM, DraftQuantization: "fp8"}, "no such flag"},
		// marlin is a vLLM backend in the table, not an SGLang one there
		{Options{Engine: EngineSGLang, MoEBackend: "marlin"}, `no MoE backend "marlin"`},
	} {
		err := tc.o.Validate()
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
}
