package recipe

import (
	"fmt"
	"strings"
)

// tableCurves is a Curves backed by golden AL values typed in from the
// InferenceX golden files (golden_al_distribution/*.yaml at mirror HEAD
// 843c6254ff69), so these tests do not depend on package golden.
type tableCurves map[string]map[string][]float64

var publishedCurves = tableCurves{
	"qwen3.5-397b-a17b-nvfp4": {
		"on":  {1.93, 2.73, 3.39, 3.97, 4.41, 4.80, 5.04, 5.21},
		"off": {1.92, 2.70, 3.33, 3.83, 4.20, 4.48, 4.73, 4.71},
	},
	"deepseek-v4-pro": {
		"on":  {1.79, 2.27, 2.49, 2.54, 2.55, 2.55, 2.54, 2.58},
		"off": {1.92, 2.61, 2.97, 3.00, 3.10, 3.16, 3.00, 3.11},
	},
	"glm-5.2-fp8": {
		"on": {1.84, 2.50, 2.99, 3.33, 3.61, 3.78, 3.91, 4.06},
	},
}

// aliases maps the names recipes use to model keys, as golden.Resolve does
// for hub names and file prefixes.
var publishedAliases = map[string]string{
	"nvidia/qwen3.5-397b-a17b-nvfp4": "qwen3.5-397b-a17b-nvfp4",
	"qwen/qwen3.5-397b-a17b":         "qwen3.5-397b-a17b-nvfp4",
	"qwen3.5":                        "qwen3.5-397b-a17b-nvfp4",
	"qwen3.5_mtp":                    "qwen3.5-397b-a17b-nvfp4",
	"dsv4_mtp":                       "deepseek-v4-pro",
	"glm5.2_mtp":                     "glm-5.2-fp8",
	"glm5.2":                         "glm-5.2-fp8",
	"deepseek-ai/deepseek-v4-pro":    "deepseek-v4-pro",
	"dsv4":                           "deepseek-v4-pro",
	"zai-org/glm-5.2-fp8":            "glm-5.2-fp8",
}

var publishedPrefixes = map[string]string{
	"qwen3.5-397b-a17b-nvfp4": "qwen3.5",
	"deepseek-v4-pro":         "dsv4",
	"glm-5.2-fp8":             "glm5.2",
}

func (t tableCurves) Prefix(name string) (string, error) {
	key := strings.ToLower(name)
	if a, ok := publishedAliases[key]; ok {
		key = a
	}
	if p, ok := publishedPrefixes[key]; ok {
		return p, nil
	}
	return "", fmt.Errorf("unknown model %q", name)
}

func (t tableCurves) Curve(name, thinking string) (*GoldenCurve, error) {
	key := strings.ToLower(name)
	if a, ok := publishedAliases[key]; ok {
		key = a
	}
	modes, ok := t[key]
	if !ok {
		return nil, fmt.Errorf("unknown model %q", name)
	}
	al, ok := modes[thinking]
	if !ok {
		return nil, fmt.Errorf("model %s has no thinking %s curve", key, thinking)
	}
	return &GoldenCurve{Model: key, Thinking: thinking, Source: "table", AL: al}, nil
}
