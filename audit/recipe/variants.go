package recipe

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// deepMerge returns base with override merged in, the way srt-slurm's
// deep_merge does it: mappings merge key by key, recursively; a list or a
// scalar replaces what base had (lists are never appended); a null deletes
// the key. A mapping that meets a non-mapping in base replaces it whole,
// nulls inside it included.
func deepMerge(base, override *Value) *Value {
	out := base.clone()
	if out == nil || out.Kind != Map {
		out = &Value{Kind: Map, Fields: map[string]*Value{}}
	}
	if override == nil || override.Kind != Map {
		return out
	}
	for _, k := range override.Keys {
		ov := override.Fields[k]
		switch {
		case ov.Kind == Null:
			out.del(k)
		case ov.Kind == Map && out.Fields[k] != nil && out.Fields[k].Kind == Map:
			out.set(k, deepMerge(out.Fields[k], ov))
		default:
			out.set(k, ov.clone())
		}
	}
	return out
}

// zipLength finds N for a zip_override section: every list-valued leaf
// (lists are leaves: a list of lists is one dimension) is a dimension;
// length-1 lists broadcast; all other lengths must agree. srt-slurm raises
// on a section without lists, on an empty list and on unequal lengths; so
// do we.
func zipLength(section *Value) (int, error) {
	var lengths []int
	var walk func(v *Value)
	walk = func(v *Value) {
		for _, k := range v.Keys {
			f := v.Fields[k]
			switch f.Kind {
			case List:
				lengths = append(lengths, len(f.Items))
			case Map:
				walk(f)
			}
		}
	}
	walk(section)
	if len(lengths) == 0 {
		return 0, fmt.Errorf("zip_override section contains no lists; nothing to zip")
	}
	n := 1
	seen := map[int]bool{}
	for _, l := range lengths {
		if l == 0 {
			return 0, fmt.Errorf("zip_override contains an empty list; cannot zip zero-length lists")
		}
		if l != 1 {
			seen[l] = true
			n = l
		}
	}
	if len(seen) > 1 {
		var ls []int
		for l := range seen {
			ls = append(ls, l)
		}
		sort.Ints(ls)
		return 0, fmt.Errorf("incompatible zip lengths %v: every list must have the same length or length 1 (broadcast)", ls)
	}
	return n, nil
}

// zipSlice replaces every list leaf with its i-th element (element 0 for a
// length-1 list); scalars and nulls pass through.
func zipSlice(section *Value, i int) *Value {
	out := &Value{Kind: Map, Line: section.Line, Fields: map[string]*Value{}}
	for _, k := range section.Keys {
		f := section.Fields[k]
		switch f.Kind {
		case List:
			j := i
			if len(f.Items) == 1 {
				j = 0
			}
			out.set(k, f.Items[j].clone())
		case Map:
			out.set(k, zipSlice(f, i))
		default:
			out.set(k, f.clone())
		}
	}
	return out
}

// A variant is one resolved recipe of a file: the whole tree after merging.
type variant struct {
	name    string // base, override_x, zip_override_y[i], or the recipe name
	tree    *Value
	section *Value // the override or zip slice merged onto base; nil for base and schema 1
}

var zipIndexSelector = regexp.MustCompile(`^(zip_override_[\w-]+)\[(\d+)\]$`)

// expandVariants turns a schema-2 file into its variants. selector follows
// srtctl: "" selects every override_* and zip_override_* variant (base
// excluded), "base", "override_x", "zip_override_y" (the whole group),
// "zip_override_y[i]", or an fnmatch glob over override and zip keys.
func expandVariants(root *Value, selector string) ([]variant, error) {
	vs, err := expandVariantsUnbounded(root, selector)
	if err != nil {
		return nil, err
	}
	if len(vs) > MaxVariants {
		return nil, fmt.Errorf("the selection expands to %d variants, more than %d", len(vs), MaxVariants)
	}
	return vs, nil
}

