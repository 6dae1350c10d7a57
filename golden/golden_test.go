package golden

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func mustDefault(t testing.TB) *Set {
	t.Helper()
	s, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// The published AgentX value: Qwen3.5, thinking on, 6 draft steps -> 4.80,
// reachable by key, file prefix and both hub names.
func TestQwenLookupAllNameForms(t *testing.T) {
	s := mustDefault(t)
	for _, name := range []string{
		"qwen3.5-397b-a17b-nvfp4",
		"QWEN3.5-397B-A17B-NVFP4",
		"qwen3.5",
		"qwen3.5_mtp",
		"nvidia/Qwen3.5-397B-A17B-NVFP4",
		"Qwen/Qwen3.5-397B-A17B",
		"Qwen/Qwen3.5-397B-A17B-FP8",
	} {
		c, err := s.Curve(name, ThinkingOn)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if c.Model != "qwen3.5-397b-a17b-nvfp4" {
			t.Errorf("%s resolved to %s", name, c.Model)
		}
		al, err := c.At(6)
		if err != nil || al != 4.80 {
			t.Errorf("%s: AL(6) = %v, %v; want 4.80", name, al, err)
		}
	}
}

func TestResolve(t *testing.T) {
	s := mustDefault(t)
	tests := []struct{ name, want string }{
		{"dsv4", "deepseek-v4-pro"},
		{"deepseek-ai/DeepSeek-V4-Pro", "deepseek-v4-pro"},
		{"dsv4-pro-0813-dspark", "deepseek-v4-pro-0813"},
		{"glm5.2", "glm-5.2-fp8"},
		{"zai-org/GLM-5.2", "glm-5.2-fp8"},
		{"kimik2.5", "kimi-k2.5-nvfp4"},
		{"moonshotai/Kimi-K2.5", "kimi-k2.5-nvfp4"},
		// Two files measure minimax-m3 and two kimi-k3: the prefix and the hub
		// name pick the file that kept the plain key, as InferenceX does for a
		// draft without "gqa" / with the greedy DSpark draft.
		{"minimaxm3", "minimax-m3"},
		{"MiniMaxAI/MiniMax-M3", "minimax-m3"},
		{"minimaxm3_eagle3_gqa", "minimax-m3@minimaxm3_eagle3_gqa"},
		{"kimik3", "kimi-k3"},
		{"kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method",
			"kimi-k3@kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method"},
	}
	for _, tt := range tests {
		got, err := s.Resolve(tt.name)
		if err != nil || got != tt.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	gqa, err := s.Curve("minimaxm3_eagle3_gqa", ThinkingOn)
	if err != nil || gqa.AL[2] != 2.78 {
		t.Errorf("GQA curve AL(3) = %v, %v; want 2.78 from minimaxm3_eagle3_gqa.yaml", gqa, err)
	}
}

func TestUnknownListsWhatExists(t *testing.T) {
	s := mustDefault(t)
	_, err := s.Resolve("llama-9000")
	if err == nil {
		t.Fatal("unknown model resolved")
	}
	for _, want := range []string{"llama-9000", "qwen3.5-397b-a17b-nvfp4", "prefix qwen3.5", "deepseek-v4-pro"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	_, err = s.Curve("glm5.2", ThinkingOff)
	if err == nil || !strings.Contains(err.Error(), "thinking modes present: on") {
		t.Errorf("missing mode: %v", err)
	}
	c, _ := s.Curve("qwen3.5", ThinkingOn)
	for _, k := range []int{-1, 9} {
		if _, err := c.At(k); err == nil || !strings.Contains(err.Error(), "1..8") {
			t.Errorf("At(%d): %v", k, err)
		}
	}
	if v, err := c.At(0); err != nil || v != 1 {
		t.Errorf("At(0) = %v, %v; want 1", v, err)
	}
}

func TestCheck(t *testing.T) {
	s := mustDefault(t)
	tests := []struct {
		model string
		mode  Thinking
		want  []string // substrings, one warning each, in order
	}{
		{"qwen3.5", ThinkingOn, nil},
		{"qwen3.5", ThinkingOff, []string{"qwen3.5-397b-a17b-nvfp4 thinking off k=8: AL drops from 4.73 at k=7 to 4.71 at k=8"}},
		// 2.55, 2.54, 2.58 at k = 6, 7, 8: a drop at 7, then p_8 = 0.04 > p_7 = -0.01.
		{"dsv4", ThinkingOn, []string{"deepseek-v4-pro thinking on k=7: AL drops", "k=8: prefix acceptance rises from p_7 = -0.01 to p_8 = 0.04"}},
		{"kimik2.5", ThinkingOn, nil},
	}
	for _, tt := range tests {
		c, err := s.Curve(tt.model, tt.mode)
		if err != nil {
			t.Fatal(err)
		}
		got := c.Check()
		if len(got) != len(tt.want) {
			t.Errorf("%s %s: warnings %q, want %d", tt.model, tt.mode, got, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s %s: warning %q lacks %q", tt.model, tt.mode, got[i], w)
			}
		}
	}
	bad := &Curve{Model: "m", Thinking: ThinkingOn, AL: []float64{0.9, 3.5}}
	got := bad.Check()
	if len(got) < 2 || !strings.Contains(got[0], "k=1: AL 0.9 outside [1, 2]") || !strings.Contains(got[1], "k=2: AL 3.5 outside [1, 3]") {
		t.Errorf("range warnings: %q", got)
	}
}

// Moves worked out by hand from the prefix acceptance (see comments).
func TestConsistentProjection(t *testing.T) {
	s := mustDefault(t)
	qOff, _ := s.Curve("qwen3.5", ThinkingOff)
	dOn, _ := s.Curve("dsv4", ThinkingOn)
	qOn, _ := s.Curve("qwen3.5", ThinkingOn)
	tests := []struct {
		name      string
		c         *Curve
		wantAL    []float64
		wantMoved []float64
	}{
		// p = .92 .78 .63 .50 .37 .28 .25 -.02 is already non-increasing;
		// only p_8 leaves [0,1] and clips to 0: AL(8) 4.71 -> 4.73.
		{"qwen off", qOff, []float64{1.92, 2.70, 3.33, 3.83, 4.20, 4.48, 4.73, 4.73}, []float64{0, 0, 0, 0, 0, 0, 0, 0.02}},
		// p_6..p_8 = 0, -.01, .04 violate; pooling (-.01+.04)/2 = .015 > 0
		// pulls p_6 in: (0-.01+.04)/3 = .01 = p_5, so p' = .79 .48 .22 .05
		// .01 .01 .01 .01 and AL' = ... 2.55 2.56 2.57 2.58.
		{"dsv4 on", dOn, []float64{1.79, 2.27, 2.49, 2.54, 2.55, 2.56, 2.57, 2.58}, []float64{0, 0, 0, 0, 0, 0.01, 0.03, 0}},
		{"qwen on (consistent)", qOn, qOn.AL, make([]float64, 8)},
		// p = .5 .8 .3 .4: pools (.5,.8) -> .65 and (.3,.4) -> .35.
		{"two pools", &Curve{AL: []float64{1.5, 2.3, 2.6, 3.0}}, []float64{1.65, 2.3, 2.65, 3.0}, []float64{0.15, 0, 0.05, 0}},
		// p = 1.2, -.1 is non-increasing; clipping gives 1, 0.
		{"clip both ends", &Curve{AL: []float64{2.2, 2.1}}, []float64{2, 2}, []float64{-0.2, -0.1}},
	}
	for _, tt := range tests {
		cc, r := tt.c.Consistent()
		for k := range tt.wantAL {
			if !near(cc.AL[k], tt.wantAL[k], 1e-9) || !near(r.Moved[k], tt.wantMoved[k], 1e-9) {
				t.Errorf("%s k=%d: AL' %v moved %v; want %v, %v", tt.name, k+1, cc.AL[k], r.Moved[k], tt.wantAL[k], tt.wantMoved[k])
			}
		}
		wantChanged := slices.ContainsFunc(tt.wantMoved, func(m float64) bool { return m != 0 })
		if r.Changed != wantChanged || r.Projection != ProjectionMethod {
			t.Errorf("%s: changed %v (want %v), projection %q", tt.name, r.Changed, wantChanged, r.Projection)
		}
		if len(cc.Check()) != 0 {
			t.Errorf("%s: consistent curve still warns: %q", tt.name, cc.Check())
		}
	}
	if qOn.AL[5] != 4.80 {
		t.Error("Consistent modified its receiver")
	}
}

// The set C = {1 >= q_1 >= ... >= q_K >= 0} is the convex hull of the K+1
// vectors e_m = (1,..,1,0,..,0) with m ones, so q* is the projection of p
// onto C iff q* is in C and <p - q*, e_m - q*> <= 0 for every m. This
// checks the repair on random curves without reusing its algorithm.
func TestConsistentIsProjection(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 2000 {
		K := 1 + rng.IntN(10)
		al := make([]float64, K)
		v := 1.0
		for k := range al {
			v += rng.Float64()*1.6 - 0.3 // steps in [-0.3, 1.3): violations of every kind
			al[k] = v
		}
		c := &Curve{AL: al}
		cc, _ := c.Consistent()
		p, q := c.PrefixAcceptance(), cc.PrefixAcceptance()
		for j := range q {
			if q[j] < -1e-12 || q[j] > 1+1e-12 || (j > 0 && q[j] > q[j-1]+1e-12) {
				t.Fatalf("trial %d: q = %v not in C", trial, q)
			}
		}
		for m := 0; m <= K; m++ {
			dot := 0.0
			for j := range q {
				e := 0.0
				if j < m {
					e = 1
				}
				dot += (p[j] - q[j]) * (e - q[j])
			}
			if dot > 1e-9 {
				t.Fatalf("trial %d: AL %v: <p-q, e_%d-q> = %g > 0, so q = %v is not the projection", trial, al, m, dot, q)
			}
		}
	}
}

// Qwen3.5 thinking on at k=6: p = .93 .80 .66 .58 .44 .39, so P(L) =
// .07 .13 .14 .08 .14 .05 .39 for L = 1..7; E[L^2] = 27.54, so the variance
// is 27.54 - 4.8^2 = 4.50.
func TestDistributionQwenK6(t *testing.T) {
	c, _ := mustDefault(t).Curve("qwen3.5", ThinkingOn)
	d, err := c.Distribution(6)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{.07, .13, .14, .08, .14, .05, .39}
	if len(d) != len(want) {
		t.Fatalf("support 1..%d, want 1..7", len(d))
	}
	for i := range want {
		if !near(d[i], want[i], 1e-12) {
			t.Errorf("P(L=%d) = %v, want %v", i+1, d[i], want[i])
		}
	}
	mean, variance := Moments(d)
	if !near(mean, 4.80, 1e-12) || !near(variance, 4.50, 1e-12) {
		t.Errorf("mean %v variance %v, want 4.80 4.50", mean, variance)
	}
	cond := c.ConditionalAcceptance()
	if !near(cond[0], .93, 1e-12) || !near(cond[1], .80/.93, 1e-12) || !near(cond[7], .17/.24, 1e-12) {
		t.Errorf("conditional acceptance %v", cond)
	}
	if _, err := c.Distribution(9); err == nil {
		t.Error("Distribution(9) beyond the measured curve succeeded")
	}
}

// Every distribution of every embedded curve sums to 1 and has the
// consistent AL as its mean.
func TestDistributionsAllCurves(t *testing.T) {
	s := mustDefault(t)
	for _, m := range s.Models() {
		for _, mode := range []Thinking{ThinkingOn, ThinkingOff} {
			c, err := s.Curve(m, mode)
			if err != nil {
				continue
			}
			cc, _ := c.Consistent()
			for k := 1; k <= c.MaxK(); k++ {
				d, _ := c.Distribution(k)
				sum := 0.0
				for _, p := range d {
					if p < 0 {
						t.Errorf("%s %s k=%d: negative probability %v", m, mode, k, p)
					}
					sum += p
				}
				mean, _ := Moments(d)
				if !near(sum, 1, 1e-12) || !near(mean, cc.AL[k-1], 1e-12) {
					t.Errorf("%s %s k=%d: sum %v mean %v, want 1 and %v", m, mode, k, sum, mean, cc.AL[k-1])
				}
			}
		}
	}
}

func TestExtrapolate(t *testing.T) {
	c, _ := mustDefault(t).Curve("qwen3.5", ThinkingOn)
	e, err := c.Extrapolate(10)
	if err != nil {
		t.Fatal(err)
	}
	r := .17 / .24 // p_8 / p_7
	want9 := 5.21 + .17*r
	want10 := want9 + .17*r*r
	if e.MaxK() != 10 || e.Measured != 8 || !near(e.AL[8], want9, 1e-12) || !near(e.AL[9], want10, 1e-12) || e.AL[5] != 4.80 {
		t.Errorf("extrapolated %v (measured %d), want AL(9) %v AL(10) %v", e.AL, e.Measured, want9, want10)
	}
	if !strings.Contains(e.Extrapolation, "geometric") || c.MaxK() != 8 {
		t.Errorf("label %q, original MaxK %d", e.Extrapolation, c.MaxK())
	}
	if d, err := e.Distribution(10); err != nil || len(d) != 11 {
		t.Errorf("Distribution(10) of extrapolated curve: %v, %v", d, err)
	}
	// Qwen thinking off repairs p_8 to 0, so the tail stays flat at 4.73.
	off, _ := mustDefault(t).Curve("qwen3.5", ThinkingOff)
	e, _ = off.Extrapolate(9)
	if !near(e.AL[8], 4.73, 1e-12) || e.AL[7] != 4.71 {
		t.Errorf("thinking off extrapolated %v", e.AL)
	}
	if _, err := c.Extrapolate(MaxDraftLength + 1); err == nil {
		t.Error("extrapolation beyond MaxDraftLength succeeded")
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"empty", "", "empty"},
		{"comment only", "# nothing\n", "empty"},
		{"two models", "a:\n  thinking_on: {1: 1.5}\nb:\n  thinking_on: {1: 1.5}\n", "exactly one model key"},
		{"anchor", "a:\n  thinking_on: &x {1: 1.5}\n  thinking_off: *x\n", "anchors and aliases"},
		{"alias bomb", "a: &a [1,1,1,1]\nb: &b [*a,*a,*a,*a]\nc: [*b,*b,*b,*b]\n", "anchors and aliases"},
		{"k zero", "a:\n  thinking_on:\n    0: 1.0\n", "outside 1..64"},
		{"k absurd", "a:\n  thinking_on:\n    100000: 1.0\n", "outside 1..64"},
		{"k not int", "a:\n  thinking_on:\n    one: 1.9\n", "not an integer"},
		{"gap", "a:\n  thinking_on:\n    1: 1.9\n    3: 2.9\n", "k=2 missing"},
		{"duplicate k", "a:\n  thinking_on:\n    1: 1.9\n    1: 1.8\n", "twice"},
		{"duplicate mode", "a:\n  thinking_on: {1: 1.9}\n  thinking_on: {1: 1.8}\n", "twice"},
		{"nan", "a:\n  thinking_on:\n    1: .nan\n", "finite"},
		{"inf", "a:\n  thinking_on:\n    1: .inf\n", "finite"},
		{"string AL", "a:\n  thinking_on:\n    1: fast\n", `k=1: AL "fast" is not a number`},
		{"list AL", "a:\n  thinking_on:\n    1: [1.5, 2]\n", "k=1: AL (a list) is not a number"},
		{"mapping AL", "a:\n  thinking_on:\n    1: {al: 1.5}\n", "k=1: AL (a mapping) is not a number"},
		{"list k", "a:\n  thinking_on:\n    [1, 2]: 1.5\n", "draft length (a list) is not an integer"},
		{"absurd AL", "a:\n  thinking_on:\n    1: 1e308\n", "absurd"},
		{"negative AL", "a:\n  thinking_on:\n    1: -2\n", "absurd"},
		{"unknown mode", "a:\n  thinking_maybe: {1: 1.9}\n", "unknown key"},
		{"no modes", "a: {}\n", "no thinking_on"},
		{"list", "- 1\n- 2\n", "mapping"},
		{"two documents", "a:\n  thinking_on: {1: 1.9}\n---\nb: 1\n", "more than one YAML document"},
		{"bad yaml", "a: [\n", "golden file x.yaml"},
		{"too large", strings.Repeat("#", MaxFileBytes+1), "larger than"},
	}
	for _, tt := range tests {
		_, err := Parse("x.yaml", []byte(tt.data))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "x.yaml") {
			t.Errorf("%s: error %v, want one naming x.yaml and containing %q", tt.name, err, tt.want)
		}
	}
}

func TestMergeOverrideKeepsPrefix(t *testing.T) {
	s := mustDefault(t)
	o, err := Parse("custom.yaml", []byte("qwen3.5-397b-a17b-nvfp4:\n  thinking_on:\n    1: 1.5\n    2: 1.9\nnew-model-1b:\n"))
	if err == nil {
		t.Fatal("a file with two top-level keys parsed")
	}
	o, err = Parse("custom.yaml", []byte("# override\nQwen3.5-397B-A17B-NVFP4:\n  thinking_on:\n    1: 1.5\n    2: 1.9\n"))
	if err != nil {
		t.Fatal(err)
	}
	n := len(s.Models())
	s.Merge(o)
	if len(s.Models()) != n {
		t.Errorf("override changed the model count from %d to %d: %v", n, len(s.Models()), s.Models())
	}
	c, err := s.Curve("qwen3.5", ThinkingOn)
	if err != nil || c.MaxK() != 2 || c.AL[1] != 1.9 || c.Source != "custom.yaml" {
		t.Fatalf("after override: %+v, %v", c, err)
	}
	if _, err := s.Curve("qwen3.5", ThinkingOff); err == nil {
		t.Error("the override file has no thinking_off, but the old curve survived")
	}
	added, _ := Parse("new_mtp.yaml", []byte("new-model-1b:\n  thinking_off: {1: 1.7}\n"))
	s.Merge(added)
	if k, err := s.Resolve("new"); err != nil || k != "new-model-1b" {
		t.Errorf("added model: %q, %v", k, err)
	}
}

func TestLoadDirDuplicateKeys(t *testing.T) {
	s, err := LoadDir(filepath.Join("testdata", "dup"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"alpha-7b", "alpha-7b@alpha_mtp_variant"}
	if !slices.Equal(s.Models(), want) {
		t.Fatalf("models %v, want %v", s.Models(), want)
	}
	c, err := s.Curve("alpha", ThinkingOn)
	if err != nil || c.AL[0] != 1.8 || !strings.HasSuffix(c.Source, filepath.Join("dup", "alpha_mtp.yaml")) {
		t.Errorf("prefix alpha: %+v, %v", c, err)
	}
	v, err := s.Curve("alpha_mtp_variant", ThinkingOff)
	if err != nil || v.AL[0] != 1.6 || v.Model != "alpha-7b@alpha_mtp_variant" {
		t.Errorf("variant: %+v, %v", v, err)
	}
	if _, err := LoadDir(filepath.Join("testdata", "missing")); err == nil {
		t.Error("missing dir loaded")
	}
	if _, err := LoadFile(filepath.Join("testdata", "dup", "alpha_mtp.yaml")); err != nil {
		t.Error(err)
	}
}

func TestParseThinking(t *testing.T) {
	for in, want := range map[string]Thinking{"on": ThinkingOn, "OFF": ThinkingOff, "thinking_on": ThinkingOn, " off ": ThinkingOff} {
		if got, err := ParseThinking(in); err != nil || got != want {
			t.Errorf("ParseThinking(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseThinking("maybe"); err == nil {
		t.Error("ParseThinking(maybe) succeeded")
	}
}

func FuzzParse(f *testing.F) {
	ents, _ := embedded.ReadDir("data")
	for _, e := range ents {
		b, _ := embedded.ReadFile("data/" + e.Name())
		f.Add(b)
	}
	for _, s := range []string{
		"a:\n  thinking_on: {1: 1.5, 2: 1.2}\n",
		"a:\n  thinking_off: {1: 3, 2: -1, 3: 7}\n",
		"a: &a [1]\nb: *a\n",
		"a:\n  thinking_on: {64: 1.0}\n",
		"{a: {thinking_on: {1: 1e308, 2: -1e308}}}",
	} {
		f.Add([]byte(s))
	}
	if b, err := os.ReadFile(filepath.Join("testdata", "dup", "alpha_mtp_variant.yaml")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		for _, m := range s.Models() {
			for _, mode := range []Thinking{ThinkingOn, ThinkingOff} {
				c, err := s.Curve(m, mode)
				if err != nil {
					continue
				}
				if c.MaxK() < 1 || c.MaxK() > MaxDraftLength {
					t.Fatalf("MaxK %d", c.MaxK())
				}
				_ = c.Check()
				cc, _ := c.Consistent()
				for k := 1; k <= c.MaxK(); k++ {
					d, err := c.Distribution(k)
					if err != nil {
						t.Fatal(err)
					}
					sum := 0.0
					for _, p := range d {
						if p < 0 || math.IsNaN(p) {
							t.Fatalf("P = %v", p)
						}
						sum += p
					}
					// Huge AL values lose precision when differenced; the
					// distribution itself is built from clipped p.
					if math.Abs(sum-1) > 1e-9 {
						t.Fatalf("k=%d: distribution sums to %v", k, sum)
					}
				}
				_ = cc
				if _, err := c.Extrapolate(c.MaxK() + 2); err != nil && c.MaxK()+2 <= MaxDraftLength {
					t.Fatal(err)
				}
			}
		}
	})
}

func TestCurveIsACopy(t *testing.T) {
	s := mustDefault(t)
	c, _ := s.Curve("qwen3.5", ThinkingOn)
	c.AL[5] = 99
	again, _ := s.Curve("qwen3.5", ThinkingOn)
	if again.AL[5] != 4.80 {
		t.Errorf("changing a returned curve changed the set: AL(6) = %v", again.AL[5])
	}
}

func TestRepairTouches(t *testing.T) {
	r := Repair{Moved: []float64{0, 0, 0.05, 0}}
	for k, want := range map[int]bool{1: false, 2: false, 3: true, 4: true, 9: true} {
		if r.Touches(k) != want {
			t.Errorf("k=%d: Touches %v, want %v", k, !want, want)
		}
	}
	if (Repair{}).Touches(3) {
		t.Error("an empty repair touches k=3")
	}
}
