package simulate

import (
	"strings"
	"testing"

	"github.com/specsim/specsim/golden"
)

// TestEveryCurveHasPresetOrHint: each embedded golden curve either has a
// preset or predict's error names the --al to pass (DeepSeek-V4-Pro
// thinking-on AL(3) = 2.49 in InferenceX dsv4_mtp.yaml; GLM-5.2 AL(3) =
// 2.99 in glm5.2_mtp.yaml).
func TestEveryCurveHasPresetOrHint(t *testing.T) {
	set, err := golden.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ model, want string }{
		{"deepseek-ai/DeepSeek-V4-Pro", "k=3: --al 2.49"},
		{"glm5.2", "k=3: --al 2.99"},
		{"kimik3", "--al"},
		{"minimaxm3", "--al"},
	} {
		_, err := Query{Model: tc.model}.Resolve(set, testCatalog)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--model DIR") {
			t.Errorf("%s: %v", tc.model, err)
		}
	}
	if _, err := (Query{Model: "no-such-model"}).Resolve(set, testCatalog); err == nil || strings.Contains(err.Error(), "golden curve") {
		t.Errorf("a name without a curve gets no hint: %v", err)
	}
}
