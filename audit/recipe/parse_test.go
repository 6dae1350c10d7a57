package recipe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func mustDecode(t *testing.T, src string) *Value {
	t.Helper()
	v, _, err := decodeYAML("t.yaml", []byte(src))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return v
}

// render writes a Value as compact flow YAML-ish text for comparisons.
func render(v *Value) string {
	if v == nil {
		return "<nil>"
	}
	switch v.Kind {
	case Null:
		return "null"
	case Scalar:
		return v.Str
	case List:
		parts := make([]string, len(v.Items))
		for i, it := range v.Items {
			parts[i] = render(it)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	parts := make([]string, len(v.Keys))
	for i, k := range v.Keys {
		parts[i] = k + ":" + render(v.Fields[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// TestDeepMerge pins srt-slurm's deep_merge rules (config.py, documented in
// docs/config-overrides.md): dicts merge recursively keeping base keys,
// lists are replaced, scalars replace, null deletes, a dict replaces a
// non-dict.
func TestDeepMerge(t *testing.T) {
	tests := []struct{ base, over, want string }{
		{"{a: 1, b: {c: 2, d: 3}}", "{b: {c: 9}}", "{a:1,b:{c:9,d:3}}"},
		{"{l: [1, 2, 3]}", "{l: [4]}", "{l:[4]}"},
		{"{a: 1, b: 2}", "{a: null}", "{b:2}"},
		{"{a: {x: 1}}", "{a: {x: null, y: 2}}", "{a:{y:2}}"},
		{"{a: 5}", "{a: {x: 1, y: null}}", "{a:{x:1,y:null}}"}, // a dict over a scalar is copied whole
		{"{a: {x: 1}}", "{a: 7}", "{a:7}"},
		{"{a: 1}", "{new: {k: v}}", "{a:1,new:{k:v}}"},
		{"{a: 1}", "{missing: null}", "{a:1}"},
	}
	for _, tt := range tests {
		got := render(deepMerge(mustDecode(t, tt.base), mustDecode(t, tt.over)))
		if got != tt.want {
			t.Errorf("merge %s <- %s = %s, want %s", tt.base, tt.over, got, tt.want)
		}
	}
	// base is not modified
	b := mustDecode(t, "{a: {x: 1}}")
	deepMerge(b, mustDecode(t, "{a: {x: 2}}"))
	if render(b) != "{a:{x:1}}" {
		t.Errorf("deepMerge modified base: %s", render(b))
	}
}

func TestZip(t *testing.T) {
	tests := []struct {
		section string
		n       int
		slices  []string
		err     string
	}{
		// length-1 lists and scalars broadcast; a list of lists gives a literal list
		{section: "{a: [1, 2, 3], b: [x], c: s, d: {e: [[1, 2], [3], [4]]}}", n: 3,
			slices: []string{"{a:1,b:x,c:s,d:{e:[1,2]}}", "{a:2,b:x,c:s,d:{e:[3]}}", "{a:3,b:x,c:s,d:{e:[4]}}"}},
		{section: "{a: [1]}", n: 1, slices: []string{"{a:1}"}},
		{section: "{a: [1, 2], b: [1, 2, 3]}", err: "incompatible zip lengths [2 3]"},
		{section: "{a: []}", err: "empty list"},
		{section: "{a: 1, b: {c: 2}}", err: "no lists"},
	}
	for _, tt := range tests {
		sec := mustDecode(t, tt.section)
		n, err := zipLength(sec)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("zip %s: err %v, want %q", tt.section, err, tt.err)
			}
			continue
		}
		if err != nil || n != tt.n {
			t.Errorf("zip %s: n=%d err=%v, want %d", tt.section, n, err, tt.n)
			continue
		}
		for i, want := range tt.slices {
			if got := render(zipSlice(sec, i)); got != want {
				t.Errorf("zip %s [%d] = %s, want %s", tt.section, i, got, want)
			}
		}
	}
}

const selectorFile = `
schema: 2
base: {name: b, engine: sglang, roles: {agg: {args: {x: 0}}}}
override_a: {roles: {agg: {args: {x: 1}}}}
override_b: {roles: {agg: {args: {x: 2}}}}
zip_override_z: {roles: {agg: {args: {x: [10, 11]}}}}
`

func TestSelectors(t *testing.T) {
	tests := []struct {
		sel   string
		names []string
		xs    []string
		err   string
	}{
		{"", []string{"override_a", "override_b", "zip_override_z[0]", "zip_override_z[1]"}, []string{"1", "2", "10", "11"}, ""},
		{"base", []string{"base"}, []string{"0"}, ""},
		{"override_b", []string{"override_b"}, []string{"2"}, ""},
		{"zip_override_z", []string{"zip_override_z[0]", "zip_override_z[1]"}, []string{"10", "11"}, ""},
		{"zip_override_z[1]", []string{"zip_override_z[1]"}, []string{"11"}, ""},
		{"override_*", []string{"override_a", "override_b"}, []string{"1", "2"}, ""},
		{"*_z", []string{"zip_override_z[0]", "zip_override_z[1]"}, []string{"10", "11"}, ""},
		{"zip_override_z[2]", nil, nil, "out of range"},
		{"override_c", nil, nil, "not found"},
		{"zip_override_q[0]", nil, nil, "no zip_override_q"},
		{"nomatch_*", nil, nil, "matches no variant"},
	}
	for _, tt := range tests {
		r, err := Parse("sel.yaml", []byte(selectorFile), tt.sel)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("selector %q: err %v, want %q", tt.sel, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("selector %q: %v", tt.sel, err)
			continue
		}
		var names, xs []string
		for _, v := range r.Variants {
			names = append(names, v.Name)
			xs = append(xs, v.Role(RoleAgg).Args.Get("x").String())
		}
		if !reflect.DeepEqual(names, tt.names) || !reflect.DeepEqual(xs, tt.xs) {
			t.Errorf("selector %q: %v %v, want %v %v", tt.sel, names, xs, tt.names, tt.xs)
		}
	}
}

func TestSplitSelector(t *testing.T) {
	for in, want := range map[string][2]string{
		"a.yaml":                   {"a.yaml", ""},
		"dir/a.yaml:override_x":    {"dir/a.yaml", "override_x"},
		"a.yaml:zip_override_y[3]": {"a.yaml", "zip_override_y[3]"},
		"a.yaml:override_*":        {"a.yaml", "override_*"},
		`C:\recipes\a.yaml`:        {`C:\recipes\a.yaml`, ""},
		"a.yaml:":                  {"a.yaml:", ""},
	} {
		f, s := SplitSelector(in)
		if f != want[0] || s != want[1] {
			t.Errorf("SplitSelector(%q) = %q, %q; want %q, %q", in, f, s, want[0], want[1])
		}
	}
}

// TestLoadColonInName: a file whose name holds a colon loads as that file;
// a selector still splits off when the whole argument names no file.
func TestLoadColonInName(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "recipes", "schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "agg:c1.yaml")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Skipf("no colon in file names here: %v", err)
	}
	all, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%q): %v", path, err)
	}
	one, err := Load(path + ":override_c1")
	if err != nil {
		t.Fatalf("Load with selector: %v", err)
	}
	if len(all.Variants) < 2 || len(one.Variants) != 1 {
		t.Errorf("%d variants without a selector, %d with override_c1", len(all.Variants), len(one.Variants))
	}
}

func TestEnvInheritance(t *testing.T) {
	// The recipe-wide environment is applied after the role env (srt-slurm
	// order), so it wins, and is reported as the source.
	src := `
schema: 2
base:
  engine: sglang
  environment: {A: global, B: global}
  roles:
    decode: {env: {A: role, C: role}, args: {}}
override_x:
  roles: {decode: {env: {C: override}}}
`
	r, err := Parse("env.yaml", []byte(src), "override_x")
	if err != nil {
		t.Fatal(err)
	}
	d := r.Variants[0].Role(RoleDecode)
	want := map[string]string{"A": "global", "B": "global", "C": "override"}
	if !reflect.DeepEqual(d.Env, want) {
		t.Errorf("env %v, want %v", d.Env, want)
	}
	if d.EnvFrom["A"] != "environment" || d.EnvFrom["C"] != "roles.decode.env" {
		t.Errorf("env sources %v", d.EnvFrom)
	}
}

func TestMergeKeyAndAliases(t *testing.T) {
	src := `
defaults: &d {steps: 3, topk: 1}
a:
  <<: *d
  steps: 5
b: *d
`
	v := mustDecode(t, src)
	if got := render(v.Get("a")); got != "{steps:5,topk:1}" {
		t.Errorf("merge key: %s", got)
	}
	if got := render(v.Get("b")); got != "{steps:3,topk:1}" {
		t.Errorf("alias: %s", got)
	}
	_, dups, _ := decodeYAML("t", []byte(src))
	if len(dups) != 0 {
		t.Errorf("a key overriding a merged key is not a duplicate: %v", dups)
	}
}

// TestHostileInput: malformed and hostile YAML fails with exit-2 errors
// that name the file (and line where there is one), quickly and with
// bounded memory.
func TestHostileInput(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 'b'; i <= 'j'; i++ {
		bomb += fmt.Sprintf("%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	deep := strings.Repeat("[", 200) + strings.Repeat("]", 200)
	// A chain of 40 aliases, each a list holding the one before: 80
	// levels once expanded, each written one level deep.
	chain := "a0: &a0 [x]\n"
	for i := 1; i <= 40; i++ {
		chain += fmt.Sprintf("a%d: &a%d [*a%d]\n", i, i, i-1)
	}
	deepBlock := ""
	for i := range 80 {
		deepBlock += strings.Repeat(" ", i) + "k:\n"
	}
	tests := []struct {
		name, src, want string
		line            int
	}{
		{"alias bomb", bomb, "alias bomb", 0},
		{"alias chain", chain, "alias expansion nests deeper than 64 levels", 0},
		{"deep flow nesting", "x: " + deep, "nesting deeper than 64", 1},
		{"deep block nesting", deepBlock, "nesting deeper than 64", 0},
		{"invalid YAML", "a: [1, 2\nb: c\n", "invalid YAML", 0},
		{"tab indentation", "a:\n\tb: 1\n", "invalid YAML", 2},
		{"two documents", "a: 1\n---\nb: 2\n", "more than one YAML document", 2},
		{"empty", "", "empty document", 0},
		{"scalar top level", "just a string\n", "not a mapping", 1},
		{"unknown schema", "schema: 3\nbase: {}\n", "unknown recipe schema", 1},
		{"schema not a number", "schema: two\nbase: {}\n", "unknown recipe schema", 1},
		{"unknown layout", "foo: 1\nbar: 2\n", "unknown recipe layout", 1},
		{"base not a map", "schema: 2\nbase: [1]\noverride_a: {}\n", "base must be a mapping", 0},
		{"bad zip", "schema: 2\nbase: {}\nzip_override_a: {x: [1, 2], y: [1, 2, 3]}\n", "incompatible zip lengths", 0},
		{"non-scalar key", "? [a, b]\n: 1\n", "mapping key is not a scalar", 1},
		{"self alias", "a: &a [*a]\n", "", 0},
		{"bad vllm json", "schema: 2\nbase: {engine: vllm, roles: {agg: {args: {speculative-config: '{nope'}}}}\n", "not a JSON object", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("hostile.yaml", []byte(tt.src), "")
			if err == nil {
				t.Fatalf("no error")
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v is not a ParseError", err, err)
			}
			if pe.File != "hostile.yaml" || !strings.Contains(err.Error(), "hostile.yaml") {
				t.Errorf("error does not name the file: %v", err)
			}
			if tt.want != "" && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
			if tt.line > 0 && pe.Line != tt.line {
				t.Errorf("line %d, want %d (%v)", pe.Line, tt.line, err)
			}
		})
	}
}

func TestHugeFile(t *testing.T) {
	// A sparse file past the cap: read no further than the cap.
	p := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileBytes + 1024); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = Load(p)
	if err == nil || !strings.Contains(err.Error(), "larger than") || !strings.Contains(err.Error(), p) {
		t.Errorf("huge file: %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestMasterConfigRejected(t *testing.T) {
	_, err := Load("../../testdata/recipes/master-config_excerpt_qwen3.5-fp4-gb300-dynamo-sglang-agentic.yaml")
	if err == nil {
		t.Fatal("master config accepted as a recipe")
	}
	for _, want := range []string{"master-config", "not an srt-slurm recipe", "agg-gb300-tp2-c1-mtp-hicache-jid2530006.yaml", "disagg-gb300-1p1d-tp2-tp2-c72"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, p := range []string{
		"testdata/planted_trtllm.yaml",
		"testdata/planted_deepseek_fp8.yaml",
		"testdata/planted_vllm.yaml",
		"testdata/zip_steps.yaml",
	} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, "")
		}
	}
	f.Add([]byte(selectorFile), "zip_override_z[1]")
	f.Add([]byte("a: &a [*a]\n"), "")
	f.Add([]byte("schema: 2\nbase: {x: &x {y: 1}}\noverride_a: {x: *x, z: null}\n"), "override_*")
	f.Fuzz(func(t *testing.T, data []byte, sel string) {
		r, err := Parse("fuzz.yaml", data, sel)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a ParseError: %v", err)
			}
			return
		}
		rep := Check(r, Options{Curves: publishedCurves})
		if len(rep.Variants) != len(r.Variants) {
			t.Fatalf("%d reports for %d variants", len(rep.Variants), len(r.Variants))
		}
	})
}

