package main

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSweepShardMergeCSV runs one small sweep whole and as two shards,
// merges them, and reads the merge back as JSON, CSV and text.
func TestSweepShardMergeCSV(t *testing.T) {
	dir := t.TempDir()
	base := []string{"sweep", "--gpu", "b200", "--gpus", "4", "--isl", "1024", "--osl", "1024", "--steps", "0-1", "--conc", "2,64",
		"--requests", "48", "--max-ttft-ms", "200", "--top", "2", "--json"}
	code, whole, stderr := runCLI(base...)
	if code != exitOK {
		t.Fatalf("sweep exit %d: %s", code, stderr)
	}
	var files []string
	for i := range 2 {
		code, part, stderr := runCLI(append(base, "--shard", strconv.Itoa(i)+"/2")...)
		if code != exitOK {
			t.Fatalf("shard %d exit %d: %s", i, code, stderr)
		}
		f := filepath.Join(dir, "shard"+strconv.Itoa(i)+".json")
		if err := os.WriteFile(f, []byte(part), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	code, merged, stderr := runCLI(append([]string{"merge", "--json"}, files[1], files[0])...)
	if code != exitOK {
		t.Fatalf("merge exit %d: %s", code, stderr)
	}
	type doc struct {
		Inputs map[string]json.RawMessage `json:"inputs"`
		Fronts map[string]json.RawMessage
	}
	read := func(s string) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	// merge runs the unsharded refinement rounds over the shards' points:
	// its output is the unsharded sweep's, byte for byte.
	if merged != whole {
		t.Errorf("merged output differs from the unsharded sweep's:\n%s\n%s", merged, whole)
	}
	w := read(whole)
	var in map[string]any
	if err := json.Unmarshal(w["inputs"], &in); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"specsim_version", "model", "gpu", "precision", "engine", "workload", "workload_params", "seed", "sla", "query"} {
		if _, ok := in[k]; !ok {
			t.Errorf("inputs lack %q", k)
		}
	}
	if in["gpu"] != "b200" || in["workload_params"].(map[string]any)["isl"] != 1024.0 {
		t.Errorf("inputs echo gpu %v, workload %v", in["gpu"], in["workload_params"])
	}

	code, out, stderr := runCLI(append([]string{"merge", "--format", "csv"}, files...)...)
	if code != exitOK {
		t.Fatalf("merge --format csv exit %d: %s", code, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse: %v\n%s", err, out)
	}
	if len(rows) < 2 || strings.Join(rows[0], ",") != strings.Join(sweepCSVHeader, ",") {
		t.Fatalf("CSV header %v, %d rows", rows[0], len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, r := range rows[1:] {
		if r[col["sim"]] != "event" {
			t.Errorf("frontier row %v is not event-simulated", r)
		}
		if v, _ := strconv.ParseFloat(r[col["ttft_ms_p90"]], 64); v > 200 {
			t.Errorf("row %v: p90 TTFT %.0f ms above --max-ttft-ms 200", r, v)
		}
		for _, f := range strings.Split(r[col["frontiers"]], ";") {
			if !map[string]bool{"interactivity": true, "e2el": true, "normalized": true, "mtp": true, "no_spec": true, "top": true}[f] {
				t.Errorf("row %v: frontier name %q", r, f)
			}
		}
	}

	code, out, stderr = runCLI(append([]string{"merge"}, files...)...)
	if code != exitOK || !strings.Contains(out, "SLA --max-ttft-ms 200 removed") || !strings.Contains(out, "frontier by p50 E2EL") ||
		!strings.Contains(out, "E2EL p50 s") || !strings.Contains(out, "norm. interactivity") ||
		strings.Contains(out, "mean-field") || strings.Contains(stderr, "\r") {
		t.Errorf("merge text exit %d:\n%s\nstderr %q", code, out, stderr)
	}
	// A shard alone is refused.
	if code, _, stderr := runCLI("merge", files[0]); code != exitBadInput || !strings.Contains(stderr, "missing shard") {
		t.Errorf("merge of one of two shards: exit %d, %s", code, stderr)
	}
}

func TestSweepFlagErrors(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	os.WriteFile(notDir, nil, 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "--shard", "2/2", "--json"}, "--shard"},
		{[]string{"sweep", "--shard", "0/2"}, "add --json"},
		{[]string{"sweep", "--scope", "both"}, "--scope"},
		{[]string{"sweep", "--refine-by", "guess"}, "--refine-by \"guess\": want estimate, corrected or all"},
		{[]string{"sweep", "--max-ttft-ms", "-1"}, "--max-ttft-ms"},
		{[]string{"sweep", "--top", "-1"}, "--top"},
		{[]string{"sweep", "--format", "xml"}, "csv"},
		{[]string{"merge"}, "no files"},
		{[]string{"merge", "/nonexistent/shard.json"}, "shard.json"},
		// Checked before any pricing (review items 20, 21).
		{[]string{"sweep", "--topologies", "agg:tp4", "--gpus", "-1"}, "--gpus -1: want 1..1024"},
		{[]string{"sweep", "--gpus", "2", "--topologies", "agg:tp8"}, "--topologies agg:tp8 uses 8 GPUs, more than --gpus 2"},
		{[]string{"sweep", "--topologies", "agg:tp2,agg:tp4", "--min-pool-gpus", "4"}, "--topologies agg:tp2 has a pool of 2 GPUs, fewer than --min-pool-gpus 4"},
		{[]string{"sweep", "--plot", dir}, "--plot " + dir + ": want a .png or .svg file"},
		{[]string{"sweep", "--plot", "/nonexistent/x.png"}, "--plot cannot write /nonexistent/x.png: directory /nonexistent does not exist"},
		{[]string{"sweep", "--emit", filepath.Join(notDir, "recipes")}, "--emit"},
		{[]string{"merge", "--plot", "x.jpg", "a.json"}, "--plot x.jpg"},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q (want %q)", tc.args, code, stderr, tc.want)
		}
	}
	f := filepath.Join(t.TempDir(), "junk.json")
	os.WriteFile(f, []byte(`{"points": 3}`), 0o644)
	if code, _, stderr := runCLI("merge", f); code != exitBadInput || !strings.Contains(stderr, "junk.json") {
		t.Errorf("merge junk: exit %d, %q", code, stderr)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI("version")
	if code != exitOK || !strings.HasPrefix(out, "specsim ") || !strings.Contains(out, "go1") {
		t.Errorf("version: exit %d, %q", code, out)
	}
	// A build without a VCS stamp (a test binary has none) is named by its
	// executable's SHA-256, computed here a second way.
	if strings.Contains(out, "devel-bin-") {
		exe, _ := os.Executable()
		b, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if want := "devel-bin-" + hex.EncodeToString(sum[:])[:12]; !strings.Contains(out, want) {
			t.Errorf("version %q, want %s", out, want)
		}
	}
}

// Off a terminal the stage progress writes plain lines, at most one per
// period and one when a slow stage ends; never a carriage return.
func TestStageProgressPlain(t *testing.T) {
	var b strings.Builder
	clock := &fakeClock{step: 2 * time.Second}
	p := stageProgress(&b, "sweep", false, 5*time.Second, clock.now)
	for done := range 5 {
		p("pricing", done, 4)
	}
	want := "sweep: pricing 2/4 topologies (6s)\nsweep: pricing 4/4 topologies done in 10.0s\n"
	if b.String() != want {
		t.Errorf("progress wrote %q, want %q", b.String(), want)
	}
}

// The AgentX replay window a sweep simulates (simulate.SweepAgentXWindow,
// 900 s) is in its help, its text output and its JSON echo, with the
// predict flag that reproduces a point.
func TestSweepSaysAgentXWindow(t *testing.T) {
	_, help, _ := runCLI("sweep", "--help")
	if !strings.Contains(help, "--agentx duration=900") {
		t.Errorf("sweep --help says no window:\n%s", help)
	}
	args := []string{"sweep", "--gpu", "b200", "--topologies", "agg:tp8", "--conc", "4", "--steps", "3"}
	code, out, stderr := runCLI(args...)
	if code != exitOK || !strings.Contains(out, "replay a 900 s window") || !strings.Contains(out, "--agentx duration=900") {
		t.Errorf("exit %d %s\n%s", code, stderr, out)
	}
	code, out, _ = runCLI(append(args, "--json")...)
	if code != exitOK || !strings.Contains(out, `"duration_s": 900`) {
		t.Errorf("JSON echo: exit %d\n%s", code, out)
	}
}

// merge's messages carry its name once and say what is wrong with which
// file: one file given twice; a point outside the inputs' enumeration.
func TestMergeMessages(t *testing.T) {
	out := oneAggShard(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "dup.json")
	os.WriteFile(f, []byte(out), 0o644)
	bogus := filepath.Join(dir, "bogus.json")
	os.WriteFile(bogus, []byte(strings.Replace(out, `"topology": "agg:tp8"`, `"topology": "agg:tp999"`, 1)), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"merge", f, f}, "specsim merge: " + f + " is given twice\n"},
		{[]string{"merge", bogus}, "specsim merge: " + bogus + ": points: point 0: topology agg:tp999 is not in inputs.topologies\n"},
	} {
		if code, _, stderr := runCLI(c.args...); code != exitBadInput || stderr != c.want {
			t.Errorf("%v: exit %d %q, want %q", c.args, code, stderr, c.want)
		}
	}
}

