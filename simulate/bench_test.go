package simulate

import "testing"

// BenchmarkSweep10k prices 10,000 configurations (topologies x
// concurrencies x draft lengths) with the mean-field estimate, as a sweep
// does before refining its frontier.
func BenchmarkSweep10k(b *testing.B) {
	r := resolved(b, Query{GPU: "b200"})
	topos := EnumerateTopologies("sglang", 8, nil, 0)
	concs := []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}
	for b.Loop() {
		n := 0
		for n < 10000 {
			for _, t := range topos {
				for k := 0; k <= 8 && n < 10000; k++ {
					for _, c := range concs {
						if n >= 10000 {
							break
						}
						n++
						sc, err := r.Scenario(t, c, k)
						if err != nil {
							b.Fatal(err)
						}
						p, err := NewPlan(sc, r.GPU)
						if err != nil {
							continue
						}
						if _, err := p.Estimate(); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
		}
	}
}

// BenchmarkServe1000 is the event simulation of 1,000 requests at 1k/1k
// (64 sessions, MTP k = 3 on 8 x B200).
func BenchmarkServe1000(b *testing.B) {
	for b.Loop() {
		r := resolved(b, Query{GPU: "b200", Requests: 1000})
		if _, err := Predict(r, topo(b, "agg:tp8"), 64, 3); err != nil {
			b.Fatal(err)
		}
	}
}
