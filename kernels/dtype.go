package kernels

import (
	"fmt"
	"strings"
)

// DType is a number format of weights, activations or a KV cache.
type DType string

// The formats the cost model knows.
const (
	BF16  DType = "bf16"
	FP16  DType = "fp16"
	FP32  DType = "fp32"
	FP8   DType = "fp8"
	NVFP4 DType = "nvfp4"
	INT8  DType = "int8"
	INT4  DType = "int4"
)

var dtypeAliases = map[string]DType{
	"bf16": BF16, "bfloat16": BF16,
	"fp16": FP16, "float16": FP16, "half": FP16,
	"fp32": FP32, "float32": FP32, "float": FP32,
	"fp8": FP8, "e4m3": FP8, "fp8_e4m3": FP8, "float8_e4m3fn": FP8,
	"nvfp4": NVFP4, "fp4": NVFP4,
	"int8": INT8, "w8a8": INT8,
	"int4": INT4, "w4a16": INT4,
}

// ParseDType accepts the names above and common spellings ("bfloat16",
// "e4m3", "fp4"), case-insensitively.
func ParseDType(s string) (DType, error) {
	if d, ok := dtypeAliases[strings.ToLower(strings.TrimSpace(s))]; ok {
		return d, nil
	}
	return "", fmt.Errorf("unknown dtype %q: want bf16, fp16, fp32, fp8, nvfp4, int8 or int4", s)
}

// Bytes is the storage per element including block scales: NVFP4 keeps one
// FP8 scale per 16 values (4.5 bits), INT4 (GPTQ/AWQ style) one BF16 scale per
// group of 128 (4.125 bits). Per-tensor scales of FP8 and INT8 are negligible.
func (d DType) Bytes() float64 {
	switch d {
	case BF16, FP16:
		return 2
	case FP32:
		return 4
	case FP8, INT8:
		return 1
	case NVFP4:
		return 0.5 + 1.0/16
	case INT4:
		return 0.5 + 2.0/128
	}
	return 2
}
