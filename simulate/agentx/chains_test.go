package agentx

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// Each case is worked by hand from the rule in weka_agent_chains.py; t is
// the start, end = t + api time, every request on model "m" unless set.
func TestDetectAgentChains(t *testing.T) {
	r := func(t, end float64, hash ...int64) chainReq {
		return chainReq{t: t, end: end, out: 100, hash: hash, model: "m"}
	}
	cases := []struct {
		name  string
		reqs  []chainReq
		want  []int
		seams int
	}{
		{"extension after the tail ended", []chainReq{r(0, 5, 1, 2), r(10, 12, 1, 2, 3)}, []int{0, 0}, 0},
		// The tail is still in flight: a concurrent worker.
		{"tail in flight forks", []chainReq{r(0, 20, 1, 2), r(10, 12, 1, 2, 3)}, []int{0, 1}, 0},
		{"other model forks", []chainReq{r(0, 5, 1, 2), {t: 10, end: 12, hash: []int64{1, 2, 3}, model: "haiku"}}, []int{0, 1}, 0},
		// A shrink nothing pulls back from is a compaction: spliced back.
		{"compaction seam", []chainReq{r(0, 5, 1, 2, 3, 4), r(10, 12, 1, 2, 9), r(20, 22, 1, 2, 9, 10)}, []int{0, 0, 0}, 1},
		// A later request extends the pre-shrink state: the shrink was a spawn.
		{"pull-back makes a spawn", []chainReq{r(0, 5, 1, 2, 3, 4), r(10, 12, 1, 2, 9), r(20, 22, 1, 2, 3, 4, 5)}, []int{0, 1, 0}, 0},
		// Two forks of one dead tail: the deeper continues it, the other spawned.
		{"deeper fork is elected", []chainReq{r(0, 5, 1, 2, 3, 4), r(10, 12, 1, 2, 8), r(11, 13, 1, 2, 3, 7)}, []int{0, 1, 0}, 1},
		// Starts before the tail ends: never a seam.
		{"overlapping shrink", []chainReq{r(0, 15, 1, 2, 3, 4), r(10, 12, 1, 2, 9)}, []int{0, 1}, 0},
		// 4000 s after the tail and 2 of 4 blocks shared: blocked only below half.
		{"seam guard blocks", []chainReq{r(0, 5, 1, 2, 3, 4), r(4010, 4012, 1, 9)}, []int{0, 1}, 0},
		{"seam guard lets half through", []chainReq{r(0, 5, 1, 2, 3, 4), r(4010, 4012, 1, 2, 9)}, []int{0, 0}, 1},
		{"disjoint start is its own chain", []chainReq{r(0, 5, 1, 2), r(10, 12, 7, 8)}, []int{0, 1}, 0},
		// Empty hash lists ride the main chain.
		{"no hash evidence", []chainReq{r(0, 5, 1, 2), r(1, 2), r(10, 12, 1, 2, 3)}, []int{0, 0, 0}, 0},
		// Workers are numbered by first request.
		{"worker order", []chainReq{r(0, 50, 1), r(10, 60, 1, 2), r(5, 40, 1, 3)}, []int{0, 2, 1}, 0},
	}
	for _, c := range cases {
		for i := range c.reqs {
			c.reqs[i].outer = i
		}
		got, n, seams, ok := detectAgentChains(c.reqs, SeamMaxGapSeconds, SeamMinOverlapRatio)
		wantN := 0
		for _, w := range c.want {
			wantN = max(wantN, w+1)
		}
		if !ok || !reflect.DeepEqual(got, c.want) || n != wantN || seams != c.seams {
			t.Errorf("%s: chains %v (%d), %d seams; want %v (%d), %d seams", c.name, got, n, seams, c.want, wantN, c.seams)
		}
	}
}

func TestSplitOffPreamble(t *testing.T) {
	r := func(t float64, out int64, hash ...int64) chainReq {
		return chainReq{t: t, end: t + 1, out: out, hash: hash, model: "m"}
	}
	cases := []struct {
		name string
		reqs []chainReq
		want int
	}{
		{"small disjoint leader", []chainReq{r(0, 20, 50, 51), r(1, 500, 1, 2), r(5, 500, 1, 2, 3)}, 0},
		{"large leader, blocks reused later", []chainReq{r(0, 500, 50, 51), r(1, 500, 1, 51), r(5, 500, 1, 2, 3)}, -1},
		{"large fully disjoint leader", []chainReq{r(0, 500, 50, 51), r(1, 500, 1, 2), r(5, 500, 1, 2, 3)}, 0},
		{"leader shares a prefix", []chainReq{r(0, 20, 1, 51), r(1, 500, 1, 2)}, -1},
		{"single request", []chainReq{r(0, 20, 1)}, -1},
	}
	for _, c := range cases {
		for i := range c.reqs {
			c.reqs[i].outer = i
		}
		if got := splitOffPreamble(c.reqs); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// A root whose fourth request forks while the main turn is in flight: the
// worker (a flat chain) is spawned from the main turn before it, which it
// overlaps, so it is dispatched with that turn (waiting on what the turn
// waited for); the next main turn after its end joins it.
func TestParseTraceFlatChain(t *testing.T) {
	js := `{"block_size":64,"requests":[
{"t":0,"model":"m","in":128,"out":10,"hash_ids":[1,2],"api_time":5},
{"t":10,"model":"m","in":192,"out":10,"hash_ids":[1,2,3],"api_time":20},
{"t":12,"model":"m","in":256,"out":10,"hash_ids":[1,2,3,4],"api_time":3},
{"t":40,"model":"m","in":256,"out":10,"hash_ids":[1,2,3,5],"api_time":1}]}`
	tr, err := ParseTrace("x.json", "x", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	want := []TraceRequest{
		{Session: 0, From: -1, In: 128, Out: 10, Start: 0, Gap: 0},
		{Session: 0, From: -1, In: 192, Out: 10, Shared: 128, Start: 10, Gap: 5, Preds: []int32{0}},
		// With its spawning turn 1: after turn 0 (ended 5 s), 12 - 5 = 7 s;
		// its prompt shares 3 blocks with turn 1's (session 0's latest).
		{Session: 1, From: 0, In: 256, Out: 10, Shared: 192, Start: 12, Gap: 7, Preds: []int32{0}},
		// Own chain (turn 1, ended 30 s), the worker's frontier and join.
		{Session: 0, From: -1, In: 256, Out: 10, Shared: 192, Start: 40, Gap: 10, Preds: []int32{1, 2}},
	}
	if !reflect.DeepEqual(tr.Requests, want) {
		t.Fatalf("requests:\n got %+v\nwant %+v", tr.Requests, want)
	}
	if !reflect.DeepEqual(tr.Sessions, []uint8{KindRoot, KindSide}) {
		t.Errorf("sessions %v", tr.Sessions)
	}
}

// A trace of mutually disjoint requests past the chain bound is an error,
// not an unbounded quadratic scan.
func TestParseTraceTooManyChains(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"requests":[`)
	for i := range MaxChainsPerScope + 2 { // the first is a preamble
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"t":%d,"in":64,"out":1,"hash_ids":[%d]}`, i, i+1)
	}
	b.WriteString("]}")
	_, err := ParseTrace("x.json", "x", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "agent chains") {
		t.Fatalf("got %v, want an error about agent chains", err)
	}
}