// The host size and the NVLink domain have their own names: a GB300 NVL72
// compute tray holds 4 GPUs of a 72-GPU NVLink domain; --nvlink-domain-gpus
// (old name --gpus-per-node) sets the domain only.
func TestSweepEchoHostAndDomain(t *testing.T) {
	for _, c := range []struct {
		flags        []string
		host, domain int
	}{
		{nil, 4, 72},
		{[]string{"--nvlink-domain-gpus", "8"}, 4, 8},
		{[]string{"--gpus-per-node", "8"}, 4, 8},
		{[]string{"--nvlink-domain-gpus", "2"}, 2, 2},
	} {
		args := append([]string{"sweep", "--gpu", "gb300", "--isl", "1024", "--osl", "1024", "--topologies", "agg:tp2", "--conc", "4", "--steps", "3", "--json"}, c.flags...)
		code, out, stderr := runCLI(args...)
		var so struct {
			Inputs map[string]any `json:"inputs"`
		}
		if code != exitOK || json.Unmarshal([]byte(out), &so) != nil {
			t.Fatalf("%v: exit %d %s", c.flags, code, stderr)
		}
		if so.Inputs["gpus_per_host"] != float64(c.host) || so.Inputs["nvlink_domain_gpus"] != float64(c.domain) || so.Inputs["gpus_per_node"] != nil {
			t.Errorf("%v: gpus_per_host %v nvlink_domain_gpus %v gpus_per_node %v, want %d %d absent", c.flags, so.Inputs["gpus_per_host"], so.Inputs["nvlink_domain_gpus"], so.Inputs["gpus_per_node"], c.host, c.domain)
		}
	}
	_, help, _ := runCLI("predict", "--help")
	if !strings.Contains(help, "-nvlink-domain-gpus") || !strings.Contains(help, "not per host") {
		t.Errorf("predict --help names no NVLink domain flag")
	}
}

