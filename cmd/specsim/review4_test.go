package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestStepsRangeRefusedWhereOneK: predict, predict --recipe and recipe
// emit run one draft length; a range exits 2 naming --steps and pointing
// at sweep and bestk instead of quietly running its lower end.
func TestStepsRangeRefusedWhereOneK(t *testing.T) {
	agg := filepath.Join("..", "..", "testdata", "recipes", "schema1_sglang_qwen3.5_gb300-fp4_agentic_agg-tp2-c1-mtp-hicache.yaml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "--steps", "3-4"}, `specsim predict: --steps "3-4": predict takes one draft length k`},
		{[]string{"predict", "--steps", "0-8"}, `specsim predict: --steps "0-8": predict takes one draft length k`},
		{[]string{"predict", "--steps", "3-3"}, `specsim predict: --steps "3-3": predict takes one draft length k`},
		{[]string{"predict", "--recipe", agg, "--steps", "2-5"}, `--steps "2-5": predict takes one draft length k`},
		{[]string{"recipe", "emit", "--steps", "3-5"}, `specsim recipe emit: --steps "3-5": recipe emit takes one draft length k`},
	} {
		code, out, stderr := runCLI(c.args...)
		if code != exitBadInput || out != "" || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "sweep") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q, want exit 2 and %q", c.args, code, out, stderr, c.want)
		}
	}
	for _, cmd := range [][]string{{"predict"}, {"recipe", "emit"}} {
		code, out, stderr := runCLI(append(cmd, "--help")...)
		if code != exitOK || !strings.Contains(out+stderr, "one value; 0 = no speculation (default 6") || strings.Contains(out+stderr, "sweep and bestk take a range such as 0-8\n") {
			t.Errorf("%v --help: exit %d, --steps line lacks its default 6 or implies ranges:\n%s", cmd, code, out+stderr)
		}
	}
}

