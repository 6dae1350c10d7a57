package enginelog

import (
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/specsim/specsim/internal/quantile"
	"github.com/specsim/specsim/internal/regular"
)

// Stream is the samples of one rank of one file, in log order.
type Stream struct {
	File    string
	Rank    string
	Engine  string
	Samples []Sample
}

// Collection gathers samples from several files.
type Collection struct {
	Streams []*Stream
	Files   []string
	Stats   ScanStats
	index   map[[2]string]*Stream
	// lastVLLM is the engine a file's last vLLM throughput line named:
	// vLLM logs the SpecDecoding line right after it, without the prefix.
	lastVLLM map[string]string
	steps    int
	opened   map[string]os.FileInfo // file -> what ReadFiles opened
}

// ReadFiles scans every file into one collection, keyed by file and rank.
// steps is the draft length the run used, when the caller knows it (0
// otherwise): a logged accept length beyond steps+1 is then an error. Every
// value no engine can log (see Sample.Check) is an error naming the file and
// line.
func ReadFiles(paths []string, steps int) (*Collection, error) {
	c := &Collection{index: map[[2]string]*Stream{}, steps: steps}
	for _, p := range paths {
		if err := c.readFile(p); err != nil {
			return nil, err
		}
	}
	return c, c.oneEngine()
}

// oneEngine refuses a collection whose streams come from several engines:
// one run is served by one engine, and the summary adds its ranks'
// throughputs and running batches, which across engines means nothing.
func (c *Collection) oneEngine() error {
	var first *Stream
	for _, st := range c.Streams {
		if first == nil {
			first = st
		} else if st.Engine != first.Engine {
			return fmt.Errorf("%s holds %s decode lines but %s holds %s ones: one run's logs come from one engine; read each engine's logs on its own", first.File, first.Engine, st.File, st.Engine)
		}
	}
	return nil
}

func (c *Collection) readFile(path string) error {
	f, info, err := regular.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// One file read twice (named twice, or through a link) would count
	// its samples twice: a doubled throughput, a halved stderr.
	for _, prev := range c.Files {
		if os.SameFile(c.opened[prev], info) {
			return fmt.Errorf("%s: the same file as %s, given twice: its samples would count twice", path, prev)
		}
	}
	if c.opened == nil {
		c.opened = map[string]os.FileInfo{}
	}
	c.opened[path] = info
	return c.readFrom(path, f)
}

func (c *Collection) readFrom(path string, r io.Reader) error {
	c.Files = append(c.Files, path)
	st, err := Scan(r, func(s Sample) error {
		if err := s.Check(c.steps); err != nil {
			return err
		}
		if c.Stats.Samples >= MaxSamples {
			return ErrTooManySamples
		}
		c.Stats.Samples++
		c.add(path, s)
		return nil
	})
	c.Stats.Lines += st.Lines
	c.Stats.LongLines += st.LongLines
	if err != nil {
		return fmt.Errorf("%s: line %d: %w", path, st.Lines, err)
	}
	return nil
}

// Add puts one sample into the collection (for callers that parse lines
// themselves).
func (c *Collection) Add(file string, s Sample) {
	if c.index == nil {
		c.index = map[[2]string]*Stream{}
	}
	c.Stats.Samples++
	c.add(file, s)
}

func (c *Collection) add(file string, s Sample) {
	if s.Engine == EngineVLLM {
		if c.lastVLLM == nil {
			c.lastVLLM = map[string]string{}
		}
		if s.Rank != "" {
			c.lastVLLM[file] = s.Rank
		} else {
			s.Rank = c.lastVLLM[file]
		}
	}
	key := [2]string{file, s.Rank}
	st := c.index[key]
	if st == nil {
		st = &Stream{File: file, Rank: s.Rank, Engine: s.Engine}
		c.index[key] = st
		c.Streams = append(c.Streams, st)
	}
	st.Samples = append(st.Samples, s)
}

