package recipe

import (
	"os"
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
