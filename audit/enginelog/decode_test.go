package enginelog

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseLineLayouts(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		ok      bool
		rank    string
		running int
		accept  float64
		tput    float64
		queue   int
		hasTime bool
	}{
		{"v0.4 period, trailing comma",
			"[2025-07-01 12:00:00 TP0] Decode batch. #running-req: 8, #token: 1234, token usage: 0.05, accept len: 3.40, gen throughput (token/s): 512.34, #queue-req: 0, ",
			true, "TP0", 8, 3.40, 512.34, 0, true},
		{"v0.5 hybrid GDN usage, DP prefix",
			"[2026-07-01 12:00:20 DP3 TP3 EP3] Decode batch, #running-req: 30, #full token: 60000, full token usage: 0.10, mamba num: 30, mamba usage: 0.08, accept len: 3.30, accept rate: 0.83, cuda graph: True, gen throughput (token/s): 1000.00, #queue-req: 4, ",
			true, "DP3", 30, 3.30, 1000, 4, true},
		{"newest: iteration, no year, ms, no trailing comma, suffixes",
			"[07-01 12:00:05.123 DP1 TP1 EP1] Decode batch [4400], #running-req: 30, #token: 5000, token usage: 0.20, accept len: 3.41, accept rate: 0.80, cuda graph: True, gen throughput (token/s): 1900.50, #queue-req: 2, est. decode TFLOPS/s (per GPU): 120.5, fwd occupancy: 95%",
			true, "DP1", 30, 3.41, 1900.50, 2, true},
		{"PD decode fields",
			"[2026-07-01 12:00:06 TP0] Decode batch, #running-req: 16, #token: 9000, token usage: 0.30, accept len: 2.49, accept rate: 0.62, pre-allocated usage: 0.10, #prealloc-req: 2, #transfer-req: 1, #retracted-req: 0, cuda graph: True, gen throughput (token/s): 700.00, #queue-req: 0, ",
			true, "TP0", 16, 2.49, 700, 0, true},
		{"ANSI colours",
			"\x1b[32m[2026-07-01 12:00:08 PP1 TP0]\x1b[0m Decode batch, #running-req: 5, accept len: 2.00, gen throughput (token/s): 100.00, #queue-req: 0",
			true, "PP1 TP0", 5, 2.00, 100, 0, true},
		{"no spec: no accept len",
			"[2026-07-01 12:00:01 TP0] Decode batch, #running-req: 8, #token: 1300, token usage: 0.05, cuda graph: True, gen throughput (token/s): 500.00, #queue-req: 0, ",
			true, "TP0", 8, 0, 500, 0, true},
		{"no prefix at all",
			"Decode batch, #running-req: 2, accept len: 1.50, gen throughput (token/s): 10.00, #queue-req: 0",
			true, "", 2, 1.5, 10, 0, false},
		{"prefill line is not decode",
			"[2026-07-01 12:00:10 DP0 TP0] Prefill batch, #new-seq: 4, #new-token: 8192, #running-req: 0, #queue-req: 0,",
			false, "", 0, 0, 0, 0, false},
		{"mention without fields",
			"this line is noise: Decode batching is mentioned here",
			false, "", 0, 0, 0, 0, false},
		{"garbage values",
			"Decode batch, #running-req: many, accept len: NaN, gen throughput (token/s): fast",
			false, "", 0, 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := ParseLine(tt.line)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tt.ok, s)
			}
			if !ok {
				return
			}
			if s.Engine != EngineSGLang || s.Rank != tt.rank || s.Running != tt.running || s.AcceptLen != tt.accept ||
				s.GenThroughput != tt.tput || s.Queue != tt.queue || s.HasTime != tt.hasTime {
				t.Errorf("got %+v", s)
			}
			if (tt.accept != 0) != s.HasAccept {
				t.Errorf("HasAccept = %v", s.HasAccept)
			}
		})
	}
	s, _ := ParseLine("[07-01 12:00:05.123 DP1] Decode batch, #running-req: 3, accept len: 2.00")
	if s.Time.Month() != 7 || s.Time.Day() != 1 || s.Time.Second() != 5 || s.Time.Nanosecond() != 123_000_000 {
		t.Errorf("time %v", s.Time)
	}
}