// TestEmittedRecipeCarriesHostTier: recipe emit writes the HiCache host
// KV tier the simulation ran (the AgentX replay's default, --hicache-size,
// --hicache-ratio) into the role that prefills, so that predict --recipe
// on the file gives predict's throughput with the same flags; with the
// tier or the prefix cache off, or on vLLM (no default tier), it writes
// none. recipe check passes on every file.
func TestEmittedRecipeCarriesHostTier(t *testing.T) {
	for _, c := range []struct {
		flags    []string
		caps     []string // flags added to predict's; nil: no round trip
		wantArgs []string // HiCache lines of the role that prefills; nil: none
	}{
		{[]string{"--topology", "disagg:1xtp1pp4+1xtp4ep4", "--steps", "6", "--conc", "512"}, []string{},
			[]string{"      enable-hierarchical-cache: true\n      # hicache-size: InferenceX's AgentX launcher passes 90% of host DRAM per GPU\n"}},
		{[]string{"--topology", "agg:tp4", "--steps", "3", "--conc", "256", "--hicache-size", "40"}, []string{},
			[]string{"      enable-hierarchical-cache: true\n      hicache-size: 40\n"}},
		// InferenceX's AgentX launcher passes hicache-size, which wins
		// over the ratio: the header says so, predict --recipe runs that.
		{[]string{"--topology", "agg:tp4", "--steps", "3", "--conc", "256", "--hicache-ratio", "3"}, nil,
			[]string{"      enable-hierarchical-cache: true\n      hicache-ratio: 3\n", "# passes hicache-size (90% of host DRAM per GPU), which wins"}},
		{[]string{"--engine", "trtllm", "--topology", "agg:tp4", "--steps", "3", "--conc", "256", "--hicache-size", "40"}, []string{},
			[]string{"        dtype: fp8\n        host_cache_size: 40000000000  # bytes per rank: the simulated host KV tier\n"}},
		// TensorRT-LLM's default tier is the AgentX one, 90% of a GB300
		// tray's 240 GB per GPU: 216 GB per rank, in bytes.
		{[]string{"--engine", "trtllm", "--topology", "agg:tp8", "--steps", "3", "--conc", "512"}, []string{},
			[]string{"        dtype: fp8\n        host_cache_size: 216000000000  # bytes per rank: the simulated host KV tier\n"}},
		// vLLM's recipes carry none, and the simulation gives it none.
		{[]string{"--engine", "vllm", "--topology", "agg:tp8", "--steps", "3", "--conc", "512"}, []string{}, nil},
		{[]string{"--topology", "disagg:1xtp1pp4+1xtp4ep4", "--steps", "6", "--conc", "512", "--hicache-ratio", "0"}, []string{}, nil},
		{[]string{"--topology", "agg:tp4", "--steps", "3", "--conc", "64", "--isl", "1024", "--osl", "256"}, []string{}, nil},
		// Without a prefix cache the role that prefills says so, on every
		// engine, and the file reads back as simulated.
		{[]string{"--topology", "agg:tp4", "--steps", "3", "--conc", "64", "--no-prefix-cache"}, []string{}, nil},
		{[]string{"--engine", "vllm", "--topology", "agg:tp4", "--steps", "3", "--conc", "64", "--no-prefix-cache"}, []string{}, nil},
		{[]string{"--engine", "trtllm", "--topology", "agg:tp4", "--steps", "3", "--conc", "64", "--no-prefix-cache"}, []string{}, nil},
	} {
		code, text, stderr := runCLI(append([]string{"recipe", "emit"}, c.flags...)...)
		if code != exitOK {
			t.Fatalf("emit %v: exit %d: %s", c.flags, code, stderr)
		}
		if c.wantArgs == nil && strings.Contains(text, "hicache") || c.wantArgs == nil && strings.Contains(text, "hierarchical") {
			t.Errorf("emit %v: the tier is off yet the recipe sets HiCache:\n%s", c.flags, text)
		}
		for _, w := range c.wantArgs {
			if strings.Count(text, w) != 1 {
				t.Errorf("emit %v: want %q once, in the role that prefills:\n%s", c.flags, w, text)
			}
		}
		file := filepath.Join(t.TempDir(), "r.yaml")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out, stderr := runCLI("recipe", "check", file); code != exitOK || !strings.Contains(out, "0 error finding(s)") {
			t.Errorf("emit %v | recipe check: exit %d\n%s%s", c.flags, code, out, stderr)
		}
		if c.caps == nil {
			continue
		}
		var direct struct {
			Tput float64 `json:"tput_per_gpu"`
		}
		var viaRecipe struct {
			Variants []struct {
				Result struct {
					Tput float64 `json:"tput_per_gpu"`
				} `json:"result"`
			} `json:"variants"`
		}
		code, out, stderr := runCLI(append(append([]string{"predict", "--json"}, c.flags...), c.caps...)...)
		if code != exitOK || json.Unmarshal([]byte(out), &direct) != nil {
			t.Fatalf("predict %v: exit %d: %s", c.flags, code, stderr)
		}
		code, out, stderr = runCLI("predict", "--json", "--recipe", file)
		if code != exitOK || json.Unmarshal([]byte(out), &viaRecipe) != nil || len(viaRecipe.Variants) != 1 {
			t.Fatalf("predict --recipe (emit %v): exit %d: %s", c.flags, code, stderr)
		}
		if got := viaRecipe.Variants[0].Result.Tput; got != direct.Tput || got <= 0 {
			t.Errorf("emit %v: predict --recipe gives %g tok/s/GPU, predict with the same flags %g", c.flags, got, direct.Tput)
		}
	}
}