// sweep's JSON carries each point's notes and the count of overloaded
// frontier points, and predict flags the same deployment by the same rule:
// 64 closed-loop sessions on one agg:tp8 instance that runs 16 at a time
// leave 48 waiting ("queued: agg runs 16 of 64").
func TestOverloadNotesSweepAndPredict(t *testing.T) {
	common := []string{"--gpu", "b200", "--isl", "1024", "--osl", "1024", "--conc", "64", "--steps", "3", "--max-running", "16"}
	const want = "queued: agg runs 16 of 64"
	code, out, stderr := runCLI(append([]string{"sweep", "--topologies", "agg:tp8", "--json"}, common...)...)
	var so struct {
		Points     []struct{ Notes []string } `json:"points"`
		Overloaded *int                       `json:"overloaded_frontier_points"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &so) != nil {
		t.Fatalf("sweep: exit %d %s", code, stderr)
	}
	if len(so.Points) != 1 || strings.Join(so.Points[0].Notes, "; ") != want || so.Overloaded == nil || *so.Overloaded != 1 {
		t.Errorf("sweep JSON points %+v overloaded %v, want notes %q and 1", so.Points, so.Overloaded, want)
	}
	code, out, stderr = runCLI(append([]string{"predict", "--topology", "agg:tp8", "--json"}, common...)...)
	var pj struct{ Notes []string }
	if code != exitOK || json.Unmarshal([]byte(out), &pj) != nil || strings.Join(pj.Notes, "; ") != want {
		t.Errorf("predict JSON notes %v (exit %d %s), want %q", pj.Notes, code, stderr, want)
	}
	if _, out, _ = runCLI(append([]string{"predict", "--topology", "agg:tp8"}, common...)...); !strings.Contains(out, "overloaded server (note: "+want+")") {
		t.Errorf("predict text does not flag the overload:\n%s", out)
	}
}

// The text and Markdown outputs print the no-speculation frontier that the
// JSON (frontier_none), CSV (no_spec) and plot carry: one row per point of
// frontier_none, each with k 0.
func TestSweepTextPrintsNoSpecFrontier(t *testing.T) {
	base := []string{"sweep", "--gpu", "b200", "--isl", "1024", "--osl", "1024", "--topologies", "agg:tp8,agg:tp4", "--conc", "4,64", "--steps", "0-3"}
	code, out, stderr := runCLI(append(base, "--json")...)
	var so struct {
		None []struct {
			Topology string
			Conc     int
			Steps    int
		} `json:"frontier_none"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &so) != nil || len(so.None) == 0 {
		t.Fatalf("exit %d %s", code, stderr)
	}
	for _, f := range []string{"text", "markdown"} {
		_, out, _ := runCLI(append(base, "--format", f)...)
		_, sec, ok := strings.Cut(out, "no-speculation frontier, k = 0")
		if !ok {
			t.Fatalf("%s: no no-speculation frontier:\n%s", f, out)
		}
		sec, _, _ = strings.Cut(sec, "\n\n")
		rows := 0
		for _, l := range strings.Split(sec, "\n") {
			if strings.HasPrefix(strings.TrimLeft(l, "| "), "agg:") {
				rows++
				if fs := strings.Fields(strings.ReplaceAll(l, "|", " ")); len(fs) < 4 || fs[3] != "0" {
					t.Errorf("%s: row %q is not k 0", f, l)
				}
			}
		}
		if rows != len(so.None) {
			t.Errorf("%s: %d rows, JSON frontier_none has %d", f, rows, len(so.None))
		}
	}
}