func TestParseOtherEngines(t *testing.T) {
	// vLLM: 3 positions, 900 drafted tokens -> 300 verify steps.
	s, ok := ParseLine("INFO 07-01 12:00:00 [metrics.py:88] SpecDecoding metrics: Mean acceptance length: 3.00, Accepted throughput: 500.00 tokens/s, Drafted throughput: 750.00 tokens/s, Accepted: 600 tokens, Drafted: 900 tokens, Per-position acceptance rate: 0.900, 0.700, 0.400, Avg Draft acceptance rate: 66.7%")
	if !ok || s.Engine != EngineVLLM || s.AcceptLen != 3 || s.Weight != 300 {
		t.Errorf("vLLM spec: %+v", s)
	}
	s, ok = ParseLine("INFO 07-01 12:00:00 [loggers.py:123] Engine 002: Avg prompt throughput: 1200.5 tokens/s, Avg generation throughput: 850.2 tokens/s, Running: 24 reqs, Waiting: 3 reqs, GPU KV cache usage: 12.5%, Prefix cache hit rate: 80.1%")
	if !ok || s.Rank != "engine 2" || s.GenThroughput != 850.2 || s.Running != 24 || s.Queue != 3 {
		t.Errorf("vLLM throughput: %+v", s)
	}
	// TRT-LLM stats: AL = (120 accepted + 32 bonus) / 32 requests = 4.75;
	// tokens/s = 152 tokens / 0.020 s = 7600.
	s, ok = ParseLine(`[RANK 1] {"iter": 11, "iterLatencyMS": 20.0, "inflightBatchingStats": {"numScheduledRequests": 32}, "specDecodingStats": {"numDraftTokens": 192, "numAcceptedTokens": 120, "numRequestsWithDraftTokens": 32}}`)
	if !ok || s.Engine != EngineTRTLLM || s.Rank != "rank 1" || s.AcceptLen != 4.75 || s.Weight != 32 || s.GenThroughput != 7600 || s.Running != 32 {
		t.Errorf("TRT stats: %+v", s)
	}
	s, ok = ParseLine("[TRT-LLM] [I] [_torch][RANK 0] iter = 10, global_rank = 0, rank = 0, num_scheduled_requests = 32, host_step_time = 20.0ms")
	if !ok || s.Running != 32 || s.HasAccept {
		t.Errorf("TRT iter: %+v", s)
	}
	if _, ok := ParseLine(`{"specDecodingStats": {"numDraftTokens": 0, "numRequestsWithDraftTokens": 0}}`); ok {
		t.Error("TRT stats without requests should carry nothing")
	}
	if _, ok := ParseLine(`{"specDecodingStats": broken`); ok {
		t.Error("broken JSON parsed")
	}
}

