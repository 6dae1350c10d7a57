package enginelog

import (
	"reflect"
	"strings"
	"testing"
)

func TestScanEnv(t *testing.T) {
	log := strings.Join([]string{
		"+ export SGLANG_SIMULATE_ACC_LEN=4.8",
		"SGLANG_SIMULATE_ACC_METHOD=match-expected",
		"environ({'PATH': '/usr/bin', 'SGLANG_SIMULATE_ACC_TOKEN_MODE': 'real-draft-token', 'X': '1'})",
		`worker env: {"TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS": "3.8"}`,
		"MY_SGLANG_SIMULATE_ACC_LEN=9 is another variable",
		"SGLANG_SIMULATE_ACC_LEN: 4.80",
	}, "\n")
	got, err := ScanEnv(strings.NewReader(log), []string{"SGLANG_SIMULATE_ACC_LEN", "SGLANG_SIMULATE_ACC_METHOD", "SGLANG_SIMULATE_ACC_TOKEN_MODE", "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS", "ABSENT"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]EnvHit{
		"SGLANG_SIMULATE_ACC_LEN":                    {{1, "4.8"}, {6, "4.80"}},
		"SGLANG_SIMULATE_ACC_METHOD":                 {{2, "match-expected"}},
		"SGLANG_SIMULATE_ACC_TOKEN_MODE":             {{3, "real-draft-token"}},
		"TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS": {{4, "3.8"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func FuzzScanEnv(f *testing.F) {
	f.Add("SGLANG_SIMULATE_ACC_LEN=4.8\n'SGLANG_SIMULATE_ACC_LEN': '3'")
	f.Add(strings.Repeat("A", 70000) + "\nSGLANG_SIMULATE_ACC_LEN=\"x y\"")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ScanEnv(strings.NewReader(s), []string{"SGLANG_SIMULATE_ACC_LEN"})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range got["SGLANG_SIMULATE_ACC_LEN"] {
			if h.Line < 1 || strings.ContainsAny(h.Value, "\n") {
				t.Fatalf("bad hit %+v", h)
			}
		}
	})
}
