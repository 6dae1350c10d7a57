package audit

import (
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
)

// Exclude patterns are matched the way each engine matches them; the two
// differ, and a checkpoint can be covered under one and not the other.
//
// vLLM (vllm/model_executor/layers/quantization/modelopt.py,
// is_layer_excluded): an exact name, then the legacy substring test
// (pattern contained in the prefix, also with "language_model." removed),
// then fnmatch(prefix, pattern), whose '*' also crosses dots.
//
// SGLang (python/sglang/srt/layers/quantization/modelopt_quant.py,
// is_layer_excluded): each pattern becomes a regex by escaping '.' and
// turning '*' into '.*'; it must fullmatch the prefix (or the prefix with
// "language_model." removed) or any single dot-separated component of it.

// Compiled patterns are cached: an audit asks about the same few hundred
// patterns for every module. The cache stops growing at maxCachedRegexps.
var (
	regexCache  sync.Map // pattern key -> *regexp.Regexp (nil when invalid)
	regexCached atomic.Int64
)

const maxCachedRegexps = 1 << 14

type cacheKey struct{ flavor, pattern string }

func cachedRegexp(key cacheKey, expr func() string) *regexp.Regexp {
	if v, ok := regexCache.Load(key); ok {
		re, _ := v.(*regexp.Regexp)
		return re
	}
	re, err := regexp.Compile(expr())
	if err != nil {
		re = nil
	}
	if regexCached.Add(1) <= maxCachedRegexps {
		regexCache.Store(key, re)
	}
	return re
}

// fnmatchRegexp translates a Python fnmatch pattern into an anchored Go
// regular expression ('*' any run, '?' one character, [seq], [!seq]).
func fnmatchRegexp(pat string) *regexp.Regexp {
	return cachedRegexp(cacheKey{"fnmatch", pat}, func() string { return fnmatchExpr(pat) })
}

func fnmatchExpr(pat string) string {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '[':
			j := strings.IndexByte(pat[i+1:], ']')
			if j < 0 || (j == 0 && (i+2 >= len(pat) || strings.IndexByte(pat[i+2:], ']') < 0)) {
				b.WriteString(`\[`)
				continue
			}
			if j == 0 { // "[]...]" : a leading ']' is literal
				j = 1 + strings.IndexByte(pat[i+2:], ']')
			}
			set := pat[i+1 : i+1+j]
			i += j + 1
			if strings.HasPrefix(set, "!") {
				set = "^" + set[1:]
			} else if strings.HasPrefix(set, "^") {
				set = `\` + set
			}
			b.WriteString("[" + strings.ReplaceAll(set, `\`, `\\`) + "]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	return b.String()
}

// Fnmatch reports whether name matches the Python fnmatch pattern.
func Fnmatch(name, pattern string) bool {
	re := fnmatchRegexp(pattern)
	return re != nil && re.MatchString(name)
}

func stripLanguageModel(prefix string) string {
	return strings.Replace(prefix, "language_model.", "", 1)
}

// VLLMExcluded reports whether vLLM's ModelOpt config leaves the layer with
// this prefix unquantized because of the exclude list.
func VLLMExcluded(patterns []string, prefix string) bool {
	stripped := stripLanguageModel(prefix)
	for _, p := range patterns {
		if p == prefix || strings.Contains(prefix, p) || strings.Contains(stripped, p) {
			return true
		}
	}
	for _, p := range patterns {
		if Fnmatch(prefix, p) {
			return true
		}
	}
	return false
}

func sglangRegexp(pat string) *regexp.Regexp {
	return cachedRegexp(cacheKey{"sglang", pat}, func() string {
		return `^(?:` + strings.ReplaceAll(strings.ReplaceAll(pat, ".", `\.`), "*", ".*") + `)$`
	})
}

// SGLangExcluded reports whether SGLang's ModelOpt config leaves the layer
// with this prefix unquantized because of the exclude list.
func SGLangExcluded(patterns []string, prefix string) bool {
	candidates := []string{prefix}
	if s := stripLanguageModel(prefix); s != prefix {
		candidates = append(candidates, s)
	}
	parts := strings.Split(prefix, ".") // the stripped prefix has the same parts, minus one
	for _, p := range patterns {
		re := sglangRegexp(p)
		if re == nil {
			continue
		}
		for _, c := range candidates {
			if re.MatchString(c) {
				return true
			}
		}
		for _, part := range parts {
			if re.MatchString(part) {
				return true
			}
		}
	}
	return false
}

// ignoreListExcluded matches the non-ModelOpt forms: compressed-tensors
// "ignore" (exact, or "re:" + a regex matched at the start) and FP8
// modules_to_not_convert / ignored_layers (exact or contained, the
// Hugging Face convention).
func ignoreListExcluded(method string, patterns []string, prefix string) bool {
	for _, p := range patterns {
		if rest, ok := strings.CutPrefix(p, "re:"); ok {
			if re := cachedRegexp(cacheKey{"re", rest}, func() string { return `^(?:` + rest + `)` }); re != nil && re.MatchString(prefix) {
				return true
			}
			continue
		}
		if p == prefix {
			return true
		}
		if method != "compressed-tensors" && (strings.Contains(prefix, p) || strings.Contains(stripLanguageModel(prefix), p)) {
			return true
		}
	}
	return false
}

// EnginePrefix is the layer prefix an engine asks the quant config about
// for a checkpoint module: per-expert modules collapse to their FusedMoE
// layer ("...mlp.experts.7.up_proj" -> "...mlp.experts").
func EnginePrefix(module string) string {
	if i := strings.Index(module, ".experts."); i >= 0 {
		rest := module[i+len(".experts."):]
		if j := strings.IndexByte(rest, '.'); j > 0 && allDigits(rest[:j]) {
			return module[:i+len(".experts")]
		}
	}
	return module
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Excluded applies the engine's matching to one module under a quant
// config. MIXED_PRECISION configs quantize only what quantized_layers
// lists, so anything else counts as excluded there.
func Excluded(engine string, q *QuantConfig, module string) bool {
	if q == nil {
		return true
	}
	prefix := EnginePrefix(module)
	key := excludeKey{engine, prefix}
	if q.Algo == "MIXED_PRECISION" {
		key.prefix = module // quantized_layers may name single experts
	}
	return q.Memo(key, func() bool { return excluded(engine, q, module, prefix) })
}

type excludeKey struct{ engine, prefix string }

func excluded(engine string, q *QuantConfig, module, prefix string) bool {
	if q.Algo == "MIXED_PRECISION" && len(q.QuantizedLayers) > 0 {
		if !inQuantizedLayers(q, prefix) && !inQuantizedLayers(q, module) {
			return true
		}
	}
	switch q.Method {
	case "modelopt", "":
		if engine == EngineVLLM {
			return VLLMExcluded(q.Exclude, prefix)
		}
		return SGLangExcluded(q.Exclude, prefix)
	default:
		return ignoreListExcluded(q.Method, q.Exclude, prefix)
	}
}

// inQuantizedLayers reports whether prefix is a quantized_layers key or a
// dotted prefix of one (vLLM's lookup: direct, then any key under it).
func inQuantizedLayers(q *QuantConfig, prefix string) bool {
	return q.LayerPrefixes()[prefix]
}
