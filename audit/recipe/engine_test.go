package recipe

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// An engine name no engine has, or one PyYAML would not load as a string,
// used to skip every check and pass (issue 14, item 8).
func TestUnknownEngineRejected(t *testing.T) {
	base, err := os.ReadFile("testdata/planted_sglang.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ engine, want string }{
		{"sglng", `line 8: engine "sglng" is not an engine specsim knows`},
		{"foo", `engine "foo" is not an engine`},
		{"!custom sglang", `engine "sglang" carries the YAML tag !custom`},
		{"!!int 3", `carries the YAML tag !!int`},
		{"[sglang]", "line 8: engine is a list"},
		{"{type: sglng}", `engine.type "sglng" is not an engine`},
	} {
		data := strings.Replace(string(base), "  engine: sglang\n", "  engine: "+tc.engine+"\n", 1)
		_, err := Parse("r.yaml", []byte(data), "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("engine: %s: %v, want %q", tc.engine, err, tc.want)
		}
	}
	for _, ok := range []string{"sglang", "SGLang", "dynamo-sglang", `"sglang"`, "{type: sglang}"} {
		data := strings.Replace(string(base), "  engine: sglang\n", "  engine: "+ok+"\n", 1)
		if _, err := Parse("r.yaml", []byte(data), ""); err != nil {
			t.Errorf("engine: %s: %v", ok, err)
		}
	}
}

// Codes lists every Code* constant the package's sources declare (read
// with go/parser), each once.
func TestCodes(t *testing.T) {
	declared := map[string]bool{}
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if strings.HasPrefix(n.Name, "Code") && i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
							v, _ := strconv.Unquote(lit.Value)
							declared[v] = true
						}
					}
				}
			}
		}
	}
	got := map[string]bool{}
	for _, c := range Codes() {
		if got[c] {
			t.Errorf("code %q twice", c)
		}
		got[c] = true
	}
	if len(declared) < 30 || len(got) != len(declared) {
		t.Errorf("Codes has %d, the sources declare %d", len(got), len(declared))
	}
	for c := range declared {
		if !got[c] {
			t.Errorf("Codes lacks %q", c)
		}
	}
}
