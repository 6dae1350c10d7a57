package measured

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func approx(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestReadFormats(t *testing.T) {
	type want struct {
		dep     map[string]string
		metrics map[string]float64
	}
	for _, tc := range []struct {
		file   string
		format string
		points []want
		skips  []string // substrings of the skip reasons, in order
	}{
		{"inferencex_fixed.json", FormatInferenceX, []want{
			// process_result.py writes seconds: 0.5 s TTFT is 500 ms.
			{map[string]string{"gpu": "h200", "model": "deepseek-ai/DeepSeek-R1-0528", "precision": "fp8", "engine": "sglang",
				"spec": "mtp", "conc": "64", "isl": "1024", "osl": "1024", "topology": "agg:tp8"},
				map[string]float64{"tput_per_gpu": 1200, "output_tput_per_gpu": 600, "ttft_ms": 500, "ttft_ms_p90": 900,
					"tpot_ms": 25, "tpot_ms_p90": 30, "e2el_s_p50": 26.075, "e2el_s_p90": 31, "interactivity": 40}},
			// Multinode: output divided by the 8 decode GPUs, rescaled to all 16.
			{map[string]string{"gpu": "gb200", "engine": "trtllm", "spec": "none", "conc": "512", "isl": "8192", "osl": "1024",
				"topology": "disagg:2xdep4+1xdep8"},
				map[string]float64{"tput_per_gpu": 5000, "output_tput_per_gpu": 500, "ttft_ms": 2000, "tpot_ms": 50,
					"e2el_s_p50": 53.15, "interactivity": 20}},
		}, []string{"draft_model"}},
		{"inferencex_agentic.json", FormatInferenceX, []want{
			{map[string]string{"gpu": "b300", "workload": "agentx", "topology": "agg:tp4", "conc": "16", "spec": "mtp"},
				// request_metrics latencies are seconds: 2.5 s TTFT, 8 ms TPOT.
				map[string]float64{"tput_per_gpu": 20000.5, "output_tput_per_gpu": 300.25, "ttft_ms": 2500, "ttft_ms_p90": 8000,
					"tpot_ms": 8, "tpot_ms_p90": 12, "e2el_s_p50": 15, "e2el_s_p90": 45, "interactivity": 125}},
		}, nil},
		{"aiperf_profile_export_aiperf.json", FormatAIPerf, []want{
			// input_config.endpoint.model_names: ["deepseek-ai/DeepSeek-R1"].
			{map[string]string{"model": "deepseek-ai/DeepSeek-R1", "conc": "32", "isl": "1024", "osl": "1024"},
				map[string]float64{"ttft_ms": 550, "ttft_ms_p90": 900, "tpot_ms": 19.45, "tpot_ms_p90": 22,
					"e2el_s_p50": 20.5, "e2el_s_p90": 24, MetricOutputTotal: 1536}},
		}, nil},
		{"bench_serving.jsonl", FormatBenchServing, []want{
			{map[string]string{"engine": "sglang", "conc": "16", "isl": "1024", "osl": "1024", "range_ratio": "1"},
				map[string]float64{"ttft_ms": 400, "tpot_ms": 23, "e2el_s_p50": 24, MetricOutputTotal: 655.36,
					MetricTputTotal: 1310.72, "al": 2.4, "interactivity": 1000.0 / 23}},
			{map[string]string{"conc": "64", "range_ratio": "0.8"},
				map[string]float64{"ttft_ms": 900, "tpot_ms": 28, "tpot_ms_p90": 31, "e2el_s_p50": 30, MetricOutputTotal: 2621.44,
					MetricTputTotal: 5242.88, "interactivity": 1000.0 / 28}},
		}, []string{"sharegpt"}},
		{"measured.csv", FormatCSV, []want{
			{map[string]string{"model": "DeepSeek-R1", "gpu": "h200", "topology": "agg:tp8", "conc": "64", "steps": "3", "al": "2.4"},
				map[string]float64{"tput_per_gpu": 1500.5, "tpot_ms": 22.5, "e2el_s_p90": 30}},
			{map[string]string{"conc": "16", "spec": "none"}, map[string]float64{"tput_per_gpu": 700}},
		}, []string{"no measured_"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			s, err := ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Points) != len(tc.points) {
				t.Fatalf("%d points, want %d: %+v (skips %+v)", len(s.Points), len(tc.points), s.Points, s.Skips)
			}
			for i, w := range tc.points {
				p := s.Points[i]
				if p.Format != tc.format {
					t.Errorf("point %d format %q, want %q", i, p.Format, tc.format)
				}
				for k, v := range w.dep {
					if p.Deployment[k] != v {
						t.Errorf("point %d deployment %s = %q, want %q", i, k, p.Deployment[k], v)
					}
				}
				if len(p.Metrics) != len(w.metrics) {
					t.Errorf("point %d metrics %v, want %v", i, p.Metrics, w.metrics)
				}
				for k, v := range w.metrics {
					if got, ok := p.Metrics[k]; !ok || !approx(got, v) {
						t.Errorf("point %d %s = %v, want %v", i, k, got, v)
					}
				}
			}
			if len(s.Skips) != len(tc.skips) {
				t.Fatalf("skips %+v, want %d", s.Skips, len(tc.skips))
			}
			for i, sub := range tc.skips {
				if !strings.Contains(s.Skips[i].Reason, sub) {
					t.Errorf("skip %d %q lacks %q", i, s.Skips[i].Reason, sub)
				}
			}
		})
	}
}

