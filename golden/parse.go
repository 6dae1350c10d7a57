package golden

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed data/*.yaml
var embedded embed.FS

// Bounds on what a golden file may contain. Real files are under 2 KiB with
// k = 1..8; the caps only keep hostile input from costing memory or time.
const (
	MaxFileBytes   = 1 << 20 // largest golden file read
	MaxDraftLength = 64      // largest draft length k accepted
	maxDirFiles    = 1000    // most files read from one directory
	maxYAMLNodes   = 10000   // most YAML nodes in one file
	maxAL          = 1000    // AL values beyond this are rejected as absurd; [1, k+1] violations are warnings
)

// Default returns every embedded golden file (golden/data/*.yaml) as one set.
func Default() (*Set, error) {
	s, err := parseFS(embedded, "data", "")
	if err != nil {
		return nil, err
	}
	for _, e := range s.entries {
		e.setSource("golden/data/" + e.source + " (embedded)")
	}
	return s, nil
}

// LoadFile reads one golden file from disk.
func LoadFile(name string) (*Set, error) {
	data, err := readBounded(name)
	if err != nil {
		return nil, err
	}
	return Parse(name, data)
}

// LoadDir reads every *.yaml and *.yml file in dir (not its subdirectories)
// as one set, the way Default reads the embedded files.
func LoadDir(dir string) (*Set, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("golden dir: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("golden dir %s: not a directory", dir)
	}
	return parseFS(os.DirFS(dir), ".", dir)
}

func readBounded(name string) ([]byte, error) {
	data, err := readRegular(name, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("golden file: %w", err)
	}
	return data, nil
}

// parseFS reads the golden files of one directory of fsys. Files are read in
// name order. Several files may measure the same model key (a GQA draft
// beside an MLA draft, a probabilistic beside a greedy DSpark draft); the
// file with the shortest name keeps the plain key and the others become
// "key@file-stem", so that every curve stays reachable.
//
// disk, when not empty, is the directory fsys stands for: files are then
// opened by their path on disk (open first, then checked, so that a file
// swapped for a FIFO after the listing cannot block) and every error and
// source names that path.
func parseFS(fsys fs.FS, dir, disk string) (*Set, error) {
	where := dir
	if disk != "" {
		where = disk
	}
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("golden dir %s: %w", where, err)
	}
	var names []string
	for _, e := range ents {
		if ext := path.Ext(e.Name()); ext != ".yaml" && ext != ".yml" {
			continue
		}
		regular := e.Type().IsRegular()
		if e.Type()&fs.ModeSymlink != 0 {
			// A linked file counts as what it links to.
			st, err := fs.Stat(fsys, path.Join(dir, e.Name()))
			regular = err == nil && st.Mode().IsRegular()
		}
		if regular {
			names = append(names, e.Name())
		}
	}
	if len(names) > maxDirFiles {
		return nil, fmt.Errorf("golden dir %s: %d files, more than %d", where, len(names), maxDirFiles)
	}
	var parsed []*entry
	for _, n := range names {
		var data []byte
		name := n
		if disk != "" {
			name = filepath.Join(disk, n)
			if data, err = readRegular(name, MaxFileBytes); err != nil {
				return nil, fmt.Errorf("golden file: %w", err)
			}
		} else if data, err = fs.ReadFile(fsys, path.Join(dir, n)); err != nil {
			return nil, fmt.Errorf("golden file %s: %w", n, err)
		}
		e, err := parseEntry(name, data)
		if err != nil {
			return nil, err
		}
		parsed = append(parsed, e)
	}
	byModel := map[string][]*entry{}
	for _, e := range parsed {
		m := strings.ToLower(e.model)
		byModel[m] = append(byModel[m], e)
	}
	s := newSet()
	for _, group := range byModel {
		sort.Slice(group, func(i, j int) bool {
			a, b := group[i].stem, group[j].stem
			if len(a) != len(b) {
				return len(a) < len(b)
			}
			return a < b
		})
		for i, e := range group {
			if i > 0 {
				e.setKey(e.model + "@" + e.stem)
			}
			s.entries[strings.ToLower(e.key)] = e
		}
	}
	return s, nil
}

// Parse reads one golden file in the InferenceX schema:
//
//	# comments
//	qwen3.5-397b-a17b-nvfp4:      # exactly one model key
//	  thinking_on:                # thinking_on and/or thinking_off
//	    1: 1.93                   # draft length k -> AL, k = 1..K without gaps
//	    2: 2.73
//
// filename names the file in errors and gives the curve its prefix (the
// name before the first '_': "qwen3.5" for qwen3.5_mtp.yaml). Anchors,
// aliases, tags other than int and float, duplicate keys, k outside
// 1..MaxDraftLength and non-finite values are rejected. Values outside
// [1, k+1] are kept and reported by Curve.Check.
func Parse(filename string, data []byte) (*Set, error) {
	e, err := parseEntry(filename, data)
	if err != nil {
		return nil, err
	}
	s := newSet()
	s.entries[strings.ToLower(e.key)] = e
	return s, nil
}

func parseEntry(filename string, data []byte) (e *entry, err error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("golden file %s: larger than %d bytes", filename, MaxFileBytes)
	}
	defer func() {
		// The YAML library has panicked on malformed input in the past; a
		// golden file must never take the process down.
		if r := recover(); r != nil {
			e, err = nil, fmt.Errorf("golden file %s: malformed YAML (%v)", filename, r)
		}
	}()
	p := &fileParser{name: filename}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("golden file %s: empty", filename)
		}
		return nil, fmt.Errorf("golden file %s: %v", filename, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("golden file %s: more than one YAML document", filename)
	}
	if err := p.checkNodes(&doc); err != nil {
		return nil, err
	}
	return p.entry(&doc)
}

type fileParser struct {
	name  string
	nodes int
}

func (p *fileParser) errorf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("golden file %s: line %d: %s", p.name, n.Line, fmt.Sprintf(format, args...))
}

// checkNodes rejects anchors and aliases (so no alias can expand into a
// bomb) and caps the node count. Nesting is at most four levels in a valid
// file; deeper input is rejected before recursion can grow.
func (p *fileParser) checkNodes(root *yaml.Node) error {
	type item struct {
		n     *yaml.Node
		depth int
	}
	stack := []item{{root, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		p.nodes++
		if p.nodes > maxYAMLNodes {
			return fmt.Errorf("golden file %s: more than %d YAML nodes", p.name, maxYAMLNodes)
		}
		if it.n.Kind == yaml.AliasNode || it.n.Anchor != "" {
			return p.errorf(it.n, "anchors and aliases are not allowed")
		}
		if it.depth > 5 {
			return p.errorf(it.n, "nested too deeply for a golden file")
		}
		for _, c := range it.n.Content {
			stack = append(stack, item{c, it.depth + 1})
		}
	}
	return nil
}

func (p *fileParser) entry(doc *yaml.Node) (*entry, error) {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, fmt.Errorf("golden file %s: not a YAML document", p.name)
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, p.errorf(top, "want a mapping from one model key to its thinking modes")
	}
	if len(top.Content) != 2 {
		return nil, p.errorf(top, "want exactly one model key, found %d", len(top.Content)/2)
	}
	keyNode, modes := top.Content[0], top.Content[1]
	model, err := p.scalarString(keyNode)
	if err != nil {
		return nil, err
	}
	if model == "" || strings.ContainsAny(model, "@ \t") {
		return nil, p.errorf(keyNode, "model key %q must be non-empty without '@' or blanks", model)
	}
	if modes.Kind != yaml.MappingNode {
		return nil, p.errorf(modes, "model %s: want a mapping with thinking_on and/or thinking_off", model)
	}
	e := &entry{model: model, source: p.name, stem: stem(p.name), curves: map[Thinking]*Curve{}}
	e.aliases = []string{strings.ToLower(e.stem)}
	for i := 0; i+1 < len(modes.Content); i += 2 {
		kn, vn := modes.Content[i], modes.Content[i+1]
		ks, err := p.scalarString(kn)
		if err != nil {
			return nil, err
		}
		var t Thinking
		switch ks {
		case "thinking_on":
			t = ThinkingOn
		case "thinking_off":
			t = ThinkingOff
		default:
			return nil, p.errorf(kn, "model %s: unknown key %q (want thinking_on or thinking_off)", model, ks)
		}
		if _, dup := e.curves[t]; dup {
			return nil, p.errorf(kn, "model %s: %s given twice", model, ks)
		}
		al, err := p.curve(model, ks, vn)
		if err != nil {
			return nil, err
		}
		e.curves[t] = &Curve{Model: model, Thinking: t, Source: p.name, AL: al}
	}
	if len(e.curves) == 0 {
		return nil, p.errorf(modes, "model %s: no thinking_on or thinking_off curve", model)
	}
	e.key = model
	return e, nil
}

func (p *fileParser) curve(model, mode string, n *yaml.Node) ([]float64, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errorf(n, "model %s %s: want a mapping from draft length k to AL", model, mode)
	}
	byK := map[int]float64{}
	maxK := 0
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if kn.Kind != yaml.ScalarNode || kn.ShortTag() != "!!int" {
			return nil, p.errorf(kn, "model %s %s: draft length %s is not an integer", model, mode, nodeText(kn))
		}
		k, err := strconv.Atoi(kn.Value)
		if err != nil || k < 1 || k > MaxDraftLength {
			return nil, p.errorf(kn, "model %s %s: draft length %q outside 1..%d", model, mode, kn.Value, MaxDraftLength)
		}
		if _, dup := byK[k]; dup {
			return nil, p.errorf(kn, "model %s %s: k=%d given twice", model, mode, k)
		}
		if vn.Kind != yaml.ScalarNode || (vn.ShortTag() != "!!float" && vn.ShortTag() != "!!int") {
			return nil, p.errorf(vn, "model %s %s k=%d: AL %s is not a number", model, mode, k, nodeText(vn))
		}
		v, err := strconv.ParseFloat(vn.Value, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, p.errorf(vn, "model %s %s k=%d: AL %q is not a finite number", model, mode, k, vn.Value)
		}
		if v < 0 || v > maxAL {
			return nil, p.errorf(vn, "model %s %s k=%d: AL %q is absurd (outside 0..%d)", model, mode, k, vn.Value, maxAL)
		}
		byK[k] = v
		maxK = max(maxK, k)
	}
	if maxK == 0 {
		return nil, p.errorf(n, "model %s %s: no draft lengths", model, mode)
	}
	al := make([]float64, maxK)
	for k := 1; k <= maxK; k++ {
		v, ok := byK[k]
		if !ok {
			return nil, p.errorf(n, "model %s %s: k=%d missing (draft lengths must run 1..%d without gaps)", model, mode, k, maxK)
		}
		al[k-1] = v
	}
	return al, nil
}

// nodeText is a node for a message: a scalar quoted, else its kind (a
// list's or mapping's Value is empty).
func nodeText(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	case yaml.SequenceNode:
		return "(a list)"
	case yaml.MappingNode:
		return "(a mapping)"
	}
	return "(not a plain value)"
}

func (p *fileParser) scalarString(n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", p.errorf(n, "want a plain key")
	}
	return n.Value, nil
}

// stem is a file name without directory and extension.
func stem(name string) string {
	base := path.Base(strings.ReplaceAll(name, `\`, "/"))
	return strings.TrimSuffix(base, path.Ext(base))
}