// TestRecipeDeploymentCountsChecked: a role's workers, nodes or GPUs that
// are not a positive whole number, and GPUs that contradict the role's
// layout, are refused by predict --recipe and reported by recipe check,
// with the line and key, instead of being read as one worker.
func TestRecipeDeploymentCountsChecked(t *testing.T) {
	emitted, schema1 := aggRecipes(t)
	lineOf := func(text, prefix string) int {
		for i, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, prefix) {
				return i + 1
			}
		}
		t.Fatalf("no line %q", prefix)
		return 0
	}
	for _, c := range []struct {
		src, from, to, want string
	}{
		{emitted, "    workers: 1\n", "    workers: 0\n", `roles.agg.workers is "0"; want a whole number in 1..1048576`},
		{emitted, "    workers: 1\n", "    workers: 99999999999999999999\n", `roles.agg.workers is "99999999999999999999"; want a whole number in 1..1048576`},
		{emitted, "    workers: 1\n", "    workers: two\n", `roles.agg.workers is "two"`},
		{emitted, "    gpus: 4\n", "    gpus: 0\n", `roles.agg.gpus is "0"; want a whole number in 1..1048576`},
		{emitted, "    gpus: 4\n", "    gpus: 8\n", `roles.agg.gpus is "8"; want 4, the GPUs of one worker (roles.agg.args: tensor parallel 4`},
		{emitted, "    gpus: 4\n", "    gpus: 3\n", `roles.agg.gpus is "3"; want 4`},
		{emitted, "    nodes: 1\n", "    nodes: -1\n", `roles.agg.nodes is "-1"`},
		{emitted, "  gpus_per_node: 4", "  gpus_per_node: 0", `resources.gpus_per_node is "0"`},
		{schema1, "  agg_workers: 1\n", "  agg_workers: 0\n", `resources.agg_workers is "0"`},
		{schema1, "  gpus_per_agg: 2\n", "  gpus_per_agg: 8\n", `resources.gpus_per_agg is "8"; want 2, the GPUs of one worker`},
	} {
		if !strings.Contains(c.src, c.from) {
			t.Fatalf("source lacks %q", c.from)
		}
		text := strings.Replace(c.src, c.from, c.to, 1)
		want := fmt.Sprintf("line %d: %s", lineOf(text, strings.TrimSuffix(c.to, "\n")), c.want)
		file := filepath.Join(t.TempDir(), "r.yaml")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"predict", "--recipe", file}, {"recipe", "check", file}} {
			code, out, stderr := runCLI(args...)
			if code != exitBadInput || !strings.Contains(out+stderr, want) {
				t.Errorf("%s -> %s: %v: exit %d, want 2 and %q:\n%s%s", strings.TrimSpace(c.from), strings.TrimSpace(c.to), args[:2], code, want, out, stderr)
			}
		}
	}
}

// TestMergeRefusesMissingFigures: a shard point with a required figure
// deleted (which decodes as 0), zero or negative is refused, naming the
// file, the point and the figure.
func TestMergeRefusesMissingFigures(t *testing.T) {
	out := oneAggShard(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(out), 0o644)
	if code, _, stderr := runCLI("merge", good); code != exitOK {
		t.Fatalf("merge of the untouched shard: exit %d %s", code, stderr)
	}
	for _, c := range []struct {
		key   string
		value any // nil: deleted
		want  string
	}{
		{"tput_per_gpu", nil, "tput_per_gpu 0: want a finite figure > 0"},
		{"output_tput_per_gpu", nil, "output_tput_per_gpu 0: want a finite figure > 0"},
		{"interactivity", 0, "interactivity 0: want a finite figure > 0"},
		{"ttft_ms_p90", nil, "ttft_ms_p90 0: want a finite figure > 0"},
		{"tpot_ms", -2, "tpot_ms -2: want a finite figure > 0"},
		{"al", nil, "al 0: want a finite figure > 0"},
		{"al", 66, "al 66: no sweep writes it"},
		{"tput_per_gpu", 1e30, "tput_per_gpu 1e+30: no sweep writes it"},
		{"normalized_interactivity_p90", nil, "normalized_interactivity_p90 0: want a finite figure > 0"},
		{"gpus", nil, "conc 4, steps 3, index 0, gpus 0: want conc >= 1, steps >= 0, index >= 0, gpus >= 1"},
	} {
		// Edit the first point's line in place: merge wants the file's
		// section order.
		at := strings.Index(out, `"points": [`)
		line := regexp.MustCompile(`\n\s*"` + c.key + `": [-0-9.e+]+,`).FindStringIndex(out[at:])
		if at < 0 || line == nil {
			t.Fatalf("no %s in the first point", c.key)
		}
		edited := out[at+line[0] : at+line[1]]
		if c.value == nil {
			edited = ""
		} else {
			edited = edited[:strings.Index(edited, ": ")+2] + fmt.Sprint(c.value) + ","
		}
		b := out[:at+line[0]] + edited + out[at+line[1]:]
		f := filepath.Join(dir, c.key+".json")
		os.WriteFile(f, []byte(b), 0o644)
		want := fmt.Sprintf("specsim merge: %s: point 0 (agg:tp8 conc 4 k 3): %s", f, c.want)
		if code, out, stderr := runCLI("merge", f); code != exitBadInput || out != "" || !strings.HasPrefix(stderr, want) {
			t.Errorf("%s %v: exit %d, stderr %q, want exit 2 and %q", c.key, c.value, code, stderr, want)
		}
	}
}

