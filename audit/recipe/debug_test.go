package recipe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestDebugDump(t *testing.T) {
	if os.Getenv("DUMP") == "" {
		t.Skip()
	}
	files, _ := filepath.Glob("../../testdata/recipes/*.yaml")
	for _, f := range files {
		r, err := Load(f)
		if err != nil {
			t.Log(err)
			continue
		}
		rep := Check(r, Options{Curves: publishedCurves})
		b, _ := json.MarshalIndent(rep, "", " ")
		t.Log(string(b))
	}
}