// Distribution describes the logged accept lengths. Each logged value is
// already a mean over one logging interval.
type Distribution struct {
	Samples int `json:"samples"`
	// Mean weights each interval by the verify steps behind it where the
	// log gives them (see Sample.Weight), else equally.
	Mean           float64 `json:"mean"`
	UnweightedMean float64 `json:"unweighted_mean"`
	StdDev         float64 `json:"stddev"`
	// StdErr is the standard error of Mean from the spread of the
	// interval means (weighted): how far Mean may sit from the engine's
	// long-run mean by chance.
	StdErr    float64 `json:"stderr"`
	Min       float64 `json:"min"`
	P10       float64 `json:"p10"`
	P50       float64 `json:"p50"`
	P90       float64 `json:"p90"`
	Max       float64 `json:"max"`
	Histogram []Bin   `json:"histogram"`
}

// Bin is one histogram bin [Lo, Hi).
type Bin struct {
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Count int     `json:"count"`
}

// RankSummary is one rank's averages.
type RankSummary struct {
	File              string  `json:"file"`
	Rank              string  `json:"rank"`
	Engine            string  `json:"engine"`
	Samples           int     `json:"samples"`
	MeanAcceptLen     float64 `json:"mean_accept_len"`
	MeanGenThroughput float64 `json:"mean_gen_throughput_tok_s"`
	MeanRunning       float64 `json:"mean_running_req"`
	MaxRunning        int     `json:"max_running_req"`
}

// Bucket is one slice of the run: values summed over ranks of each rank's
// mean inside the slice.
type Bucket struct {
	StartS        float64 `json:"start_s"`
	EndS          float64 `json:"end_s"`
	Running       float64 `json:"running_req"`
	GenThroughput float64 `json:"gen_throughput_tok_s"`
	AcceptLen     float64 `json:"accept_len"`
	Samples       int     `json:"samples"`
}

// Agreement says whether the measured mean fits a simulated target.
type Agreement struct {
	Target    float64 `json:"target_al"`
	Measured  float64 `json:"measured_al"`
	Diff      float64 `json:"diff"`
	StdErr    float64 `json:"stderr"`
	Tolerance float64 `json:"tolerance"`
	Agrees    bool    `json:"agrees"`
	// Judged is false when the logs hold too few accept-length samples to
	// judge: then Agrees is false and means nothing.
	Judged  bool   `json:"judged"`
	Verdict string `json:"verdict"`
}

// Disagrees reports whether a target was compared with enough samples and
// the measured mean does not fit it (what makes "specsim logs" exit 1).
func (s *Summary) Disagrees() bool {
	return s.Target != nil && s.Target.Judged && !s.Target.Agrees
}

// Summary is what a set of logs says about a run.
type Summary struct {
	Files     []string      `json:"files"`
	Lines     int           `json:"lines"`
	Samples   int           `json:"samples"`
	LongLines int           `json:"long_lines_skipped"`
	Engines   []string      `json:"engines"`
	Ranks     []RankSummary `json:"ranks"`
	AcceptLen *Distribution `json:"accept_len"`
	// GenThroughput sums each rank's mean: with DP attention every DP
	// rank logs its own scheduler's throughput.
	GenThroughput float64    `json:"gen_throughput_tok_s"`
	MeanRunning   float64    `json:"running_req"`
	TimeAxis      string     `json:"time_axis"` // "seconds" from the first timestamp, or "samples"
	Timeline      []Bucket   `json:"timeline"`
	Target        *Agreement `json:"target,omitempty"`
	// Warnings say what makes the timeline misleading (timelineGap).
	Warnings []string `json:"warnings,omitempty"`
}

// gapFactor is how many median sample intervals a silence between two
// stamps may last before the timeline is said to join separate runs.
const gapFactor = 100