// TestRecipeUnknownGPUNamesTheKey: an unknown resources.gpu_type is
// reported with the recipe, the line and the key, not as a --gpu the user
// never gave; a --gpu given wins over it, and a bad --gpu is the flag's.
func TestRecipeUnknownGPUNamesTheKey(t *testing.T) {
	emitted, schema1 := aggRecipes(t)
	const known = `unknown GPU "a100": known GPUs are b200, b300, gb200, gb300, h100, h200`
	for _, c := range []struct {
		src, from string
		flags     []string
		code      int
		want      string // with FILE for the file's name
	}{
		{emitted, "  gpu_type: gb300\n", nil, exitBadInput, "specsim predict --recipe: FILE:specsim-sglang-gb300-agg-tp4-c7-k6: line 19: resources.gpu_type: " + known + " (or pass --gpu)\n"},
		{schema1, "  gpu_type: gb300\n", nil, exitBadInput, "specsim predict --recipe: FILE:agg-gb300-tp2-c1-mtp-hicache-jid2530006: line 12: resources.gpu_type: " + known + " (or pass --gpu)\n"},
		{emitted, "  gpu_type: gb300\n", []string{"--gpu", "a100"}, exitBadInput, "specsim predict --recipe: --gpu a100: " + known + "\n"},
		{emitted, "  gpu_type: gb300\n", []string{"--gpu", "gb300"}, exitOK, ""},
	} {
		if !strings.Contains(c.src, c.from) {
			t.Fatalf("source lacks %q", c.from)
		}
		file := filepath.Join(t.TempDir(), "r.yaml")
		if err := os.WriteFile(file, []byte(strings.Replace(c.src, c.from, "  gpu_type: a100\n", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		want := strings.ReplaceAll(c.want, "FILE", file)
		code, _, stderr := runCLI(append([]string{"predict", "--recipe", file}, c.flags...)...)
		if code != c.code || stderr != want {
			t.Errorf("%v: exit %d, stderr %q, want %d and %q", c.flags, code, stderr, c.code, want)
		}
	}
}

// TestZeroLengthsAndShortWindowNamed: --isl/--osl given as 0 are refused
// as negatives are (0 is not "unset" once typed), by every command that
// takes them; an AgentX window too short to profile a request names the
// --agentx duration and the shortest that profiles one, found by a
// doubling search that the test repeats by hand.
func TestZeroLengthsAndShortWindowNamed(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "--isl", "0", "--osl", "0"}, "specsim predict: --isl 0: want a positive length in tokens (--isl and --osl go together)\n"},
		{[]string{"predict", "--isl", "1024", "--osl", "0"}, "specsim predict: --osl 0: want a positive length in tokens (--isl and --osl go together)\n"},
		{[]string{"predict", "--osl", "0"}, "specsim predict: --osl 0: want a positive length in tokens (--isl and --osl go together)\n"},
		{[]string{"predict", "--isl", "-1", "--osl", "10"}, "specsim predict: --isl -1: want a positive length in tokens (--isl and --osl go together)\n"},
		{[]string{"sweep", "--gpus", "2", "--isl", "0", "--osl", "0"}, "specsim sweep: --isl 0: want a positive length in tokens (--isl and --osl go together)\n"},
		{[]string{"bestk", "--isl", "0", "--osl", "8"}, "specsim bestk: --isl 0: want a positive length in tokens (--isl and --osl go together)\n"},
		{[]string{"recipe", "emit", "--isl", "0", "--osl", "0"}, "specsim recipe emit: --isl 0: want a positive length in tokens (--isl and --osl go together)\n"},
	} {
		if code, out, stderr := runCLI(c.args...); code != exitBadInput || out != "" || stderr != c.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q, want exit 2 and %q", c.args, code, out, stderr, c.want)
		}
	}
	// The shortest whole-second window that profiles a request, by hand:
	// the first d in 1, 2, 3, ... for which predict succeeds.
	profiles := func(d int) bool {
		code, _, _ := runCLI("predict", "--json", "--agentx", fmt.Sprintf("duration=%d", d))
		return code == exitOK
	}
	shortest := 1
	for !profiles(shortest) {
		shortest++
	}
	if shortest < 2 {
		t.Fatalf("duration=1 profiles a request: no short window to test")
	}
	want := fmt.Sprintf("specsim predict: --agentx duration=1: the replay profiled no request in its window; this deployment needs duration=%d or more\n", shortest)
	if code, out, stderr := runCLI("predict", "--agentx", "duration=1"); code != exitBadInput || out != "" || stderr != want {
		t.Errorf("--agentx duration=1: exit %d, stdout %q, stderr %q, want exit 2 and %q", code, out, stderr, want)
	}
}

