package recipe

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/specsim/specsim/internal/regular"

	"gopkg.in/yaml.v3"
)

// Limits that keep a hostile file from costing more than a real recipe
// does. Real recipes are a few hundred lines, a few levels deep, and use no
// aliases at all.
const (
	// MaxFileBytes caps the bytes read from one recipe file.
	MaxFileBytes = 4 << 20
	// MaxDepth caps mapping/sequence nesting after alias expansion.
	MaxDepth = 64
	// MaxNodes caps the nodes produced when aliases are expanded: yaml.v3
	// leaves aliases unexpanded in a yaml.Node tree, so the expansion, and
	// with it a "billion laughs" document, happens here and is counted.
	MaxNodes = 200_000
	// MaxVariants caps the variants one file may expand into, and
	// MaxExpandedNodes the nodes all of them hold together, so that a base
	// near MaxNodes times thousands of overrides or zip entries cannot cost
	// quadratic time.
	MaxVariants      = 4096
	MaxExpandedNodes = 4_000_000
)

// Kind is the shape of a Value.
type Kind int

// Value kinds. Null is a YAML null (~, null, or an empty value).
const (
	Null Kind = iota
	Scalar
	Map
	List
)

// A Value is one node of a parsed recipe with the line it came from. Maps
// keep key order, so output follows the file.
type Value struct {
	Kind   Kind
	Line   int
	Str    string // scalar text
	Tag    string // resolved YAML tag of a scalar: !!str, !!int, !!float, !!bool
	Keys   []string
	Fields map[string]*Value
	Items  []*Value
}

// Get walks a path of map keys; it returns nil where any step is missing
// or not a map.
func (v *Value) Get(path ...string) *Value {
	for _, k := range path {
		if v == nil || v.Kind != Map {
			return nil
		}
		v = v.Fields[k]
	}
	return v
}

// String gives a scalar's text, or "" for anything else.
func (v *Value) String() string {
	if v == nil || v.Kind != Scalar {
		return ""
	}
	return v.Str
}

// Int parses a scalar as an integer (YAML ints and integral strings such
// as '8').
func (v *Value) Int() (int, bool) {
	if v == nil || v.Kind != Scalar || v.Tag == "!!bool" {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(v.Str))
	if err != nil {
		return 0, false
	}
	return n, true
}

// Float parses a scalar as a number.
func (v *Value) Float() (float64, bool) {
	if v == nil || v.Kind != Scalar || v.Tag == "!!bool" {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v.Str), 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

// Bool reports a scalar's truth the way a Python launcher would see it
// after srt-slurm renders it: YAML booleans and the usual true spellings.
func (v *Value) Bool() bool {
	if v == nil || v.Kind != Scalar {
		return false
	}
	return truthy(v.Str)
}

func truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "y", "on":
		return true
	}
	return false
}

// size counts the nodes of a tree.
func (v *Value) size() int {
	if v == nil {
		return 0
	}
	n := 1
	for _, f := range v.Fields {
		n += f.size()
	}
	for _, it := range v.Items {
		n += it.size()
	}
	return n
}

// clone copies a value deeply.
func (v *Value) clone() *Value {
	if v == nil {
		return nil
	}
	c := *v
	switch v.Kind {
	case Map:
		c.Keys = append([]string(nil), v.Keys...)
		c.Fields = make(map[string]*Value, len(v.Fields))
		for k, f := range v.Fields {
			c.Fields[k] = f.clone()
		}
	case List:
		c.Items = make([]*Value, len(v.Items))
		for i, it := range v.Items {
			c.Items[i] = it.clone()
		}
	}
	return &c
}

func (v *Value) set(key string, val *Value) {
	if _, ok := v.Fields[key]; !ok {
		v.Keys = append(v.Keys, key)
	}
	v.Fields[key] = val
}

func (v *Value) del(key string) {
	if _, ok := v.Fields[key]; !ok {
		return
	}
	delete(v.Fields, key)
	for i, k := range v.Keys {
		if k == key {
			v.Keys = append(v.Keys[:i:i], v.Keys[i+1:]...)
			break
		}
	}
}

// ParseError is invalid or hostile input, with the file and line.
type ParseError struct {
	File string
	Line int // 0 when unknown
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// ReadFile reads at most MaxFileBytes of a file; a longer file is an error
// rather than a truncated parse.
func ReadFile(path string) ([]byte, error) {
	f, st, err := regular.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > MaxFileBytes {
		return nil, &ParseError{File: path, Msg: fmt.Sprintf("file is larger than %d bytes; not a recipe", MaxFileBytes)}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, &ParseError{File: path, Msg: err.Error()}
	}
	if len(data) > MaxFileBytes {
		return nil, &ParseError{File: path, Msg: fmt.Sprintf("file is larger than %d bytes; not a recipe", MaxFileBytes)}
	}
	return data, nil
}

// Duplicate is a mapping key given twice. PyYAML, which srt-slurm uses,
// keeps the last value silently; so do we, and report it.
type Duplicate struct {
	Key  string
	Line int
}

// decodeYAML parses one YAML document into a Value tree with aliases
// expanded under the node and depth limits.
func decodeYAML(file string, data []byte) (*Value, []Duplicate, error) {
	if len(data) > MaxFileBytes {
		return nil, nil, &ParseError{File: file, Msg: fmt.Sprintf("input is larger than %d bytes", MaxFileBytes)}
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, &ParseError{File: file, Msg: "empty document"}
		}
		return nil, nil, yamlError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, nil, &ParseError{File: file, Line: extra.Line, Msg: "more than one YAML document; a recipe is one document"}
	} else if !errors.Is(err, io.EOF) {
		return nil, nil, yamlError(file, err)
	}
	c := converter{file: file}
	v, err := c.convert(&doc, 0, 0)
	if err != nil {
		return nil, nil, err
	}
	return v, c.dups, nil
}