func TestSummaryDPRanks(t *testing.T) {
	col, err := ReadFiles([]string{"testdata/sglang_dp.log"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	sum := Summarize(col, 2)
	// DP0 logs 1000 and 1200 tok/s (mean 1100), DP1 400 and 800 (mean 600):
	// the server generates 1100 + 600 = 1700 tok/s.
	if sum.GenThroughput != 1700 {
		t.Errorf("throughput %v, want 1700", sum.GenThroughput)
	}
	// running: DP0 mean 30, DP1 mean (10+20)/2 = 15 -> 45
	if sum.MeanRunning != 45 || len(sum.Ranks) != 2 {
		t.Errorf("running %v over %d ranks, want 45 over 2", sum.MeanRunning, len(sum.Ranks))
	}
	// accept len weighted by running requests:
	// (3.30*30 + 3.50*10 + 3.40*30 + 3.40*20) / (30+10+30+20) = 304/90
	if d := sum.AcceptLen; math.Abs(d.Mean-304.0/90) > 1e-12 || d.UnweightedMean != 3.4 || d.Samples != 4 {
		t.Errorf("accept len %+v, want mean %v", d, 304.0/90)
	}
	// two slices of the 20 s between the first and last decode line:
	// [0,10) holds the 12:00:20 pair, [10,20] the 12:00:40 pair.
	if sum.TimeAxis != "seconds" || len(sum.Timeline) != 2 {
		t.Fatalf("timeline %s %+v", sum.TimeAxis, sum.Timeline)
	}
	b0, b1 := sum.Timeline[0], sum.Timeline[1]
	if b0.Running != 40 || b0.GenThroughput != 1400 || b1.Running != 50 || b1.GenThroughput != 2000 {
		t.Errorf("timeline %+v", sum.Timeline)
	}
	// bucket accept len: (3.30*30 + 3.50*10)/40 = 3.35
	if math.Abs(b0.AcceptLen-3.35) > 1e-12 {
		t.Errorf("bucket 0 accept len %v, want 3.35", b0.AcceptLen)
	}
	if h := sum.AcceptLen.Histogram; len(h) != 3 || h[0].Count != 1 || h[1].Count != 2 || h[2].Count != 1 {
		t.Errorf("histogram %+v", h)
	}
}

func TestSummaryVLLM(t *testing.T) {
	col, err := ReadFiles([]string{"testdata/vllm.log"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	sum := Summarize(col, 1)
	// The SpecDecoding lines belong to the engine named just before them.
	if len(sum.Ranks) != 2 || sum.Ranks[0].Rank != "engine 0" || sum.Ranks[1].Rank != "engine 1" {
		t.Fatalf("ranks %+v", sum.Ranks)
	}
	// Independent check: AL = 1 + sum(accepted) / sum(verify steps)
	// = 1 + (600 + 100) / (900/3 + 300/3) = 1 + 700/400 = 2.75.
	if sum.AcceptLen.Mean != 2.75 {
		t.Errorf("mean %v, want 2.75", sum.AcceptLen.Mean)
	}
	if sum.GenThroughput != 850.2+150 {
		t.Errorf("throughput %v", sum.GenThroughput)
	}
}

// simulatedLog writes an SGLang decode log for a run with synthetic
// acceptance: every verify step draws one length for the whole batch, and
// each logged interval averages 40 steps (the default decode-log-interval).
func simulatedLog(t *testing.T, draw func(r *rand.Rand) float64, intervals int) string {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for i := range intervals {
		sum := 0.0
		for range 40 {
			sum += draw(r)
		}
		fmt.Fprintf(&b, "[2026-07-01 12:%02d:%02d DP%d TP%d] Decode batch, #running-req: 32, #token: 1, token usage: 0.01, accept len: %.2f, accept rate: 0.8, cuda graph: True, gen throughput (token/s): 1000.00, #queue-req: 0, \n",
			i/60%60, i%60, i%2, i%2, sum/40)
	}
	p := filepath.Join(t.TempDir(), "sim.log")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAgreement(t *testing.T) {
	// match-expected at 3.39 with 4 tokens max: 3 w.p. 0.61, 4 w.p. 0.39.
	matchExpected := func(r *rand.Rand) float64 {
		if r.Float64() < 0.39 {
			return 4
		}
		return 3
	}
	// multinomial: N(3.39, 1) rounded and clamped to [1, 4]; its mean is
	// 3.240 (the notes' table), biased low.
	multinomial := func(r *rand.Rand) float64 {
		return math.Max(1, math.Min(4, math.Round(3.39+r.NormFloat64())))
	}
	col, err := ReadFiles([]string{simulatedLog(t, matchExpected, 300)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	sum := Summarize(col, 4)
	if a := sum.Agree(3.39); !a.Agrees {
		t.Errorf("match-expected at 3.39 judged %s", a.Verdict)
	}
	// stderr of the mean of 300 intervals of 40 Bernoulli(0.39) steps:
	// sqrt(0.39*0.61/40/300) = 0.00445; the empirical one should be close.
	if se := sum.AcceptLen.StdErr; se < 0.0035 || se > 0.0056 {
		t.Errorf("stderr %v, want about 0.00445", se)
	}
	if a := sum.Agree(3.49); a.Agrees {
		t.Errorf("3.39 run agrees with target 3.49: %s", a.Verdict)
	}
	col, err = ReadFiles([]string{simulatedLog(t, multinomial, 300)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	sum = Summarize(col, 4)
	if m := sum.AcceptLen.Mean; math.Abs(m-3.240) > 0.03 {
		t.Errorf("multinomial mean %v, want about 3.240", m)
	}
	if a := sum.Agree(3.39); a.Agrees {
		t.Errorf("multinomial run (mean %.3f) agrees with 3.39: %s", sum.AcceptLen.Mean, a.Verdict)
	}
	// too few samples: no verdict either way
	col, _ = ReadFiles([]string{"testdata/sglang_dp.log"}, 0)
	if a := Summarize(col, 1).Agree(3.39); a.Agrees || !strings.HasPrefix(a.Verdict, "too few") {
		t.Errorf("4 samples: %s", a.Verdict)
	}
}

func TestScanBounded(t *testing.T) {
	long := strings.Repeat("x", MaxLineBytes*3)
	in := long + "\nDecode batch, #running-req: 3, accept len: 2.00, gen throughput (token/s): 5.00\n" + long + "Decode batch, #running-req: 9\n" + "Decode batch, #running-req: 4"
	var got []Sample
	st, err := Scan(strings.NewReader(in), func(s Sample) error { got = append(got, s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	// line 1 long, line 2 decode, line 3 long (its decode text is past the
	// cap and is not parsed), line 4 decode without a newline at EOF
	if st.Lines != 4 || st.LongLines != 2 || len(got) != 2 || got[0].Line != 2 || got[0].Running != 3 || got[1].Line != 4 || got[1].Running != 4 {
		t.Errorf("stats %+v samples %+v", st, got)
	}
}

func FuzzParseLine(f *testing.F) {
	for _, p := range []string{"testdata/sglang_dp.log", "testdata/sglang_layouts.log", "testdata/vllm.log", "testdata/trtllm.log"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, line string) {
		s, ok := ParseLine(line)
		if !ok {
			return
		}
		for _, x := range []float64{s.AcceptLen, s.GenThroughput, s.Weight} {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("non-finite value in %+v", s)
			}
		}
		c := &Collection{}
		c.Add("f", s)
		sum := Summarize(c, 3)
		if sum.Samples != 1 {
			t.Fatalf("summary of one sample: %+v", sum)
		}
	})
}

func TestNonFiniteRejected(t *testing.T) {
	s, ok := ParseLine(`{"iterLatencyMS": 1e-320, "numActiveRequests": 3, "specDecodingStats": {"numAcceptedTokens": 1e308, "numRequestsWithDraftTokens": 1e308}}`)
	if !ok || s.Running != 3 {
		t.Fatalf("%+v", s)
	}
	if err := s.Check(0); err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("Check = %v, want the non-finite value reported", err)
	}
}

// Values no engine logs are data errors naming file and line (issue 14,
// item 1: accept len 1e20 overflowed the histogram's bin count and
// panicked in makeslice).
func TestReadFilesRejectsImpossibleValues(t *testing.T) {
	const ok = "Decode batch, #running-req: 4, accept len: 1.00, gen throughput (token/s): 100.00\n"
	for _, tc := range []struct {
		name, line string
		steps      int
		want       string
	}{
		{"huge accept len", "Decode batch, #running-req: 4, accept len: 1e20, gen throughput (token/s): 100.00", 0, "accept len 1e+20 outside [1, 65]"},
		{"below one", "Decode batch, #running-req: 4, accept len: 0.5", 0, "accept len 0.5 outside [1, 65]"},
		{"negative", "Decode batch, #running-req: 4, accept len: -3", 0, "accept len -3 outside"},
		{"beyond k+1 of --steps", "Decode batch, #running-req: 4, accept len: 4.5", 3, "outside [1, 4] (bonus token included; the run's draft length is 3)"},
		{"beyond the line's own k", "SpecDecoding metrics: Mean acceptance length: 3.5, Drafted: 20 tokens, Per-position acceptance rate: 0.9, 0.8", 0, "outside [1, 3]"},
		{"running overflows int", "Decode batch, #running-req: 1e20, accept len: 2", 0, "#running-req 1e+20 is not a count"},
		{"negative running", "Decode batch, #running-req: -1, accept len: 2", 0, "#running-req -1 is not a count"},
		{"negative throughput", "Decode batch, #running-req: 1, gen throughput (token/s): -5", 0, "generation throughput -5"},
		{"absurd throughput", "Decode batch, #running-req: 1, gen throughput (token/s): 1e300", 0, "generation throughput 1e+300"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "decode.log")
			if err := os.WriteFile(p, []byte(ok+tc.line+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadFiles([]string{p}, tc.steps)
			if err == nil || !strings.Contains(err.Error(), p+": line 2: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadFiles = %v, want %q at %s: line 2", err, tc.want, p)
			}
		})
	}
	// in range at the edges: 1 and k+1
	p := filepath.Join(t.TempDir(), "decode.log")
	if err := os.WriteFile(p, []byte(ok+"Decode batch, #running-req: 4, accept len: 4.00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFiles([]string{p}, 3); err != nil {
		t.Errorf("accept len 1 and 4 at k=3: %v", err)
	}
}

// Add takes samples Check has not seen; the histogram must stay bounded.
func TestDistributionWideSpan(t *testing.T) {
	d := distribution([]float64{1, 1e20, -1e300}, []float64{1, 1, 1})
	if len(d.Histogram) != 200 {
		t.Fatalf("%d bins, want the cap of 200", len(d.Histogram))
	}
	n := 0
	for _, b := range d.Histogram {
		n += b.Count
	}
	if n != 3 {
		t.Errorf("%d values binned, want 3", n)
	}
}

// RunMeans gives a measured point the figures worked by hand in
// TestSummaryDPRanks: accept length 304/90, running 45 over both DP ranks.
func TestRunMeans(t *testing.T) {
	al, running, peak, err := RunMeans([]string{"testdata/sglang_dp.log"}, 0)
	// peak: DP0's lines report 0, 30, 30 running, DP1's 10, 20.
	if err != nil || math.Abs(al-304.0/90) > 1e-12 || running != 45 || peak != 30 {
		t.Errorf("RunMeans = %v, %v, %v, %v; want %v, 45, 30", al, running, peak, err, 304.0/90)
	}
	if _, _, _, err := RunMeans([]string{"testdata/../doc.go"}, 0); err == nil || !strings.Contains(err.Error(), "no decode statistics") {
		t.Errorf("a file without decode lines: err = %v", err)
	}
}

func TestYearlessStamps(t *testing.T) {
	col, err := ReadFiles([]string{"testdata/vllm.log"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// vllm.log stamps "07-01 12:00:00" and "07-01 12:00:10" (no year): the
	// run lasts 10 s, so two slices are [0,5) with engine 0 (24 running)
	// and [5,10] with engine 1 (8 running).
	sum := Summarize(col, 2)
	b := sum.Timeline
	if sum.TimeAxis != "seconds" || len(b) != 2 || b[1].EndS != 10 || b[0].EndS != 5 ||
		b[0].Running != 24 || b[1].Running != 8 {
		t.Fatalf("timeline %s %+v, want 10 s in two slices", sum.TimeAxis, b)
	}

	line := func(stamp string) string {
		return "[" + stamp + " TP0] Decode batch, #running-req: 8, #token: 1, token usage: 0.01, accept len: 3.00, gen throughput (token/s): 100.00, #queue-req: 0, \n"
	}
	for _, tt := range []struct {
		name   string
		stamps []string
		want   []string // RFC 3339 times given to the samples
	}{
		{"yearless past new year", []string{"12-31 23:59:50", "01-01 00:00:10"},
			[]string{"0000-12-31T23:59:50Z", "0001-01-01T00:00:10Z"}},
		{"month rollover", []string{"01-31 23:59:59", "02-01 00:00:01"},
			[]string{"0000-01-31T23:59:59Z", "0000-02-01T00:00:01Z"}},
		{"year from the stamp before", []string{"2025-12-31 23:59:59", "01-01 00:00:01", "01-01 00:00:02"},
			[]string{"2025-12-31T23:59:59Z", "2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z"}},
		{"stamps a little out of order stay in their year", []string{"2025-07-01 12:00:10", "07-01 12:00:05"},
			[]string{"2025-07-01T12:00:10Z", "2025-07-01T12:00:05Z"}},
	} {
		var in strings.Builder
		for _, s := range tt.stamps {
			in.WriteString(line(s))
		}
		var got []string
		if _, err := Scan(strings.NewReader(in.String()), func(s Sample) error {
			got = append(got, s.Time.Format(time.RFC3339))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: times %v, want %v", tt.name, got, tt.want)
		}
	}

	// A file with years and a file without cannot share a time axis.
	dir := t.TempDir()
	a, b2 := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log")
	os.WriteFile(a, []byte(line("2025-07-01 12:00:00")+line("2025-07-01 12:00:10")), 0o644)
	os.WriteFile(b2, []byte(line("07-01 12:00:00")), 0o644)
	col, err = ReadFiles([]string{a, b2}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if sum := Summarize(col, 2); sum.TimeAxis != "samples" {
		t.Errorf("mixed files: axis %s, want samples", sum.TimeAxis)
	}
}

// Two engines' logs are not one run: refused, naming both files.
func TestReadFilesRefusesTwoEngines(t *testing.T) {
	_, err := ReadFiles([]string{"testdata/vllm.log", "testdata/trtllm.log"}, 0)
	if err == nil || !strings.Contains(err.Error(), "testdata/vllm.log holds vllm decode lines but testdata/trtllm.log holds trtllm ones") {
		t.Errorf("err = %v", err)
	}
}

// The sample cap is said in numbers a reader reads, not a Go identifier.
func TestTooManySamplesMessage(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {250000, "250,000"}, {1234567, "1,234,567"}} {
		if got := thousands(c.n); got != c.want {
			t.Errorf("thousands(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if msg := ErrTooManySamples.Error(); strings.Contains(msg, "MaxSamples") || !strings.Contains(msg, "more than 250,000 decode-statistics lines") {
		t.Errorf("message %q", msg)
	}
}

// A log longer than the cap stops at the line past it, having kept no
// more than MaxSamples samples.
func TestReadStopsAtMaxSamples(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 250,001 lines")
	}
	line := "[2026-07-01 12:00:20 TP0] Decode batch, #running-req: 3, accept len: 2.00, gen throughput (token/s): 10.00, #queue-req: 0\n"
	c := &Collection{index: map[[2]string]*Stream{}}
	err := c.readFrom("big.log", strings.NewReader(strings.Repeat(line, MaxSamples+1)))
	if !errors.Is(err, ErrTooManySamples) || !strings.Contains(err.Error(), fmt.Sprintf("big.log: line %d: more than 250,000", MaxSamples+1)) || c.Stats.Samples != MaxSamples {
		t.Errorf("err %v after %d samples", err, c.Stats.Samples)
	}
}