// timelineGap warns when the longest silence between consecutive stamps
// (over all files and ranks) exceeds gapFactor times the median interval
// between a rank's consecutive samples: logs of separate runs, or stamps of
// different years, stretch the timeline into mostly empty slices. It names
// the samples on both sides of the silence.
func timelineGap(c *Collection, tl []Bucket) string {
	type stamp struct {
		t    time.Time
		file string
		line int
	}
	var all []stamp
	var intervals []float64
	for _, st := range c.Streams {
		var prev time.Time
		for i, s := range st.Samples {
			if !s.HasTime {
				continue
			}
			all = append(all, stamp{s.Time, st.File, s.Line})
			if i > 0 && !prev.IsZero() {
				if d := s.Time.Sub(prev).Seconds(); d > 0 {
					intervals = append(intervals, d)
				}
			}
			prev = s.Time
		}
	}
	if len(intervals) == 0 || len(all) < 2 {
		return ""
	}
	sort.Float64s(intervals)
	med := intervals[len(intervals)/2]
	if len(intervals)%2 == 0 {
		med = (intervals[len(intervals)/2-1] + med) / 2
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].t.Before(all[j].t) })
	gi, gap := 0, 0.0
	for i := 1; i < len(all); i++ {
		if d := all[i].t.Sub(all[i-1].t).Seconds(); d > gap {
			gi, gap = i, d
		}
	}
	if gap <= gapFactor*med {
		return ""
	}
	empty := 0
	for _, b := range tl {
		if b.Samples == 0 {
			empty++
		}
	}
	a, b := all[gi-1], all[gi]
	return fmt.Sprintf("the stamps jump %s (%.0f s) from %s:%d (%s) to %s:%d (%s), %.0fx the median %s between a rank's samples; %d of %d timeline slices are empty (logs of separate runs, or stamps of different years?)",
		time.Duration(gap*float64(time.Second)).Round(time.Second), gap, a.file, a.line, a.t.Format(time.DateTime), b.file, b.line, b.t.Format(time.DateTime),
		gap/med, time.Duration(med*float64(time.Second)), empty, len(tl))
}

// Tolerance terms for Agree. Logged accept lengths carry two decimals, and
// SGLang's logged value reads slightly below the simulated one because
// requests that finish mid-chain cut their accepted drafts short; the
// allowance covers both.
const (
	agreeSigmas    = 3.0
	agreeAllowance = 0.02
	minAgreeSample = 5
)

// RunMeans reads the logs of one run (steps is its draft length, 0 if
// unknown) and returns what a measured point takes from them: the
// interval-weighted mean accept length (0 when the logs report none) and
// the mean running batch summed over DP ranks, and the most requests one
// rank's line reports running (peak). Logs without a decode statistics
// line are an error.
func RunMeans(paths []string, steps int) (acceptLen, running float64, peak int, err error) {
	col, err := ReadFiles(paths, steps)
	if err != nil {
		return 0, 0, 0, err
	}
	sum := Summarize(col, 1)
	if sum.Samples == 0 {
		return 0, 0, 0, fmt.Errorf("%s: no decode statistics line", strings.Join(paths, ","))
	}
	if sum.AcceptLen != nil && sum.AcceptLen.Mean > 0 {
		acceptLen = sum.AcceptLen.Mean
	}
	for _, r := range sum.Ranks {
		peak = max(peak, r.MaxRunning)
	}
	return acceptLen, max(sum.MeanRunning, 0), peak, nil
}

