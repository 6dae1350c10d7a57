package simulate

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// TestStepMemoIdentical runs predicts that go through every memoized
// prefill cost (plain and PP prefill, DP-attention prefill, GDN and full
// attention, the prefill draft, TensorRT-LLM's mixed iterations) with the
// memos on and off: the JSON must be byte-identical, since each memo is
// keyed on all the inputs of a pure function.
func TestStepMemoIdentical(t *testing.T) {
	short := "duration=120"
	cases := []struct {
		name string
		q    Query
		topo string
		conc int
		k    int
	}{
		{"agentx 3P1D pp4 + dep8", Query{GPU: "gb300", Workload: "agentx", AgentX: short, MemFraction: 0.8}, "disagg:3xtp1pp4+1xdep8", 64, 6},
		{"agentx agg tp2 (default predict)", Query{GPU: "gb300", Workload: "agentx", AgentX: short}, "agg:tp2", 7, 6},
		{"agentx 1P1D prefill draft", Query{GPU: "gb300", Workload: "agentx", AgentX: short, Server: ServerConfig{PrefillDraft: true}}, "disagg:1xtp2+1xtp2", 16, 3},
		{"fixed agg dep8", Query{GPU: "b200", Requests: 300}, "agg:dep8", 64, 3},
		{"fixed trtllm mixed", Query{GPU: "b200", Requests: 200, Engine: "trtllm"}, "agg:tp4", 32, 2},
		{"fixed pp2, no spec", Query{GPU: "h200", Requests: 200, Precision: "fp8"}, "agg:tp4pp2", 16, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := func(memo bool) []byte {
				stepMemo = memo
				defer func() { stepMemo = true }()
				r := resolved(t, c.q)
				res, err := Predict(r, topo(t, c.topo), c.conc, c.k)
				if err != nil {
					t.Fatal(err)
				}
				out, err := json.Marshal(res)
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			off, on := run(false), run(true)
			if !bytes.Equal(off, on) {
				t.Errorf("memoized predict differs from the unmemoized one:\noff: %s\non:  %s", off, on)
			}
		})
	}
}

// TestMemoTable checks the memo table against a Go map over keys that
// collide in their home slots, through growth and the restart at
// maxMemoEntries: every hit returns what was stored under that very key.
func TestMemoTable(t *testing.T) {
	var tab memoTable[uint64]
	ref := map[uint64]uint64{}
	val := func(k uint64) uint64 { return k*7 + 3 }
	hits := 0
	for i := range uint64(6 * maxMemoEntries) {
		// Keys of the prefill memos' shapes (small counts in high and low
		// bits, many sharing their low bits), 100,000 of them drawn over
		// and over, and 0 and the largest key.
		j := i * 7919 % 100000
		k := (j%4096)<<32 | (j / 4096 * 64)
		switch j {
		case 5:
			k = 0
		case 6:
			k = 1<<64 - 2
		}
		if v, ok := tab.get(k); ok {
			if v != val(k) {
				t.Fatalf("key %#x: got %d, stored %d", k, v, val(k))
			}
			hits++
			continue
		}
		if tab.n >= maxMemoEntries {
			clear(ref)
		}
		if _, ok := ref[k]; ok {
			t.Fatalf("key %#x stored but not found (n = %d)", k, tab.n)
		}
		tab.put(k, val(k))
		ref[k] = val(k)
		if tab.n != len(ref) {
			t.Fatalf("after %d puts the table holds %d keys, the map %d", i, tab.n, len(ref))
		}
	}
	for k, v := range ref {
		if got, ok := tab.get(k); !ok || got != v {
			t.Fatalf("key %#x: got %d, %v; want %d", k, got, ok, v)
		}
	}
	if hits == 0 {
		t.Fatal("no lookup hit")
	}
}

// TestPartCostMemo checks partCost's memos (a miss, a hit, and a hit of
// the memo by new tokens alone at another context) against the
// unmemoized price, bit for bit. Qwen3.5 has full
// and linear attention layers; the pairs repeat new token counts at other
// contexts before them.
func TestPartCostMemo(t *testing.T) {
	r := resolved(t, Query{GPU: "gb300", Workload: "agentx"})
	parts := []struct{ n, before int }{{1, 0}, {100, 0}, {100, 5000}, {8192, 0}, {8192, 8192}, {777, 123456}, {16384, 1}}
	for _, par := range []Parallel{{TP: 2, EP: 1, PP: 1}, {TP: 8, EP: 8, PP: 1, DPAttention: true}} {
		t.Run(par.String(), func(t *testing.T) {
			engine := func() *Engine {
				e, err := NewEngine(r.Model, r.GPU.withDomain(), par, r.Engine)
				if err != nil {
					t.Fatal(err)
				}
				return e
			}
			ref, e := engine(), engine()
			full := ref.kinds().full
			lin := r.Model.Layers - full
			if full == 0 || lin == 0 {
				t.Fatalf("want full and linear layers, have %d and %d", full, lin)
			}
			defer func() { stepMemo = true }()
			for _, p := range parts {
				stepMemo = false
				wa, wg := ref.partCost(p.n, p.before, full, lin)
				stepMemo = true
				for i := range 2 {
					a, g := e.partCost(p.n, p.before, full, lin)
					if math.Float64bits(a) != math.Float64bits(wa) || math.Float64bits(g) != math.Float64bits(wg) {
						t.Errorf("n %d before %d call %d: got %v %v, unmemoized %v %v", p.n, p.before, i, a, g, wa, wg)
					}
				}
			}
			if ref.Err() != nil || e.Err() != nil {
				t.Fatal(ref.Err(), e.Err())
			}
		})
	}
}

// TestPrefillForwardNoMixers checks that prefillForward below PP2, which
// leaves out the attention and linear-attention layers that Prefill
// replaces, prices every other field as the full forward does, bit for
// bit, and that at PP2 it is the full forward.
func TestPrefillForwardNoMixers(t *testing.T) {
	r := resolved(t, Query{GPU: "gb300", Workload: "agentx"})
	shapes := []shape{{seqs: 1, q: 1, prefill: true, logits: 1}, {seqs: 1, q: 8192, prefill: true},
		{seqs: 3, q: 5000, prefill: true, logits: 2}, {seqs: 8, q: 16384, prefill: true, logits: 8}}
	for _, c := range []struct {
		par   Parallel
		mixed bool // attention and GDN priced
	}{{Parallel{TP: 2, EP: 1, PP: 1}, false}, {Parallel{TP: 8, EP: 8, PP: 1, DPAttention: true}, false}, {Parallel{TP: 2, EP: 1, PP: 2}, true}} {
		t.Run(c.par.String(), func(t *testing.T) {
			e, err := NewEngine(r.Model, r.GPU.withDomain(), c.par, r.Engine)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range shapes {
				got, want := e.prefillForward(s), e.forward(s)
				if !c.mixed {
					if got.Attention != 0 || got.GDN != 0 {
						t.Errorf("%+v: attention %v, GDN %v priced", s, got.Attention, got.GDN)
					}
					want.Attention, want.GDN = 0, 0
				}
				if got != want {
					t.Errorf("%+v:\ngot  %+v\nwant %+v", s, got, want)
				}
			}
			if e.Err() != nil {
				t.Fatal(e.Err())
			}
		})
	}
}
