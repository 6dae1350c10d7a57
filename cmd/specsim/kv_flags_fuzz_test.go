package main

import (
	"strings"
	"testing"
)

// FuzzSetFlag: compare's and calibrate's --set key=value,... never panics,
// and what it accepts is one entry per comma-separated piece, each key
// non-empty and spelled with underscores.
func FuzzSetFlag(f *testing.F) {
	for _, s := range []string{"gpu=h200,topology=agg:tp8,precision=fp8,steps=3,al=2.4", "conc=64", "=x", "a", "a=,b=", "max-running=8", " gpu = h200 ,", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := setFlag{}
		if err := m.Set(s); err != nil {
			return
		}
		if len(m) == 0 || len(m) > strings.Count(s, ",")+1 {
			t.Fatalf("%q: %d entries", s, len(m))
		}
		for k := range m {
			if k == "" || strings.Contains(k, "-") || k != strings.TrimSpace(k) {
				t.Fatalf("%q: key %q", s, k)
			}
		}
	})
}

// FuzzEnvFlag: audit's --env NAME=VALUE splits at the first '=' only.
func FuzzEnvFlag(f *testing.F) {
	for _, s := range []string{"SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1", "A=b=c", "=1", "A", "A="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := envFlag{}
		if err := e.Set(s); err != nil {
			return
		}
		for k, v := range e {
			if k == "" || strings.Contains(k, "=") || k+"="+v != s {
				t.Fatalf("%q: %q=%q", s, k, v)
			}
		}
	})
}