func TestCUDAGraphResolution(t *testing.T) {
	tests := []struct {
		args    string
		maxBS   int
		key     string
		off     bool
		running int
	}{
		{"{cuda-graph-max-bs: 80, max-running-requests: 72}", 80, "cuda-graph-max-bs", false, 72},
		{"{cuda-graph-bs: [1, 2, 4, 8]}", 8, "cuda-graph-bs", false, 0},
		{"{cuda-graph-bs-decode: [1], cuda-graph-max-bs: 64}", 1, "cuda-graph-bs-decode", false, 0},
		{"{cuda-graph-bs: [1, 64, 128], cuda-graph-max-bs-decode: 32}", 32, "cuda-graph-max-bs-decode", false, 0},
		{"{cuda-graph-max-bs: 16, cuda-graph-backend-decode: disabled}", 16, "cuda-graph-max-bs", true, 0},
		{"{disable-cuda-graph: true}", 0, "", true, 0},
		// EAGLE without a cap: SGLang sets 48
		{"{speculative-algorithm: EAGLE, speculative-num-steps: 3}", 0, "", false, 48},
		// NGRAM keeps no such default
		{"{speculative-algorithm: NGRAM}", 0, "", false, 0},
	}
	for _, tt := range tests {
		r := &Role{Name: RoleDecode, Engine: EngineSGLang, Args: mustDecode(t, tt.args)}
		if err := resolveEngineArgs(r); err != nil {
			t.Fatal(err)
		}
		if r.CUDAGraphMaxBS != tt.maxBS || r.CUDAGraphKey != tt.key || r.CUDAGraphDisable != tt.off || r.MaxRunning != tt.running {
			t.Errorf("%s: graphs %d (%s) off=%v running %d; want %d (%s) off=%v running %d",
				tt.args, r.CUDAGraphMaxBS, r.CUDAGraphKey, r.CUDAGraphDisable, r.MaxRunning, tt.maxBS, tt.key, tt.off, tt.running)
		}
	}
}