// --refine-by is echoed in the inputs (the default too) and the result
// counts the estimates the corrected search left unchecked.
func TestSweepRefineByEcho(t *testing.T) {
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{nil, `"refine_by": "estimate"`},
		{[]string{"--refine-by", "corrected"}, `"refine_by": "corrected"`},
	} {
		args := append([]string{"sweep", "--gpu", "b200", "--isl", "1024", "--osl", "1024", "--topologies", "agg:tp8", "--conc", "4,16", "--steps", "3", "--json"}, c.flags...)
		code, out, stderr := runCLI(args...)
		if code != exitOK || !strings.Contains(out, c.want) || !strings.Contains(out, `"estimate_contenders": `) {
			t.Errorf("%v: exit %d %s\n%s", c.flags, code, stderr, out)
		}
	}
}

// A shard's frontier is partial: sweep --shard refuses --emit and --plot,
// before pricing and before creating anything, and names merge.
func TestSweepShardRefusesEmitPlot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	for _, extra := range [][]string{{"--emit", dir}, {"--plot", filepath.Join(dir, "f.png")}} {
		args := append([]string{"sweep", "--gpu", "b200", "--gpus", "4", "--isl", "1024", "--osl", "1024", "--json", "--shard", "0/2"}, extra...)
		code, out, stderr := runCLI(args...)
		if code != exitBadInput || out != "" || !strings.Contains(stderr, "specsim merge --emit DIR --plot FILE") {
			t.Errorf("%v: exit %d, stdout %d bytes, %s; want exit 2 naming merge", extra, code, len(out), stderr)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%v: %s exists (%v); nothing should be written", extra, dir, err)
		}
	}
}

