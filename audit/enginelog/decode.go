package enginelog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Limits on reading.
const (
	// MaxLineBytes is the longest line parsed; longer lines (argument
	// dumps, tracebacks) are skipped whole and counted.
	MaxLineBytes = 64 << 10
	// MaxSamples caps the samples kept from all files together: a sample
	// is 160 bytes, and slice growth and the collector take the process to
	// some 0.6 KB per sample (measured: 560 MB resident at 900,000), so the
	// cap holds a read under about 150 MB. An hour of SGLang decode logging
	// on 8 ranks at the default interval of 40 iterations is tens of
	// thousands of samples.
	MaxSamples = 250_000
	// MaxDraftTokens bounds the draft length a log can imply when neither
	// the log nor the caller names it: an accept length above
	// MaxDraftTokens+1 is a data error.
	MaxDraftTokens = 64
	// MaxRunning bounds a logged running- or queued-request count.
	MaxRunning = 1 << 24
	// MaxThroughput bounds a logged generation throughput, tokens/s.
	MaxThroughput = 1e9
)

// Engines that write the lines this package reads.
const (
	EngineSGLang = "sglang"
	EngineVLLM   = "vllm"
	EngineTRTLLM = "trtllm"
)

// Sample is one decode-statistics record.
type Sample struct {
	Engine string
	Line   int    // 1-based line number in its file
	Rank   string // "DP3", "TP0", "engine 0", "rank 2"; "" when the log names none

	// Time is zero when the line has no timestamp. A stamp without a year
	// (SGLang's "07-01 12:00:05", vLLM's "INFO 07-01 12:00:00") takes the
	// year of the file's previous stamp, plus one when the date steps back
	// by over half a year (a log running past 31 December); when no stamp
	// before it in the file names a year, the count starts at year 0.
	Time    time.Time
	HasTime bool
	noYear  bool // the stamp names no year; after Scan: nor did any before it in its file

	Running    int
	HasRunning bool
	Queue      int

	// AcceptLen is the mean accepted length per verify step over the
	// logging interval, bonus token included.
	AcceptLen float64
	HasAccept bool
	// Weight is how many verify steps AcceptLen averages, where the log
	// says: vLLM and TensorRT-LLM give draft counts; SGLang gives only the
	// running requests at the moment of logging, used as a proxy.
	Weight float64

	// GenThroughput is this rank's generation throughput in tokens/s.
	GenThroughput float64
	HasThroughput bool

	// Drafts is the draft length k where the line names it (vLLM's
	// per-position list); 0 when it does not.
	Drafts int

	// invalid says what is wrong with a value the line carries (a count
	// beyond MaxRunning, a non-finite derived AL); Check reports it.
	invalid string
}

// Check reports a value that no engine can log: an accept length outside
// [1, k+1] (k is the line's own draft length, else steps when > 0, else
// MaxDraftTokens), a negative or absurd request count or throughput, or a
// non-finite value.
func (s Sample) Check(steps int) error {
	if s.invalid != "" {
		return errors.New(s.invalid)
	}
	if s.HasAccept {
		k, why := MaxDraftTokens, fmt.Sprintf("no engine drafts more than %d tokens", MaxDraftTokens)
		switch {
		case s.Drafts > 0:
			k, why = s.Drafts, fmt.Sprintf("the line lists %d draft positions", s.Drafts)
		case steps > 0:
			k, why = steps, fmt.Sprintf("the run's draft length is %d", steps)
		}
		if !(s.AcceptLen >= 1 && s.AcceptLen <= float64(k+1)) {
			return fmt.Errorf("accept len %g outside [1, %d] (bonus token included; %s)", s.AcceptLen, k+1, why)
		}
		if !(s.Weight >= 0 && s.Weight <= math.MaxFloat64) {
			return fmt.Errorf("accept-length weight %g is not a finite count", s.Weight)
		}
	}
	if s.HasThroughput && !(s.GenThroughput >= 0 && s.GenThroughput <= MaxThroughput) {
		return fmt.Errorf("generation throughput %g tok/s outside [0, %g]", s.GenThroughput, MaxThroughput)
	}
	if s.HasRunning && (s.Running < 0 || s.Running > MaxRunning) {
		return fmt.Errorf("running requests %d outside [0, %d]", s.Running, MaxRunning)
	}
	return nil
}