// TestSweepJSONEmptyListsAndCalibrationWords: sweep and merge JSON write
// every list key as a list, [] when empty (top, sla_removed, as
// frontier_none always was), never null; a calibration file of the wrong
// shape is reported in the file's terms, not Go's types.
func TestSweepJSONEmptyListsAndCalibrationWords(t *testing.T) {
	common := []string{"--gpu", "b200", "--isl", "1024", "--osl", "1024", "--topologies", "agg:tp8,agg:tp4", "--conc", "4", "--steps", "3", "--json"}
	dir := t.TempDir()
	var shards []string
	for i := range 2 {
		code, out, stderr := runCLI(append([]string{"sweep", "--shard", fmt.Sprintf("%d/2", i)}, common...)...)
		if code != exitOK {
			t.Fatal(stderr)
		}
		shards = append(shards, filepath.Join(dir, fmt.Sprintf("s%d.json", i)))
		os.WriteFile(shards[i], []byte(out), 0o644)
	}
	code, whole, stderr := runCLI(append([]string{"sweep"}, common...)...)
	if code != exitOK {
		t.Fatal(stderr)
	}
	code, merged, stderr := runCLI(append([]string{"merge", "--json"}, shards...)...)
	if code != exitOK {
		t.Fatal(stderr)
	}
	for name, out := range map[string]string{"sweep": whole, "merge": merged} {
		var so map[string]any
		if err := json.Unmarshal([]byte(out), &so); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"top", "sla_removed", "frontier_none", "skipped"} {
			if l, ok := so[k].([]any); !ok || len(l) != 0 {
				t.Errorf("%s: %s is %v, want []", name, k, so[k])
			}
		}
	}
	for _, c := range []struct{ yaml, want string }{
		{"version: 1\nsim: event\nentries:\n  gpu: b200\n", "line 4: want entries: a list of entries (- gpu: b200, engine: sglang, params: {...}), found a map"},
		{"version: 1\nentries: [{gpu: b200, params: 3}]\n", "line 2: want params: a map of layer_fixed_us, host_overhead_ms, mem_efficiency_scale, compute_efficiency_scale, found the number `3`"},
		{"version: 1\nentries: [{gpu: b200, points: many}]\n", "line 2: want a whole number, found the text `many`"},
		{"version: 1\nentries:\n  - gpu: b200\n    color: red\n", "line 4: unknown key color in an entry (gpu, engine"},
	} {
		f := filepath.Join(dir, "cal.yaml")
		os.WriteFile(f, []byte(c.yaml), 0o644)
		want := "specsim predict: --calibration " + f + ": not a calibration as specsim calibrate -o writes it: " + c.want
		if code, _, stderr := runCLI("predict", "--calibration", f); code != exitBadInput || !strings.HasPrefix(stderr, want) || strings.Contains(stderr, "simulate.") {
			t.Errorf("%q: exit %d, stderr %q, want exit 2 and %q", c.yaml, code, stderr, want)
		}
	}
}