func expandVariantsUnbounded(root *Value, selector string) ([]variant, error) {
	base := root.Fields["base"]
	if base.Kind != Map {
		return nil, fmt.Errorf("line %d: base must be a mapping", base.Line)
	}
	// Every variant copies base: bound the copies before making them.
	budget := MaxExpandedNodes
	baseSize := base.size()
	spend := func(n, sectionSize int) error {
		budget -= n * (baseSize + sectionSize)
		if budget < 0 {
			return fmt.Errorf("expanding the variants would copy more than %d nodes; too many variants for the size of base", MaxExpandedNodes)
		}
		return nil
	}
	var overrides, zips []string
	for _, k := range root.Keys {
		switch {
		case strings.HasPrefix(k, "override_"):
			overrides = append(overrides, k)
		case strings.HasPrefix(k, "zip_override_"):
			zips = append(zips, k)
		}
	}
	sort.Strings(overrides)
	sort.Strings(zips)

	available := func() string {
		var a []string
		a = append(a, "base")
		a = append(a, overrides...)
		for _, z := range zips {
			a = append(a, z+"[i]")
		}
		return strings.Join(a, ", ")
	}
	one := func(key string) (variant, error) {
		sec := root.Fields[key]
		if sec.Kind != Map && sec.Kind != Null {
			return variant{}, fmt.Errorf("line %d: %s must be a mapping", sec.Line, key)
		}
		if err := spend(1, sec.size()); err != nil {
			return variant{}, err
		}
		tree := deepMerge(base, sec)
		if sec.Get("name") == nil {
			// srtctl names an override job "<base name>_<suffix>"
			setName(tree, baseName(base)+"_"+strings.TrimPrefix(key, "override_"))
		}
		return variant{name: key, tree: tree, section: sec}, nil
	}
	group := func(key string) ([]variant, error) {
		sec := root.Fields[key]
		if sec.Kind != Map {
			return nil, fmt.Errorf("line %d: %s must be a mapping", sec.Line, key)
		}
		n, err := zipLength(sec)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %v", sec.Line, key, err)
		}
		if n > MaxVariants {
			return nil, fmt.Errorf("line %d: %s zips %d variants, more than %d", sec.Line, key, n, MaxVariants)
		}
		if err := spend(n, sec.size()); err != nil {
			return nil, err
		}
		out := make([]variant, n)
		for i := range n {
			slice := zipSlice(sec, i)
			tree := deepMerge(base, slice)
			if f := sec.Get("name"); f == nil || f.Kind != List {
				// without a name list srtctl names zip jobs "<base name>_<group>_<i>"
				setName(tree, fmt.Sprintf("%s_%s_%d", baseName(base), strings.TrimPrefix(key, "zip_override_"), i))
			}
			out[i] = variant{name: fmt.Sprintf("%s[%d]", key, i), tree: tree, section: slice}
		}
		return out, nil
	}
	all := func(keys []string) ([]variant, error) {
		var out []variant
		for _, k := range keys {
			if strings.HasPrefix(k, "zip_override_") {
				g, err := group(k)
				if err != nil {
					return nil, err
				}
				out = append(out, g...)
				continue
			}
			v, err := one(k)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}

	switch {
	case selector == "":
		vs, err := all(append(append([]string(nil), overrides...), zips...))
		if err != nil {
			return nil, err
		}
		if len(vs) == 0 {
			// A file with only a base: srtctl would submit nothing without
			// ":base"; checking the base is what a reviewer wants.
			return []variant{{name: "base", tree: base.clone()}}, nil
		}
		return vs, nil
	case selector == "base":
		return []variant{{name: "base", tree: base.clone()}}, nil
	case zipIndexSelector.MatchString(selector):
		m := zipIndexSelector.FindStringSubmatch(selector)
		if root.Fields[m[1]] == nil {
			return nil, fmt.Errorf("selector %q: no %s; available: %s", selector, m[1], available())
		}
		g, err := group(m[1])
		if err != nil {
			return nil, err
		}
		i, err := strconv.Atoi(m[2])
		if err != nil || i >= len(g) {
			return nil, fmt.Errorf("selector %q: index out of range (%s has %d variants, 0..%d)", selector, m[1], len(g), len(g)-1)
		}
		return g[i : i+1], nil
	case strings.ContainsAny(selector, "*?"):
		var matched []string
		for _, k := range append(append([]string(nil), overrides...), zips...) {
			if ok, err := path.Match(selector, k); err != nil {
				return nil, fmt.Errorf("selector %q: %v", selector, err)
			} else if ok {
				matched = append(matched, k)
			}
		}
		if len(matched) == 0 {
			return nil, fmt.Errorf("selector %q matches no variant; available: %s", selector, available())
		}
		sort.Strings(matched)
		return all(matched)
	case strings.HasPrefix(selector, "zip_override_"):
		if root.Fields[selector] == nil {
			return nil, fmt.Errorf("selector %q not found; available: %s", selector, available())
		}
		return group(selector)
	default:
		if !strings.HasPrefix(selector, "override_") || root.Fields[selector] == nil {
			return nil, fmt.Errorf("selector %q not found; available: %s", selector, available())
		}
		v, err := one(selector)
		if err != nil {
			return nil, err
		}
		return []variant{v}, nil
	}
}

func baseName(base *Value) string {
	if n := base.Get("name"); n != nil && n.Kind == Scalar {
		return n.Str
	}
	return "unnamed"
}

func setName(tree *Value, name string) {
	tree.set("name", &Value{Kind: Scalar, Str: name, Tag: "!!str"})
}