// Every metric has plausible bounds, and the bounds hold the fixtures.
func TestPlausibleCoversMetrics(t *testing.T) {
	for k := range MetricKeys {
		if b, ok := plausible[k]; !ok || !(b[0] > 0 && b[0] < b[1]) {
			t.Errorf("%s: bounds %v", k, b)
		}
	}
}

func TestReadRejects(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"units_ms_as_s.json", "", "unit mismatch"},
		{"truncated.json", "", "truncated"},
		{"empty.json", "  \n", "empty file"},
		{"unknown.json", `{"foo": 1}`, "not a result file"},
		{"scalar.json", `42`, "unknown column"},
		{"bad.csv", "gpu,conc,tput\nh200,4,1\n", `unknown column "tput"`},
		{"nometric.csv", "gpu,conc\nh200,4\n", "no measured_"},
		{"badnum.csv", "gpu,measured_tpot_ms\nh200,fast\n", "not a number"},
		{"neg.csv", "gpu,measured_tpot_ms\nh200,-1\n", "positive finite"},
		{"dup.csv", "gpu,gpu,measured_tpot_ms\nh200,h200,1\n", "twice"},
		{"ragged.csv", "gpu,measured_tpot_ms\nh200,1,2\n", "wrong number of fields"},
		{"mixed.json", `{"tput_per_gpu": 10, "hw": "h200", "tp": 8, "conc": 4, "median_ttft": 0.1, "median_ttft_ms": 100}`, "mixed"},
		{"aiperf_unit.json", `{"time_to_first_token": {"unit": "fortnights", "p50": 1}}`, "unit"},
		{"e2el_vs_tpot.csv", "gpu,osl,measured_tpot_ms,measured_e2el_s_p50\nh200,1024,20,20000\n", "unit mismatch"},
		{"ttft_vs_e2el.csv", "gpu,measured_ttft_ms,measured_e2el_s_p50\nh200,500000,2\n", "unit mismatch"},
		// Implausible figures name the file, the row and the field.
		{"huge.csv", "gpu,conc,measured_tput_per_gpu\nh200,4,1000\nh200,8,1e308\n", "huge.csv:3: tput_per_gpu = 1e+308: not a plausible measurement"},
		{"tiny.csv", "gpu,measured_tpot_ms\nh200,1e-300\n", "tiny.csv:2: tpot_ms = 1e-300: not a plausible"},
		{"al.csv", "gpu,measured_al\nh200,0.5\n", "al.csv:2: al = 0.5: not a plausible"},
		{"negsteps.csv", "gpu,steps,measured_tpot_ms\nh200,-3,20\n", `negsteps.csv:2: steps "-3": want the draft length`},
		{"huge.json", `{"time_to_first_token": {"unit": "ms", "p50": 1e300}}`, "ttft_ms = 1e+300: not a plausible"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.data == "" {
				_, err = ReadFile(filepath.Join("testdata", tc.name))
			} else {
				_, err = Parse(tc.name, []byte(tc.data))
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.name) {
				t.Fatalf("error %v, want one naming %s and saying %q", err, tc.name, tc.want)
			}
		})
	}
}

