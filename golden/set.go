package golden

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Set holds golden curves by model key. Keys are the files' model keys,
// except where several files measure the same model: see Default.
type Set struct {
	entries map[string]*entry // by lower-case key
}

// entry is one golden file: one model key and its curves per thinking mode.
type entry struct {
	key     string // unique in its set
	model   string // model key as written in the file
	source  string // file it came from
	stem    string // file name without extension: the InferenceX curve name
	aliases []string
	curves  map[Thinking]*Curve
}

func (e *entry) setKey(k string) {
	e.key = k
	for _, c := range e.curves {
		c.Model = k
	}
}

func (e *entry) setSource(src string) {
	e.source = src
	for _, c := range e.curves {
		c.Source = src
	}
}

func newSet() *Set { return &Set{entries: map[string]*entry{}} }

// Merge adds o's curves to s; a model key present in both takes o's curves.
// The replaced file's name stays an alias, so that the prefix "qwen3.5"
// still finds a Qwen3.5 curve overridden from a file named otherwise.
func (s *Set) Merge(o *Set) {
	if o == nil {
		return
	}
	if s.entries == nil {
		s.entries = map[string]*entry{}
	}
	for k, e := range o.entries {
		ne := *e
		if old, ok := s.entries[k]; ok {
			ne.aliases = mergeAliases(e.aliases, old.aliases)
		}
		s.entries[k] = &ne
	}
}

