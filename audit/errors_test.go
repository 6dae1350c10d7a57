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

// Layout sizes outside 1..MaxParallel are *Error values on TP, EP or DP
// with the size as given, naming no specsim flag; in-range sizes pass.
func TestConfigValidateErrorsAreTyped(t *testing.T) {
	ok := Config{Options: Options{Engine: EngineSGLang}, TP: []int{1, 8}, EP: 1, DP: 1}
	for _, tt := range []struct {
		c            Config
		field, value string
	}{
		{Config{TP: []int{8, 0}, EP: 1, DP: 1}, "TP", "0"},
		{Config{TP: []int{MaxParallel + 1}, EP: 1, DP: 1}, "TP", "4097"},
		{Config{TP: []int{1}, EP: -2, DP: 1}, "EP", "-2"},
		{Config{TP: []int{1}, EP: 1, DP: 99999999999}, "DP", "99999999999"},
	} {
		err := tt.c.Validate()
		var e *Error
		if !errors.As(err, &e) || e.Field != tt.field || e.Value != tt.value || strings.Contains(err.Error(), "--") {
			t.Errorf("%+v: error %#v, want an *Error on %s %s", tt.c, err, tt.field, tt.value)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("%+v: %v", ok, err)
	}
}

// An engine the audit does not know is an *Error on Engine.
func TestUnknownEngineIsTyped(t *testing.T) {
	err := Options{Engine: "trt"}.Validate()
	var e *Error
	if !errors.As(err, &e) || e.Field != "Engine" || e.Value != `"trt"` || !strings.Contains(e.Reason, "sglang") {
		t.Errorf("error %#v, want an *Error on Engine", err)
	}
}