// --emit DIR refuses a directory that already holds files (one recipe set
// would mix with another), naming DIR and the count, before pricing; sweep
// and merge alike.
func TestEmitRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"01-old.yaml", "02-old.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("schema: 2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"sweep", "--gpu", "b200", "--gpus", "4", "--isl", "1024", "--osl", "1024", "--emit", dir},
		{"merge", "--emit", dir, "nonexistent-shard.json"},
	} {
		code, out, stderr := runCLI(args...)
		if code != exitBadInput || out != "" || !strings.Contains(stderr, dir+" holds 2 entries") {
			t.Errorf("%s --emit into a directory of 2 files: exit %d, %s; want exit 2 naming %s and 2 files", args[0], code, stderr, dir)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("%s holds %d entries after the refusals, want the 2 it had", dir, len(ents))
	}
}

// --conc lists are sets: sorted, repeats dropped, so "2,2" sweeps what
// "2" sweeps (the same configurations and points, inputs.concs [2]).
func TestConcListDeduped(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{{"2,2", []int{2}}, {"8,2,4,2,8", []int{2, 4, 8}}, {" 16, 1 ", []int{1, 16}}, {"", nil}} {
		got, err := intList(tc.in, 1<<16)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("intList(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	type sweepCount struct {
		Inputs    struct{ Concs []int }
		Points    []json.RawMessage
		Evaluated int
	}
	var counts []sweepCount
	for _, conc := range []string{"2", "2,2"} {
		code, out, stderr := runCLI("sweep", "--gpu", "b200", "--gpus", "4", "--isl", "1024", "--osl", "1024", "--conc", conc, "--json")
		if code != exitOK {
			t.Fatalf("--conc %s: exit %d, %s", conc, code, stderr)
		}
		var c sweepCount
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, c)
	}
	if a, b := counts[0], counts[1]; b.Evaluated != a.Evaluated || len(b.Points) != len(a.Points) || !slices.Equal(b.Inputs.Concs, []int{2}) {
		t.Errorf("--conc 2,2: %d configurations, %d points, concs %v; --conc 2: %d, %d", b.Evaluated, len(b.Points), b.Inputs.Concs, a.Evaluated, len(a.Points))
	}
}

// TestSweepBudgetLinePointsToCorrected: a sweep stopped at its budget
// names the corrected search, unless it already is one.
func TestSweepBudgetLinePointsToCorrected(t *testing.T) {
	for _, tc := range []struct {
		by   string
		want bool
	}{{"estimate", true}, {"corrected", false}} {
		code, out, _ := runCLI("sweep", "--gpu", "b200", "--gpus", "4", "--isl", "1024", "--osl", "1024", "--steps", "0-2", "--conc", "2,16", "--max-refine", "2", "--refine-by", tc.by)
		if code != 0 {
			t.Fatalf("--refine-by %s: exit %d", tc.by, code)
		}
		if !strings.Contains(out, "refinement stopped at its budget (--max-refine 2)") {
			t.Fatalf("--refine-by %s: no budget line in\n%s", tc.by, out)
		}
		if got := strings.Contains(out, "or --refine-by corrected:"); got != tc.want {
			t.Errorf("--refine-by %s: hint shown %v, want %v", tc.by, got, tc.want)
		}
	}
}

// TestSweepSLALineByRefineMode: the SLA line's claim about points removed
// on their estimates names the figures the search judged them by.
func TestSweepSLALineByRefineMode(t *testing.T) {
	for _, tc := range []struct{ by, want string }{
		{"estimate", "none of which would reach a frontier inside the limit; every point whose estimate would was simulated first"},
		{"corrected", "by its estimate as --refine-by corrected corrects it; every point whose corrected estimate would was simulated first"},
	} {
		code, out, _ := runCLI("sweep", "--gpu", "b200", "--gpus", "4", "--isl", "1024", "--osl", "1024", "--steps", "0-2", "--conc", "1,16", "--max-ttft-ms", "70", "--max-refine", "-1", "--refine-by", tc.by)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("--refine-by %s: exit %d, want a line with %q in\n%s", tc.by, code, tc.want, out)
		}
	}
}