func mergeAliases(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, x := range b {
		found := false
		for _, y := range out {
			found = found || x == y
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}

// Models returns the model keys, sorted.
func (s *Set) Models() []string {
	keys := make([]string, 0, len(s.entries))
	for _, e := range s.entries {
		keys = append(keys, e.key)
	}
	sort.Strings(keys)
	return keys
}

// ModelInfo describes one model key of a set.
type ModelInfo struct {
	Key       string     // key in the set
	Model     string     // model key as written in its file
	Source    string     // file the curves came from
	CurveName string     // file name without extension (InferenceX curve id)
	Prefixes  []string   // file prefixes that resolve to this key
	Modes     []Thinking // thinking modes present, "on" first
	MaxK      map[Thinking]int
}

// Info describes the model that name resolves to.
func (s *Set) Info(name string) (ModelInfo, error) {
	key, err := s.Resolve(name)
	if err != nil {
		return ModelInfo{}, err
	}
	e := s.entries[strings.ToLower(key)]
	info := ModelInfo{Key: e.key, Model: e.model, Source: e.source, CurveName: e.stem, MaxK: map[Thinking]int{}}
	for _, a := range e.aliases {
		if p := prefixOf(a); !slices.Contains(info.Prefixes, p) {
			info.Prefixes = append(info.Prefixes, p)
		}
	}
	for _, t := range []Thinking{ThinkingOn, ThinkingOff} {
		if c, ok := e.curves[t]; ok {
			info.Modes = append(info.Modes, t)
			info.MaxK[t] = c.MaxK()
		}
	}
	return info, nil
}

// prefixOf is the InferenceX model prefix of a curve name: the part before
// the first '_' ("qwen3.5" of "qwen3.5_mtp").
func prefixOf(curveName string) string {
	if i := strings.IndexByte(curveName, '_'); i >= 0 {
		return curveName[:i]
	}
	return curveName
}

// quantSuffixes are hub-name endings that name a quantization, not a model.
var quantSuffixes = []string{"nvfp4", "mxfp4", "fp4", "fp8", "int4", "int8", "w4a16", "w8a8", "w4a8", "awq", "gptq", "bf16", "fp16"}

// baseModel strips trailing quantization tokens: "qwen3.5-397b-a17b-nvfp4"
// becomes "qwen3.5-397b-a17b".
func baseModel(name string) string {
	for {
		trimmed := false
		for _, q := range quantSuffixes {
			if rest, ok := strings.CutSuffix(name, "-"+q); ok && rest != "" {
				name, trimmed = rest, true
			}
		}
		if !trimmed {
			return name
		}
	}
}

// Resolve maps a name to a model key of the set. It accepts, case-insensitively:
//   - a model key ("qwen3.5-397b-a17b-nvfp4", "minimax-m3@minimaxm3_eagle3_gqa");
//   - a curve name, the file name without extension ("minimaxm3_eagle3_gqa");
//   - a file prefix, the curve name before its first '_' ("qwen3.5", "dsv4");
//   - a hub name: the organisation is dropped and quantization suffixes
//     (-NVFP4, -FP8, -FP4, ...) are ignored on both sides, so
//     "nvidia/Qwen3.5-397B-A17B-NVFP4" and "Qwen/Qwen3.5-397B-A17B" both
//     find qwen3.5-397b-a17b-nvfp4.
//
// Where a prefix or hub name fits several files of one model, the file that
// kept the plain model key wins. An unknown or ambiguous name is an error
// that lists what exists.
func (s *Set) Resolve(name string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		return "", fmt.Errorf("empty model name; golden curves exist for: %s", s.known())
	}
	if e, ok := s.entries[n]; ok {
		return e.key, nil
	}
	var byCurve, byPrefix []*entry
	for _, e := range s.entries {
		for _, a := range e.aliases {
			if a == n {
				byCurve = append(byCurve, e)
				break
			}
		}
		for _, a := range e.aliases {
			if prefixOf(a) == n {
				byPrefix = append(byPrefix, e)
				break
			}
		}
	}
	for _, cands := range [][]*entry{byCurve, byPrefix} {
		if key, ok, err := pick(name, cands); ok {
			return key, err
		}
	}
	hub := n
	if i := strings.LastIndexByte(hub, '/'); i >= 0 {
		hub = hub[i+1:]
	}
	var exact, base []*entry
	for _, e := range s.entries {
		m := strings.ToLower(e.model)
		if m == hub {
			exact = append(exact, e)
		} else if baseModel(m) == baseModel(hub) {
			base = append(base, e)
		}
	}
	for _, cands := range [][]*entry{exact, base} {
		if key, ok, err := pick(name, cands); ok {
			return key, err
		}
	}
	return "", fmt.Errorf("unknown model %q; golden curves exist for: %s", name, s.known())
}

// pick chooses among candidates for a name: the only one, else the only
// one that kept its plain model key. ok is false when there is none.
func pick(name string, cands []*entry) (key string, ok bool, err error) {
	switch len(cands) {
	case 0:
		return "", false, nil
	case 1:
		return cands[0].key, true, nil
	}
	var plain []*entry
	keys := make([]string, len(cands))
	for i, e := range cands {
		keys[i] = e.key
		if e.key == e.model {
			plain = append(plain, e)
		}
	}
	if len(plain) == 1 {
		return plain[0].key, true, nil
	}
	sort.Strings(keys)
	return "", true, fmt.Errorf("model %q is ambiguous: it fits %s", name, strings.Join(keys, ", "))
}

// known lists the keys with their prefixes for error messages.
func (s *Set) known() string {
	if len(s.entries) == 0 {
		return "(none: the set is empty)"
	}
	var parts []string
	for _, k := range s.Models() {
		e := s.entries[strings.ToLower(k)]
		var pre []string
		for _, a := range e.aliases {
			pre = append(pre, prefixOf(a))
		}
		parts = append(parts, fmt.Sprintf("%s (prefix %s)", k, strings.Join(pre, ", ")))
	}
	return strings.Join(parts, "; ")
}

// Curve returns the curve of a model (any name Resolve accepts) in one
// thinking mode, as a copy the caller may change. A missing mode is an
// error naming the modes that exist.
func (s *Set) Curve(model string, t Thinking) (*Curve, error) {
	key, err := s.Resolve(model)
	if err != nil {
		return nil, err
	}
	e := s.entries[strings.ToLower(key)]
	if c, ok := e.curves[t]; ok {
		cp := *c
		cp.AL = append([]float64(nil), c.AL...)
		return &cp, nil
	}
	var have []string
	for _, m := range []Thinking{ThinkingOn, ThinkingOff} {
		if _, ok := e.curves[m]; ok {
			have = append(have, string(m))
		}
	}
	return nil, fmt.Errorf("model %s (%s) has no thinking %s curve; thinking modes present: %s", key, e.source, t, strings.Join(have, ", "))
}