// count converts a logged request count, marking the sample invalid when it
// is negative, fractional or beyond MaxRunning (int of a float that large is
// undefined).
func (s *Sample) count(what string, f float64) int {
	if !(f >= 0 && f <= MaxRunning) || f != math.Trunc(f) {
		if s.invalid == "" {
			s.invalid = fmt.Sprintf("%s %g is not a count in [0, %d]", what, f, MaxRunning)
		}
		return 0
	}
	return int(f)
}

var (
	ansiEscape = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
	// 2026-07-01 12:00:00[.123] or 07-01 12:00:00 (newest SGLang, vLLM)
	timestamp = regexp.MustCompile(`(?:(\d{4})-)?(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?`)
	// scheduler prefix parts: DP3, PP0, TP12, EP3, ATTN_CP0, MOE_DP1
	rankToken  = regexp.MustCompile(`\b(DP|PP|TP|EP|ATTN_CP|MOE_DP)(\d+)\b`)
	vllmEngine = regexp.MustCompile(`Engine (\d+):`)
	trtRank    = regexp.MustCompile(`\[RANK (\d+)\]`)
)

// ParseLine parses one log line. ok is false for lines that carry no
// decode statistics.
func ParseLine(line string) (Sample, bool) {
	s, ok := parseLine(line)
	if !ok {
		return s, false
	}
	// Values computed from logged counts can overflow: Check reports them.
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if s.invalid == "" && (!finite(s.AcceptLen) || !finite(s.Weight) || !finite(s.GenThroughput)) {
		s.invalid = "a value derived from the logged counts is not finite"
	}
	return s, s.HasAccept || s.HasThroughput || s.HasRunning
}

func parseLine(line string) (s Sample, ok bool) {
	if strings.IndexByte(line, 0x1b) >= 0 {
		line = ansiEscape.ReplaceAllString(line, "")
	}
	switch {
	case strings.Contains(line, "Decode batch"):
		return parseSGLang(line)
	case strings.Contains(line, "SpecDecoding metrics:"):
		return parseVLLMSpec(line)
	case strings.Contains(line, "Avg generation throughput:"):
		return parseVLLMThroughput(line)
	case strings.Contains(line, `"specDecodingStats"`):
		return parseTRTStats(line)
	case strings.Contains(line, "iter = ") && strings.Contains(line, "num_scheduled_requests"):
		return parseTRTIter(line)
	}
	return Sample{}, false
}