// Summarize reduces a collection. buckets is the number of timeline
// slices (at least 1).
func Summarize(c *Collection, buckets int) *Summary {
	if buckets < 1 {
		buckets = 1
	}
	sum := &Summary{Files: c.Files, Lines: c.Stats.Lines, Samples: c.Stats.Samples, LongLines: c.Stats.LongLines,
		Ranks: []RankSummary{}, Timeline: []Bucket{}, Engines: []string{}}
	engines := map[string]bool{}
	var als, ws []float64
	for _, st := range c.Streams {
		engines[st.Engine] = true
		rs := RankSummary{File: st.File, Rank: st.Rank, Engine: st.Engine, Samples: len(st.Samples)}
		var a, aw, t, tn, r, rn float64
		for _, s := range st.Samples {
			if s.HasAccept {
				w := s.Weight
				if w <= 0 {
					w = 1
				}
				a += w * s.AcceptLen
				aw += w
				als = append(als, s.AcceptLen)
				ws = append(ws, s.Weight)
			}
			if s.HasThroughput {
				t += s.GenThroughput
				tn++
			}
			if s.HasRunning {
				r += float64(s.Running)
				rn++
				rs.MaxRunning = max(rs.MaxRunning, s.Running)
			}
		}
		if aw > 0 {
			rs.MeanAcceptLen = a / aw
		}
		if tn > 0 {
			rs.MeanGenThroughput = t / tn
			sum.GenThroughput += rs.MeanGenThroughput
		}
		if rn > 0 {
			rs.MeanRunning = r / rn
			sum.MeanRunning += rs.MeanRunning
		}
		sum.Ranks = append(sum.Ranks, rs)
	}
	for e := range engines {
		sum.Engines = append(sum.Engines, e)
	}
	sort.Strings(sum.Engines)
	sum.AcceptLen = distribution(als, ws)
	sum.TimeAxis, sum.Timeline = timeline(c, buckets)
	if sum.TimeAxis == "seconds" {
		if w := timelineGap(c, sum.Timeline); w != "" {
			sum.Warnings = append(sum.Warnings, w)
		}
	}
	return sum
}