// TestMarkdownLinesAreParagraphs: in --format markdown no two plain lines
// (neither table rows nor list items) follow each other, which GitHub
// would join into one paragraph: predict's header lines are paragraphs
// and its cost sources a list, sweep's header lines paragraphs.
func TestMarkdownLinesAreParagraphs(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string // lines the output must hold
	}{
		{[]string{"predict", "--isl", "1024", "--osl", "256"}, []string{"- source: communication: "}},
		{[]string{"predict", "--agentx", "duration=60"}, []string{"- source: communication: "}},
		{[]string{"sweep", "--gpu", "b200", "--isl", "1024", "--osl", "1024", "--topologies", "agg:tp8,agg:tp4ep4", "--conc", "4,8", "--steps", "3", "--max-refine", "1"}, nil},
		{[]string{"sweep", "--gpu", "gb300", "--gpus", "8", "--topologies", "agg:tp8", "--conc", "4", "--agentx", "duration=60"}, nil},
	} {
		code, out, stderr := runCLI(append(c.args, "--format", "markdown")...)
		if code != exitOK {
			t.Fatalf("%v: exit %d %s", c.args, code, stderr)
		}
		lines := strings.Split(out, "\n")
		plain := func(l string) bool { return l != "" && !strings.HasPrefix(l, "|") && !strings.HasPrefix(l, "- ") }
		for i := 1; i < len(lines); i++ {
			if plain(lines[i-1]) && plain(lines[i]) {
				t.Errorf("%v: lines %d and %d are one Markdown paragraph:\n%s\n%s", c.args, i, i+1, lines[i-1], lines[i])
			}
		}
		for _, w := range c.want {
			if !strings.Contains(out, "\n"+w) {
				t.Errorf("%v: no line starting %q", c.args, w)
			}
		}
	}
}

// TestHelpSaysWhatSweepCSVAndBestKDo: sweep's and merge's --format help
// describes their one CSV table, not the several tables other commands
// write; bestk's help says it ranks by the mean-field estimate.
func TestHelpSaysWhatSweepCSVAndBestKDo(t *testing.T) {
	for _, c := range []struct {
		cmd           string
		want, notWant string
	}{
		{"sweep", "csv: one table, a row per frontier or top point, every point with --all", "a blank line between two"},
		{"merge", "csv: one table, a row per frontier or top point, every point with --all", "a blank line between two"},
		{"bestk", "It ranks by the mean-field estimate", ""},
		{"predict", "csv: the tables alone, a blank line between two", ""},
	} {
		code, out, stderr := runCLI(c.cmd, "--help")
		help := out + stderr
		if code != exitOK || !strings.Contains(help, c.want) || c.notWant != "" && strings.Contains(help, c.notWant) {
			t.Errorf("%s --help: exit %d, want %q and not %q:\n%s", c.cmd, code, c.want, c.notWant, help)
		}
	}
}

// aggRecipes returns two agg recipes to edit: one recipe emit writes
// (schema 2, agg:tp4) and an InferenceX schema-1 file (agg tp2).
func aggRecipes(t *testing.T) (emitted, schema1 string) {
	t.Helper()
	code, emitted, stderr := runCLI("recipe", "emit", "--topology", "agg:tp4")
	if code != exitOK {
		t.Fatal(stderr)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "recipes", "schema1_sglang_qwen3.5_gb300-fp4_agentic_agg-tp2-c1-mtp-hicache.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return emitted, string(b)
}

// oneAggShard is a one-point sweep's JSON (b200 agg:tp8 conc 4 k 3,
// 1024/1024 tokens), a shard for merge to read.
func oneAggShard(t *testing.T) string {
	t.Helper()
	code, out, stderr := runCLI("sweep", "--gpu", "b200", "--isl", "1024", "--osl", "1024", "--topologies", "agg:tp8", "--conc", "4", "--steps", "3", "--json")
	if code != exitOK {
		t.Fatal(stderr)
	}
	return out
}

// TestMergeOneTokenOutputs: a one-token output has no decode step, so its
// points carry interactivity and TPOT 0, which merge's check of missing
// figures must let through: two shards of such a sweep merge into the
// unsharded sweep's JSON.
func TestMergeOneTokenOutputs(t *testing.T) {
	args := []string{"sweep", "--gpu", "b200", "--gpus", "2", "--isl", "1024", "--osl", "1", "--conc", "1,4", "--steps", "0", "--json"}
	code, whole, stderr := runCLI(args...)
	if code != exitOK {
		t.Fatal(stderr)
	}
	dir := t.TempDir()
	var files []string
	for i := range 2 {
		code, out, stderr := runCLI(append(args, "--shard", fmt.Sprintf("%d/2", i))...)
		if code != exitOK {
			t.Fatal(stderr)
		}
		f := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
		if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	code, merged, stderr := runCLI(append([]string{"merge", "--json"}, files...)...)
	if code != exitOK {
		t.Fatalf("merge exit %d: %s", code, stderr)
	}
	if merged != whole {
		t.Errorf("merged JSON differs from the unsharded sweep's")
	}
}