func TestReadFileBounds(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadFile(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
	big := filepath.Join(dir, "big.csv")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadFile(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("an oversized file: %v", err)
	}
}

func TestSetDefaults(t *testing.T) {
	s, err := Parse("x.csv", []byte("gpu,conc,measured_tpot_ms\nh200,4,20\n,8,21\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetDefaults(map[string]string{"gpu": "b200", "topology": "agg:tp8"}); err != nil {
		t.Fatal(err)
	}
	if s.Points[0].Deployment["gpu"] != "h200" || s.Points[1].Deployment["gpu"] != "b200" || s.Points[1].Deployment["topology"] != "agg:tp8" {
		t.Errorf("--set must fill only what a point lacks: %+v", s.Points)
	}
	s2, _ := Parse("y.csv", []byte("gpu,spec,measured_tpot_ms\nh200,none,20\nh200,mtp,21\n"))
	if err := s2.SetDefaults(map[string]string{"steps": "3"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s2.Points[0].Deployment["steps"]; ok || s2.Points[1].Deployment["steps"] != "3" {
		t.Errorf("--set steps must reach the MTP point only: %+v", s2.Points)
	}
	if err := s.SetDefaults(map[string]string{"color": "red"}); err == nil {
		t.Error("an unknown key must be refused")
	}
	// A default that a point records otherwise is not applied, and said so
	// (once per key, with the first such point and a count).
	s3, _ := Parse("z.csv", []byte("gpu,conc,measured_tpot_ms\nh200,4,20\nh200,8,21\nH200,16,22\n,32,23\n"))
	if err := s3.SetDefaults(map[string]string{"gpu": "h200"}); err != nil || len(s3.NotApplied) != 0 {
		t.Errorf("an equal value (any case) is no conflict: %v %+v", err, s3.NotApplied)
	}
	s3, _ = Parse("z.csv", []byte("gpu,conc,measured_tpot_ms\nh200,4,20\nh200,8,21\n,32,23\n"))
	if err := s3.SetDefaults(map[string]string{"gpu": "b200", "conc": "64"}); err != nil {
		t.Fatal(err)
	}
	want := []NotApplied{{Key: "conc", Value: "64", Recorded: "4", Source: "z.csv:2", Points: 3},
		{Key: "gpu", Value: "b200", Recorded: "h200", Source: "z.csv:2", Points: 2}}
	if !reflect.DeepEqual(s3.NotApplied, want) || s3.Points[2].Deployment["gpu"] != "b200" {
		t.Errorf("NotApplied %+v, want %+v", s3.NotApplied, want)
	}
	if got := s3.NotApplied[1].String(); got != "gpu=b200 not applied: z.csv:2 records gpu h200 and 1 more points (a value the file records wins)" {
		t.Errorf("message %q", got)
	}
}

// Several models in one AIPerf export are several deployments: skipped.
func TestAIPerfSeveralModels(t *testing.T) {
	s, err := Parse("a.json", []byte(`{"input_config": {"endpoint": {"model_names": ["a/X", "b/Y"]}}, "time_to_first_token": {"unit": "ms", "p50": 5}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Points) != 0 || len(s.Skips) != 1 || !strings.Contains(s.Skips[0].Reason, "model_names lists 2 models (a/X, b/Y)") {
		t.Errorf("%+v", s)
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"inferencex_fixed.json", "inferencex_agentic.json", "aiperf_profile_export_aiperf.json", "bench_serving.jsonl", "measured.csv", "truncated.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("[1, {\"tput_per_gpu\": \"NaN\"}]"))
	f.Add([]byte("#x\n#y"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz", data)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, p := range s.Points {
			for k, v := range p.Metrics {
				if !(v > 0) || math.IsInf(v, 0) {
					t.Fatalf("%s: metric %s = %v passed the checks", p.Source, k, v)
				}
			}
		}
	})
}

// A file saved by Excel as "CSV UTF-8" starts with a byte-order mark: the
// first column was read as "\ufeffgpu", an unknown column.
func TestParseSkipsByteOrderMark(t *testing.T) {
	const bom = "\ufeff"
	for _, tc := range []struct {
		name, data string
		want       map[string]string // the first point's deployment
		tput       float64
	}{
		{"csv", "gpu,topology,conc,isl,osl,measured_tput_per_gpu\nh200,agg:tp8,32,1024,1024,100\n",
			map[string]string{"gpu": "h200", "topology": "agg:tp8", "conc": "32", "isl": "1024", "osl": "1024"}, 100},
		{"json", `[{"tput_per_gpu": 250.5, "conc": 8, "tp": 8, "ep": 1, "dp_attention": "false", "isl": 1024, "osl": 1024, "hw": "h200", "framework": "sglang", "precision": "fp8", "model": "deepseek-ai/DeepSeek-R1"}]`,
			nil, 250.5},
	} {
		plain, err := Parse("m."+tc.name, []byte(tc.data))
		if err != nil {
			t.Fatalf("%s without a mark: %v", tc.name, err)
		}
		marked, err := Parse("m."+tc.name, []byte(bom+tc.data))
		if err != nil {
			t.Fatalf("%s with a mark: %v", tc.name, err)
		}
		if len(marked.Points) != 1 || marked.Points[0].Metrics["tput_per_gpu"] != tc.tput {
			t.Fatalf("%s with a mark: points %+v, want one with tput_per_gpu %g", tc.name, marked.Points, tc.tput)
		}
		if !reflect.DeepEqual(marked.Points[0].Deployment, plain.Points[0].Deployment) {
			t.Errorf("%s: deployment %v with a mark, %v without", tc.name, marked.Points[0].Deployment, plain.Points[0].Deployment)
		}
		if tc.want != nil && !reflect.DeepEqual(marked.Points[0].Deployment, tc.want) {
			t.Errorf("%s: deployment %v, want %v", tc.name, marked.Points[0].Deployment, tc.want)
		}
	}
}

// compare and calibrate read a file named twice (or once more through a
// link) twice: each point weighed twice in the medians and the fit, and
// calibrate's leave-one-out kept a point's twin in.
func TestReadFilesRefusesOneFileTwice(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.csv", "gpu,topology,conc,isl,osl,measured_tput_per_gpu\nh200,agg:tp8,32,1024,1024,100\nh200,agg:tp8,64,1024,1024,150\n")
	b := write("b.csv", "gpu,topology,conc,isl,osl,measured_tput_per_gpu\nh200,agg:tp8,128,1024,1024,200\n")
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(a, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	for _, tc := range []struct {
		name   string
		paths  []string
		points int
		err    string
	}{
		{"two files", []string{a, b}, 3, ""},
		{"one file twice", []string{a, b, a}, 0, a + ": the same file as " + a + ", given twice"},
		{"through a link", []string{b, link, a}, 0, a + ": the same file as " + link + ", given twice"},
	} {
		s, err := ReadFiles(tc.paths)
		switch {
		case tc.err == "" && (err != nil || len(s.Points) != tc.points):
			t.Errorf("%s: %v, error %v; want %d points", tc.name, s, err, tc.points)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
}
