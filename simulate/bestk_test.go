package simulate

import (
	"strings"
	"testing"
)

// explainK's reason for k=0 compares draft lengths only where some were
// evaluated.
func TestExplainKOnlyNone(t *testing.T) {
	none := KCandidate{K: 0, AL: 1, StepMS: 10}
	for _, tc := range []struct {
		cs        []KCandidate
		want, not string
	}{
		{[]KCandidate{none}, "only k=0 was evaluated", "every draft length"},
		{[]KCandidate{none, {K: 1, AL: 1.1, StepMS: 20}}, "every draft length costs more iteration time than its acceptance returns (k=1: AL 1.10 for a 2.00x iteration)", "only k=0"},
	} {
		got := explainK(tc.cs, 0)
		if !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
			t.Errorf("%d candidates: %q", len(tc.cs), got)
		}
	}
}