// TestEmptyBase: an override file whose base is {} deploys nothing in any
// variant that adds no roles: an error naming the file, not "no findings".
func TestEmptyBase(t *testing.T) {
	for _, tc := range []struct {
		src, sel string
		want     int // recipe-no-roles errors
	}{
		{"schema: 2\nbase: {}\n", "base", 1},
		{"base: {}\noverride_a:\n  name: x\n", "", 1},
		{"base: {}\noverride_a: {name: x, engine: sglang, roles: {agg: {args: {x: 1}}}}\n", "", 0},
	} {
		r, err := Parse("empty.yaml", []byte(tc.src), tc.sel)
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		n := 0
		for _, v := range Check(r, Options{}).Variants {
			for _, f := range v.Findings {
				if f.Code == CodeNoRoles {
					n++
					if f.Severity != SeverityError || !strings.HasPrefix(f.Message, "empty.yaml: variant ") {
						t.Errorf("%q: %+v", tc.src, f)
					}
				}
			}
		}
		if n != tc.want {
			t.Errorf("%q: %d recipe-no-roles errors, want %d", tc.src, n, tc.want)
		}
	}
}

// FuzzSplitSelector: the file and selector put back together are the
// argument, and a selector never holds a path separator.
func FuzzSplitSelector(f *testing.F) {
	for _, s := range []string{"r.yaml:override_tp4_tp4_c8", "r.yaml", "C:\\recipes\\r.yaml", "a:b/c.yaml", ":x", "r.yaml:", "r.yaml:zip_override_x[0]", "r.yaml:override_*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		file, sel := SplitSelector(arg)
		switch {
		case sel == "" && file != arg:
			t.Fatalf("%q: file %q without a selector", arg, file)
		case sel != "" && (file+":"+sel != arg || file == "" || strings.ContainsAny(sel, `/\`)):
			t.Fatalf("%q: file %q, selector %q", arg, file, sel)
		}
	})
}
