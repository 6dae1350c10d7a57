package recipe

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Recipe is a parsed recipe file with its selected variants resolved.
type Recipe struct {
	File     string
	Schema   int // 1 or 2
	Variants []*Variant
	// Duplicates are keys given twice in one mapping (the last one wins).
	Duplicates []Duplicate
	// EmptyBase: an override file whose base is an empty mapping.
	EmptyBase bool
}

// SplitSelector splits "file.yaml:override_x" into the file and the
// selector. A colon that is part of the path (no selector-looking suffix)
// stays in the path.
func SplitSelector(arg string) (file, selector string) {
	i := strings.LastIndex(arg, ":")
	if i <= 0 {
		return arg, ""
	}
	sel := arg[i+1:]
	if sel == "" || strings.ContainsAny(sel, `/\`) {
		return arg, ""
	}
	return arg[:i], sel
}

// Load reads and parses one recipe file; arg may carry a ":selector".
func Load(arg string) (*Recipe, error) {
	file, sel := SplitSelector(arg)
	if sel != "" {
		if _, err := os.Stat(arg); err == nil {
			file, sel = arg, "" // the colon is part of an existing file's name
		}
	}
	data, err := ReadFile(file)
	if err != nil {
		return nil, err
	}
	return Parse(file, data, sel)
}

// Parse parses a recipe. Schema 2 files ("schema: 2" with base and
// override_*/zip_override_* sections; srt-slurm also treats any file with
// a top-level base as an override file) expand into their variants; a
// schema-1 file (backend.*_environment, backend.<engine>_config.<mode>) or
// a single schema-2 recipe (roles:) is one variant named after the recipe.
// Invalid YAML, hostile YAML and files that are not recipes give a
// *ParseError naming the file and line.
func Parse(file string, data []byte, selector string) (*Recipe, error) {
	root, dups, err := decodeYAML(file, data)
	if err != nil {
		return nil, err
	}
	perr := func(line int, format string, a ...any) error {
		return &ParseError{File: file, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	if root.Kind != Map {
		return nil, perr(root.Line, "top level is not a mapping; not an srt-slurm recipe")
	}
	r := &Recipe{File: file, Duplicates: dups, Schema: 1}
	if s := root.Fields["schema"]; s != nil {
		n, ok := s.Int()
		if !ok || n < 1 || n > 2 {
			return nil, perr(s.Line, "unknown recipe schema %q; this checker reads srt-slurm schema 1 and 2", s.Str)
		}
		r.Schema = n
	}
	if b := root.Fields["base"]; b != nil {
		r.EmptyBase = b.Kind == Map && len(b.Fields) == 0
		if r.Schema == 1 && root.Fields["schema"] == nil {
			r.Schema = 2 // srtctl detects override files by their base key
		}
		vs, err := expandVariants(root, selector)
		if err != nil {
			return nil, perr(0, "%v", err)
		}
		for _, v := range vs {
			rv, err := resolveVariant(v.name, v.tree, v.section)
			if err != nil {
				return nil, perr(0, "%s: %v", v.name, err)
			}
			r.Variants = append(r.Variants, rv)
		}
		return r, nil
	}
	if refs, ok := masterConfigRefs(root); ok {
		msg := "this is an InferenceX master-config entry (configs/*-master.yaml: image, model, framework, scenarios), " +
			"not an srt-slurm recipe; it carries no draft length or environment to check. Check the recipes it names"
		if len(refs) > 0 {
			msg += ": " + strings.Join(refs, ", ")
		}
		return nil, perr(root.Line, "%s", msg)
	}
	if root.Fields["backend"] == nil && root.Fields["roles"] == nil {
		keys := append([]string(nil), root.Keys...)
		if len(keys) > 8 {
			keys = append(keys[:8], "...")
		}
		return nil, perr(root.Line, "unknown recipe layout: no base, roles or backend at the top level (keys: %s)", strings.Join(keys, ", "))
	}
	if selector != "" && selector != "base" {
		return nil, perr(0, "selector %q given, but this is a single recipe, not an override file with base", selector)
	}
	if root.Fields["roles"] != nil && root.Fields["schema"] == nil {
		r.Schema = 2
	}
	name := root.Get("name").String()
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	v, err := resolveVariant(name, root, nil)
	if err != nil {
		return nil, perr(0, "%v", err)
	}
	r.Variants = []*Variant{v}
	return r, nil
}

// masterConfigRefs recognises an InferenceX master config: every top-level
// value is a mapping with framework and scenarios (or image and model). It
// returns the recipe files the entries reference.
func masterConfigRefs(root *Value) ([]string, bool) {
	if len(root.Keys) == 0 {
		return nil, false
	}
	for _, k := range root.Keys {
		e := root.Fields[k]
		if e.Kind != Map || e.Fields["scenarios"] == nil || (e.Fields["framework"] == nil && e.Fields["image"] == nil) {
			return nil, false
		}
	}
	seen := map[string]bool{}
	var walk func(v *Value, depth int)
	walk = func(v *Value, depth int) {
		if v == nil || depth > MaxDepth {
			return
		}
		switch v.Kind {
		case Map:
			for _, k := range v.Keys {
				if k == "srt-recipe" || k == "eval-srt-recipe" {
					seen[v.Fields[k].String()] = true
				}
				walk(v.Fields[k], depth+1)
			}
		case List:
			for _, it := range v.Items {
				walk(it, depth+1)
			}
		case Scalar:
			if rest, ok := strings.CutPrefix(v.Str, "CONFIG_FILE="); ok {
				seen[rest] = true
			}
		}
	}
	walk(root, 0)
	delete(seen, "")
	refs := make([]string, 0, len(seen))
	for s := range seen {
		refs = append(refs, s)
	}
	sort.Strings(refs)
	return refs, true
}