// pairs splits "k1: v1, k2: v2, ..." into ordered key/value pairs. A piece
// without ": " continues the previous value (vLLM's per-position list
// "0.9, 0.7, 0.5").
func pairs(s string) [][2]string {
	var out [][2]string
	for _, piece := range strings.Split(s, ", ") {
		piece = strings.TrimSpace(piece)
		if piece == "" {
			continue
		}
		k, v, found := strings.Cut(piece, ": ")
		if !found {
			if kk, ok := strings.CutSuffix(piece, ":"); ok {
				out = append(out, [2]string{strings.TrimSpace(kk), ""})
				continue
			}
			if n := len(out); n > 0 {
				out[n-1][1] += ", " + piece
			}
			continue
		}
		out = append(out, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out
}

// number parses the leading number of a value such as "1234.56",
// "61.0%", "12.3 tokens/s" or "5 reqs".
func number(v string) (float64, bool) {
	v = strings.TrimSpace(v)
	end := 0
	for end < len(v) && (v[end] == '-' || v[end] == '+' || v[end] == '.' || v[end] == 'e' || v[end] == 'E' || (v[end] >= '0' && v[end] <= '9')) {
		end++
	}
	if end == 0 {
		return 0, false
	}
	f, err := strconv.ParseFloat(v[:end], 64)
	if err != nil || f != f {
		return 0, false
	}
	return f, true
}

func parseTime(s *Sample, prefix string) {
	m := timestamp.FindStringSubmatch(prefix)
	if m == nil {
		return
	}
	atoi := func(x string) int { n, _ := strconv.Atoi(x); return n }
	ns := 0
	if m[7] != "" {
		frac := (m[7] + "000000000")[:9]
		ns = atoi(frac)
	}
	month, day := atoi(m[2]), atoi(m[3])
	if month < 1 || month > 12 || day < 1 || day > 31 {
		return
	}
	s.Time = time.Date(atoi(m[1]), time.Month(month), day, atoi(m[4]), atoi(m[5]), atoi(m[6]), ns, time.UTC)
	s.HasTime = true
	s.noYear = m[1] == ""
}

// yearClock gives yearless stamps the year of the file's stamps before
// them (see Sample.Time).
type yearClock struct {
	prev  time.Time
	have  bool
	known bool // some stamp so far named its year
}

// place sets the year of a yearless stamp and reports whether that year is
// only counted from the file's first stamp (no stamp before it named one).
func (c *yearClock) place(s *Sample) (guessed bool) {
	if !s.HasTime {
		return false
	}
	if !s.noYear {
		c.prev, c.have, c.known = s.Time, true, true
		return false
	}
	year := 0
	if c.have {
		year = c.prev.Year()
	}
	t := s.Time.AddDate(year-s.Time.Year(), 0, 0)
	if c.have && c.prev.Sub(t) > 183*24*time.Hour {
		t = t.AddDate(1, 0, 0)
	}
	s.Time, c.prev, c.have = t, t, true
	return !c.known
}

// parseSGLang reads "[time DPx TPy] Decode batch[ [iter]], k: v, ...".
// Every layout the versions used separates fields with ", " and keys from
// values with ": ", so the pairs are read whatever their order and set.
func parseSGLang(line string) (Sample, bool) {
	i := strings.Index(line, "Decode batch")
	prefix, rest := line[:i], line[i+len("Decode batch"):]
	// skip "." (v0.4), " [123]" (SGLANG_LOG_FORWARD_ITERS), then ", "
	rest = strings.TrimLeft(rest, ".")
	if strings.HasPrefix(rest, " [") {
		if j := strings.IndexByte(rest, ']'); j > 0 {
			rest = rest[j+1:]
		}
	}
	rest = strings.TrimPrefix(strings.TrimLeft(rest, ","), " ")
	s := Sample{Engine: EngineSGLang}
	parseTime(&s, prefix)
	var dp, pp, tp string
	for _, m := range rankToken.FindAllStringSubmatch(prefix, -1) {
		switch m[1] {
		case "DP":
			dp = m[0]
		case "PP":
			pp = m[0]
		case "TP":
			tp = m[0]
		}
	}
	switch {
	case dp != "":
		s.Rank = strings.TrimSpace(dp + " " + pp)
	case pp != "" || tp != "":
		s.Rank = strings.TrimSpace(pp + " " + tp)
	}
	found := false
	for _, kv := range pairs(rest) {
		k, v := kv[0], kv[1]
		switch k {
		case "#running-req":
			if f, ok := number(v); ok {
				s.Running, s.HasRunning, found = s.count("#running-req", f), true, true
			}
		case "#queue-req":
			if f, ok := number(v); ok {
				s.Queue = s.count("#queue-req", f)
			}
		case "accept len":
			if f, ok := number(v); ok {
				s.AcceptLen, s.HasAccept, found = f, true, true
			}
		case "gen throughput (token/s)":
			if f, ok := number(v); ok {
				s.GenThroughput, s.HasThroughput, found = f, true, true
			}
		}
	}
	if s.HasAccept && s.HasRunning {
		s.Weight = float64(s.Running)
	}
	return s, found
}

func vllmPrefix(s *Sample, line, marker string) string {
	i := strings.Index(line, marker)
	prefix := line[:i]
	parseTime(s, prefix)
	if m := vllmEngine.FindStringSubmatch(prefix); m != nil {
		n, _ := strconv.Atoi(m[1])
		s.Rank = fmt.Sprintf("engine %d", n)
	}
	return line[i+len(marker):]
}

// parseVLLMSpec reads "SpecDecoding metrics: Mean acceptance length: 2.85,
// Accepted throughput: ..., Drafted throughput: ..., Accepted: N tokens,
// Drafted: M tokens, Per-position acceptance rate: a, b, c, Avg Draft
// acceptance rate: x%". The number of positions is the draft length k, so
// the interval's verify steps are Drafted / k.
func parseVLLMSpec(line string) (Sample, bool) {
	s := Sample{Engine: EngineVLLM}
	rest := vllmPrefix(&s, line, "SpecDecoding metrics:")
	var drafted float64
	positions := 0
	for _, kv := range pairs(rest) {
		switch kv[0] {
		case "Mean acceptance length":
			if f, ok := number(kv[1]); ok {
				s.AcceptLen, s.HasAccept = f, true
			}
		case "Drafted":
			drafted, _ = number(kv[1])
		case "Per-position acceptance rate":
			positions = len(strings.Split(kv[1], ","))
		}
	}
	if s.HasAccept && drafted > 0 && positions > 0 {
		s.Weight = drafted / float64(positions)
	}
	s.Drafts = positions
	return s, s.HasAccept
}

// parseVLLMThroughput reads "Engine 000: Avg prompt throughput: X tokens/s,
// Avg generation throughput: Y tokens/s, Running: N reqs, Waiting: M reqs, ...".
func parseVLLMThroughput(line string) (Sample, bool) {
	s := Sample{Engine: EngineVLLM}
	i := strings.Index(line, "Avg prompt throughput:")
	if i < 0 {
		i = strings.Index(line, "Avg generation throughput:")
	}
	prefix := line[:i]
	parseTime(&s, prefix)
	if m := vllmEngine.FindStringSubmatch(prefix); m != nil {
		n, _ := strconv.Atoi(m[1])
		s.Rank = fmt.Sprintf("engine %d", n)
	}
	for _, kv := range pairs(line[i:]) {
		switch kv[0] {
		case "Avg generation throughput":
			if f, ok := number(kv[1]); ok {
				s.GenThroughput, s.HasThroughput = f, true
			}
		case "Running":
			if f, ok := number(kv[1]); ok {
				s.Running, s.HasRunning = s.count("Running", f), true
			}
		case "Waiting":
			if f, ok := number(kv[1]); ok {
				s.Queue = s.count("Waiting", f)
			}
		}
	}
	return s, s.HasThroughput || s.HasRunning
}

// parseTRTStats reads a TensorRT-LLM iteration-stats JSON object (as
// /metrics returns and enable_iter_perf_stats logs it): specDecodingStats
// gives accepted drafts and the requests that drafted, so the AL of the
// iteration is (accepted + requests) / requests.
func parseTRTStats(line string) (Sample, bool) {
	s := Sample{Engine: EngineTRTLLM}
	i := strings.IndexByte(line, '{')
	if i < 0 {
		return s, false
	}
	parseTime(&s, line[:i])
	var st struct {
		Timestamp   string  `json:"timestamp"`
		IterLatency float64 `json:"iterLatencyMS"`
		Active      *int    `json:"numActiveRequests"`
		Inflight    *struct {
			Scheduled *int `json:"numScheduledRequests"`
		} `json:"inflightBatchingStats"`
		Spec *struct {
			Drafts   float64  `json:"numDraftTokens"`
			Accepted float64  `json:"numAcceptedTokens"`
			Requests float64  `json:"numRequestsWithDraftTokens"`
			AL       *float64 `json:"acceptanceLength"`
		} `json:"specDecodingStats"`
	}
	dec := json.NewDecoder(strings.NewReader(line[i:]))
	if err := dec.Decode(&st); err != nil {
		return s, false
	}
	if m := trtRank.FindStringSubmatch(line[:i]); m != nil {
		s.Rank = "rank " + m[1]
	}
	switch {
	case st.Inflight != nil && st.Inflight.Scheduled != nil:
		s.Running, s.HasRunning = *st.Inflight.Scheduled, true
	case st.Active != nil:
		s.Running, s.HasRunning = *st.Active, true
	}
	if sp := st.Spec; sp != nil && sp.Requests > 0 {
		s.AcceptLen, s.HasAccept = (sp.Accepted+sp.Requests)/sp.Requests, true
		s.Weight = sp.Requests
		if st.IterLatency > 0 {
			s.GenThroughput, s.HasThroughput = (sp.Accepted+sp.Requests)/(st.IterLatency/1000), true
		}
	}
	return s, s.HasAccept || s.HasRunning
}

// parseTRTIter reads a print_iter_log line: "[RANK r] iter = N, ...,
// num_scheduled_requests = R, ...". It carries no acceptance.
func parseTRTIter(line string) (Sample, bool) {
	s := Sample{Engine: EngineTRTLLM}
	parseTime(&s, line)
	if m := trtRank.FindStringSubmatch(line); m != nil {
		s.Rank = "rank " + m[1]
	}
	for _, piece := range strings.Split(line, ", ") {
		k, v, ok := strings.Cut(piece, " = ")
		if !ok {
			k, v, ok = strings.Cut(piece, ": ")
		}
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if k == "num_scheduled_requests" {
			if f, ok := number(v); ok {
				s.Running, s.HasRunning = s.count("num_scheduled_requests", f), true
			}
		}
	}
	return s, s.HasRunning
}

// ScanStats counts what a scan read.
type ScanStats struct {
	Lines     int
	Samples   int
	LongLines int // lines over MaxLineBytes, skipped
}

// ErrTooManySamples stops a scan that would keep more than MaxSamples.
var ErrTooManySamples = fmt.Errorf("more than %s decode-statistics lines in the logs given, the most one run reads (to bound memory); give a shorter stretch of the log, e.g. one split off with split -l", thousands(MaxSamples))

// thousands writes n with comma separators (250,000).
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Scan reads r line by line and calls fn for every sample. Lines longer
// than MaxLineBytes are skipped without being held in memory.
func Scan(r io.Reader, fn func(Sample) error) (ScanStats, error) {
	var st ScanStats
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	long := false
	var clock yearClock
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 && !long {
			if len(buf)+len(chunk) > MaxLineBytes+1 {
				long = true
				buf = buf[:0]
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(chunk) > 0 || len(buf) > 0 || long {
			st.Lines++
			if long {
				st.LongLines++
			} else if s, ok := ParseLine(strings.TrimRight(string(buf), "\r\n")); ok {
				s.Line = st.Lines
				s.noYear = clock.place(&s)
				// The rank is a substring of the line: copy it so that a kept
				// sample does not hold the whole line.
				s.Rank = strings.Clone(s.Rank)
				st.Samples++
				if st.Samples > MaxSamples {
					return st, ErrTooManySamples
				}
				if ferr := fn(s); ferr != nil {
					return st, ferr
				}
			}
		}
		buf, long = buf[:0], false
		if err != nil {
			if errors.Is(err, io.EOF) {
				return st, nil
			}
			return st, err
		}
	}
}