// yamlError turns a yaml.v3 error ("yaml: line 7: ...") into a ParseError
// that carries the line separately.
func yamlError(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.Index(rest, ":"); i > 0 {
			if n, e := strconv.Atoi(rest[:i]); e == nil {
				line = n
				msg = strings.TrimSpace(rest[i+1:])
			}
		}
	}
	return &ParseError{File: file, Line: line, Msg: "invalid YAML: " + msg}
}

type converter struct {
	file  string
	nodes int
	dups  []Duplicate
}

func (c *converter) convert(n *yaml.Node, depth, aliasDepth int) (*Value, error) {
	c.nodes++
	if c.nodes > MaxNodes {
		return nil, &ParseError{File: c.file, Line: n.Line, Msg: fmt.Sprintf("document expands to more than %d nodes (alias bomb?)", MaxNodes)}
	}
	if depth > MaxDepth && aliasDepth > 0 {
		return nil, &ParseError{File: c.file, Line: n.Line, Msg: fmt.Sprintf("alias expansion nests deeper than %d levels (%d aliases deep; alias bomb?)", MaxDepth, aliasDepth)}
	}
	if depth > MaxDepth {
		return nil, &ParseError{File: c.file, Line: n.Line, Msg: fmt.Sprintf("nesting deeper than %d levels", MaxDepth)}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return &Value{Kind: Null, Line: n.Line}, nil
		}
		return c.convert(n.Content[0], depth, aliasDepth)
	case yaml.AliasNode:
		// An alias to an enclosing node would recurse forever; the depth
		// bound stops it, and the node count stops wide expansions.
		if n.Alias == nil || aliasDepth > MaxDepth {
			return nil, &ParseError{File: c.file, Line: n.Line, Msg: "unresolvable alias"}
		}
		return c.convert(n.Alias, depth+1, aliasDepth+1)
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return &Value{Kind: Null, Line: n.Line}, nil
		}
		return &Value{Kind: Scalar, Line: n.Line, Str: n.Value, Tag: n.Tag}, nil
	case yaml.SequenceNode:
		v := &Value{Kind: List, Line: n.Line, Items: make([]*Value, 0, len(n.Content))}
		for _, it := range n.Content {
			cv, err := c.convert(it, depth+1, aliasDepth)
			if err != nil {
				return nil, err
			}
			v.Items = append(v.Items, cv)
		}
		return v, nil
	case yaml.MappingNode:
		v := &Value{Kind: Map, Line: n.Line, Fields: map[string]*Value{}}
		merged := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, vn := n.Content[i], n.Content[i+1]
			if kn.Kind == yaml.ScalarNode && kn.Tag == "!!merge" {
				// "<<: *anchor" merges the anchored map's keys that the
				// mapping does not set itself (YAML 1.1, as PyYAML does).
				if err := c.mergeKey(v, vn, merged, depth, aliasDepth); err != nil {
					return nil, err
				}
				continue
			}
			if kn.Kind != yaml.ScalarNode {
				return nil, &ParseError{File: c.file, Line: kn.Line, Msg: "mapping key is not a scalar"}
			}
			cv, err := c.convert(vn, depth+1, aliasDepth)
			if err != nil {
				return nil, err
			}
			if _, dup := v.Fields[kn.Value]; dup && !merged[kn.Value] {
				c.dups = append(c.dups, Duplicate{Key: kn.Value, Line: kn.Line})
			}
			delete(merged, kn.Value)
			v.set(kn.Value, cv)
		}
		return v, nil
	}
	return nil, &ParseError{File: c.file, Line: n.Line, Msg: "unsupported YAML node"}
}

func (c *converter) mergeKey(dst *Value, src *yaml.Node, merged map[string]bool, depth, aliasDepth int) error {
	var sources []*yaml.Node
	if src.Kind == yaml.SequenceNode {
		sources = src.Content
	} else {
		sources = []*yaml.Node{src}
	}
	for _, s := range sources {
		mv, err := c.convert(s, depth+1, aliasDepth)
		if err != nil {
			return err
		}
		if mv.Kind != Map {
			return &ParseError{File: c.file, Line: s.Line, Msg: "merge key << needs a mapping"}
		}
		for _, k := range mv.Keys {
			if _, ok := dst.Fields[k]; !ok {
				dst.set(k, mv.Fields[k])
				merged[k] = true
			}
		}
	}
	return nil
}

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Scalar:
		return "scalar"
	case Map:
		return "mapping"
	case List:
		return "list"
	}
	return "node"
}
