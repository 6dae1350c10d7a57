package enginelog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// MaxLineBytes bounds one log line; longer lines are skipped, not buffered.
const MaxLineBytes = 1 << 20

// Load is one weight-loading line.
type Load struct {
	Engine string  // "sglang" or "vllm"
	Line   int     // 1-based line number
	Text   string  // the line, trimmed
	Type   string  // SGLang type= (model class), "" for vLLM
	Quant  string  // SGLang quant=, when logged
	GiB    float64 // weight memory: SGLang "mem usage" (its "GB" is GiB), vLLM "Model loading took"
	Avail  float64 // SGLang "avail mem" after loading, GiB; 0 if absent
	Rank   string  // SGLang bracket prefix ranks ("TP0", "DP0 TP0 EP0"), "" if absent
	// Draft marks the draft worker's load: an SGLang model class named like
	// a draft (MTP, NextN, Eagle), or the second load on the same rank.
	Draft bool
}

var (
	sglangLoad = regexp.MustCompile(`Load weight end\b.*?mem usage=\s*([0-9]+(?:\.[0-9]+)?)\s*GB`)
	sglangType = regexp.MustCompile(`\btype=([A-Za-z0-9_.]+)`)
	sglangQnt  = regexp.MustCompile(`\bquant=([A-Za-z0-9_.-]+)`)
	sglangAv   = regexp.MustCompile(`avail mem=\s*([0-9]+(?:\.[0-9]+)?)\s*GB`)
	sglangRank = regexp.MustCompile(`\[[^\]]*?((?:\b(?:DP|TP|EP|PP)[0-9]+\s*)+)\]`)
	vllmLoad   = regexp.MustCompile(`Model loading took\s+([0-9]+(?:\.[0-9]+)?)\s*GiB`)
	draftType  = regexp.MustCompile(`(?i)mtp|nextn|eagle|draft|medusa`)
)

// ParseLoad scans a log for SGLang "Load weight end ... mem usage=X GB" and
// vLLM "Model loading took X GiB" lines. Lines over MaxLineBytes are
// skipped. It returns an error only when reading fails.
func ParseLoad(r io.Reader) ([]Load, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var out []Load
	seen := map[string]int{}
	for n := 1; ; n++ {
		line, err := readLine(br)
		if line != "" {
			if l, ok := parseLoadLine(line); ok {
				l.Line = n
				if l.Engine == "sglang" {
					seen[l.Rank]++
					if seen[l.Rank] > 1 || draftType.MatchString(l.Type) {
						l.Draft = true
					}
				}
				out = append(out, l)
			}
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("line %d: %w", n, err)
		}
	}
}

// readLine returns one line without its newline, or "" for a line longer
// than MaxLineBytes (which it discards).
func readLine(br *bufio.Reader) (string, error) {
	var b []byte
	tooLong := false
	for {
		chunk, isPrefix, err := br.ReadLine()
		if !tooLong {
			b = append(b, chunk...)
			if len(b) > MaxLineBytes {
				tooLong, b = true, nil
			}
		}
		if err != nil || !isPrefix {
			if tooLong {
				return "", err
			}
			return string(b), err
		}
	}
}

func parseLoadLine(line string) (Load, bool) {
	if m := sglangLoad.FindStringSubmatch(line); m != nil {
		l := Load{Engine: "sglang", Text: strings.TrimSpace(line)}
		l.GiB, _ = strconv.ParseFloat(m[1], 64)
		if t := sglangType.FindStringSubmatch(line); t != nil {
			l.Type = t[1]
		}
		if q := sglangQnt.FindStringSubmatch(line); q != nil {
			l.Quant = strings.TrimSuffix(q[1], ",")
		}
		if a := sglangAv.FindStringSubmatch(line); a != nil {
			l.Avail, _ = strconv.ParseFloat(a[1], 64)
		}
		if r := sglangRank.FindStringSubmatch(line); r != nil {
			l.Rank = strings.Join(strings.Fields(r[1]), " ")
		}
		return l, true
	}
	if m := vllmLoad.FindStringSubmatch(line); m != nil {
		l := Load{Engine: "vllm", Text: strings.TrimSpace(line)}
		l.GiB, _ = strconv.ParseFloat(m[1], 64)
		return l, true
	}
	return Load{}, false
}