// distribution summarises interval means; weights <= 0 count as 1, and if
// any weight is missing all count equally so that proxies are not mixed.
func distribution(x, w []float64) *Distribution {
	if len(x) == 0 {
		return nil
	}
	d := &Distribution{Samples: len(x)}
	weights := make([]float64, len(x))
	uniform := false
	for _, wi := range w {
		if wi <= 0 {
			uniform = true
		}
	}
	var sw, swx, sx float64
	for i, xi := range x {
		weights[i] = 1
		if !uniform {
			weights[i] = w[i]
		}
		sw += weights[i]
		swx += weights[i] * xi
		sx += xi
	}
	d.Mean = swx / sw
	d.UnweightedMean = sx / float64(len(x))
	var ss, sw2 float64
	for i, xi := range x {
		ss += weights[i] * (xi - d.Mean) * (xi - d.Mean)
		sw2 += weights[i] * weights[i] * (xi - d.Mean) * (xi - d.Mean)
	}
	if len(x) > 1 {
		n := float64(len(x))
		d.StdDev = math.Sqrt(ss / sw * n / (n - 1))
		// variance of a weighted mean of independent intervals
		d.StdErr = math.Sqrt(sw2*n/(n-1)) / sw
	}
	sorted := append([]float64(nil), x...)
	sort.Float64s(sorted)
	q := func(p float64) float64 { return quantile.Sorted(sorted, p) }
	d.Min, d.Max = sorted[0], sorted[len(sorted)-1]
	d.P10, d.P50, d.P90 = q(0.1), q(0.5), q(0.9)
	// 0.1-wide bins on the 0.1 grid cover the span, at most 200 of them
	// (values past the last bin land in it). The span is bounded before the
	// conversion to int: Add takes samples that Check has not seen.
	lo := math.Floor(d.Min*10) / 10
	nb := 200
	if span := math.Floor((d.Max-lo)*10 + 1e-9); span < 199 {
		nb = int(span) + 1
	}
	d.Histogram = make([]Bin, nb)
	for i := range d.Histogram {
		d.Histogram[i] = Bin{Lo: round6(lo + float64(i)*0.1), Hi: round6(lo + float64(i+1)*0.1)}
	}
	for _, xi := range x {
		i := nb - 1
		if f := math.Floor((xi-lo)*10 + 1e-9); f < float64(nb-1) {
			i = max(0, int(f))
		}
		d.Histogram[i].Count++
	}
	return d
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// timeline slices the run into equal parts of time (when every sample has
// a timestamp) or of each stream's sample index.
func timeline(c *Collection, n int) (string, []Bucket) {
	var t0, t1 time.Time
	timed, seen := true, false
	var dated, undated bool // stamps with a year, stamps counted from year 0
	total := 0
	for _, st := range c.Streams {
		for _, s := range st.Samples {
			total++
			if !s.HasTime {
				timed = false
				continue
			}
			if s.noYear {
				undated = true
			} else {
				dated = true
			}
			if !seen || s.Time.Before(t0) {
				t0 = s.Time
			}
			if !seen || s.Time.After(t1) {
				t1 = s.Time
			}
			seen = true
		}
	}
	if total == 0 {
		return "samples", []Bucket{}
	}
	span := t1.Sub(t0).Seconds()
	// Files whose stamps name no year cannot be placed against files whose
	// stamps do: the run is sliced by sample index instead.
	if !timed || span <= 0 || (dated && undated) {
		timed = false
	}
	axis := "samples"
	if timed {
		axis = "seconds"
	}
	type acc struct{ r, rn, t, tn, a, aw float64 }
	buckets := make([]Bucket, n)
	aSum, aW := make([]float64, n), make([]float64, n)
	for i := range buckets {
		if timed {
			buckets[i].StartS, buckets[i].EndS = span*float64(i)/float64(n), span*float64(i+1)/float64(n)
		} else {
			buckets[i].StartS, buckets[i].EndS = float64(i)/float64(n), float64(i+1)/float64(n)
		}
	}
	for _, st := range c.Streams {
		per := make([]acc, n)
		for j, s := range st.Samples {
			var f float64
			if timed {
				f = s.Time.Sub(t0).Seconds() / span
			} else {
				f = float64(j) / float64(len(st.Samples))
			}
			i := max(0, min(int(f*float64(n)), n-1))
			buckets[i].Samples++
			p := &per[i]
			if s.HasRunning {
				p.r += float64(s.Running)
				p.rn++
			}
			if s.HasThroughput {
				p.t += s.GenThroughput
				p.tn++
			}
			if s.HasAccept {
				w := 1.0
				if s.Weight > 0 {
					w = s.Weight
				}
				p.a += w * s.AcceptLen
				p.aw += w
			}
		}
		for i, p := range per {
			if p.rn > 0 {
				buckets[i].Running += p.r / p.rn
			}
			if p.tn > 0 {
				buckets[i].GenThroughput += p.t / p.tn
			}
			// accept length is averaged across ranks, not summed
			aSum[i] += p.a
			aW[i] += p.aw
		}
	}
	for i := range buckets {
		if aW[i] > 0 {
			buckets[i].AcceptLen = aSum[i] / aW[i]
		}
	}
	return axis, buckets
}

// Agree compares the measured mean accept length with a target AL. The
// tolerance is three standard errors of the measured mean plus a fixed
// allowance for two-decimal logging and SGLang's slight low bias.
func (s *Summary) Agree(target float64) *Agreement {
	a := &Agreement{Target: target}
	s.Target = a
	d := s.AcceptLen
	if d == nil {
		a.Verdict = "no accept-length samples in the logs"
		return a
	}
	a.Measured, a.StdErr = d.Mean, d.StdErr
	a.Diff = d.Mean - target
	a.Tolerance = agreeSigmas*d.StdErr + agreeAllowance
	if d.Samples < minAgreeSample {
		a.Verdict = fmt.Sprintf("too few samples (%d < %d) to judge", d.Samples, minAgreeSample)
		return a
	}
	a.Judged = true
	a.Agrees = math.Abs(a.Diff) <= a.Tolerance
	if a.Agrees {
		a.Verdict = fmt.Sprintf("agrees: |%.3f - %.3f| = %.3f <= %.3f (3 x stderr %.4f + %.2f)", d.Mean, target, math.Abs(a.Diff), a.Tolerance, d.StdErr, agreeAllowance)
	} else {
		a.Verdict = fmt.Sprintf("disagrees: |%.3f - %.3f| = %.3f > %.3f (3 x stderr %.4f + %.2f)", d.Mean, target, math.Abs(a.Diff), a.Tolerance, d.StdErr, agreeAllowance)
	}
	return a
}
