package golden

import (
	"strings"
	"testing"
)

// TestLookupAmbiguous: minimaxm3 has two curve files, minimaxm3_eagle3 and
// minimaxm3_eagle3_gqa (InferenceX golden_al_distribution); a prefix or
// hub name alone must not pick one.
func TestLookupAmbiguous(t *testing.T) {
	s, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"minimaxm3", "MiniMaxAI/MiniMax-M3"} {
		_, err := s.Lookup(name, "")
		if err == nil || !strings.Contains(err.Error(), "minimaxm3_eagle3_gqa") || !strings.Contains(err.Error(), "curve minimaxm3_eagle3)") {
			t.Errorf("%s: want an error listing both curves, got %v", name, err)
		}
	}
	for _, tc := range []struct{ name, draft, stem string }{
		{"minimaxm3", "someorg/MiniMax-M3-EAGLE3-GQA", "minimaxm3_eagle3_gqa"},
		{"minimaxm3", "someorg/MiniMax-M3-EAGLE3", "minimaxm3_eagle3"},
		{"minimaxm3_eagle3_gqa", "", "minimaxm3_eagle3_gqa"},
		{"qwen3.5", "", "qwen3.5_mtp"},
	} {
		key, err := s.Lookup(tc.name, tc.draft)
		if err != nil {
			t.Errorf("%s/%s: %v", tc.name, tc.draft, err)
			continue
		}
		if info, _ := s.Info(key); info.CurveName != tc.stem {
			t.Errorf("%s/%s: curve %s, want %s", tc.name, tc.draft, info.CurveName, tc.stem)
		}
	}
}
