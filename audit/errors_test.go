package audit

import (
	"errors"
	"strings"
	"testing"
)

// TestDraftQuantizationErrorIsTyped: a draft quantization SGLang's argparse
// refuses, or one given to an engine without the flag, is an *Error on
// "DraftQuantization" with the value as given, naming no specsim flag
// (only SGLang's own --speculative-draft-model-quantization).
func TestDraftQuantizationErrorIsTyped(t *testing.T) {
	for _, tt := range []struct {
		o      Options
		reason string
	}{
		{Options{Engine: EngineSGLang, DraftQuantization: "fp3"}, "SGLang accepts"},
		{Options{DraftQuantization: "NVFP4_ONLIN"}, "SGLang accepts"},
		{Options{Engine: EngineVLLM, DraftQuantization: "fp8"}, "vllm has no such flag"},
	} {
		err := tt.o.Check()
		var e *Error
		if !errors.As(err, &e) || e.Field != "DraftQuantization" || e.Value != tt.o.DraftQuantization || !strings.Contains(e.Reason, tt.reason) ||
			strings.Contains(strings.ReplaceAll(err.Error(), "--speculative-draft-model-quantization", ""), "--") {
			t.Errorf("%+v: error %#v, want an *Error on DraftQuantization saying %q", tt.o, err, tt.reason)
		}
	}
}
