package simulate

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	quant "github.com/specsim/specsim/internal/quantile"
)

// TestPrefillTimeIndependentOfOrder: two requests in one memo bin get the
// same mean-field prefill time whichever is priced first (the memo used to
// keep the first request's own time), and that time is the bin
// representative's, priced chunk by chunk without the memo.
func TestPrefillTimeIndependentOfOrder(t *testing.T) {
	r := resolved(t, Query{GPU: "b200", ISL: 1024, OSL: 1024, Requests: 8})
	topo, err := ParseTopology("agg:tp2")
	if err != nil {
		t.Fatal(err)
	}
	plan := func() *Plan {
		sc, err := r.Scenario(topo, 4, 0)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlan(sc, r.GPU)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := Request{ISL: 5000 + 300, Cached: 300} // new 5000 -> bin 78, cached bin 1
	b := Request{ISL: 5030 + 400, Cached: 400} // new 5030 -> bin 78, cached bin 1
	p1, p2 := plan(), plan()
	ab := []float64{p1.prefillTime(p1.agg, a), p1.prefillTime(p1.agg, b)}
	ba := []float64{p2.prefillTime(p2.agg, b), p2.prefillTime(p2.agg, a)}
	if ab[0] != ab[1] || ba[0] != ba[1] || ab[0] != ba[0] {
		t.Fatalf("prefill times depend on order: a,b = %v; b,a = %v", ab, ba)
	}
	// The representative: cached 256 (bin 1's lower edge), 78*64+32 = 5024 new tokens.
	want := 0.0
	e := plan().agg
	for done := 256; done < 256+5024; {
		n := min(256+5024-done, p1.chunk)
		want += e.Prefill([]PrefillPart{{New: n, Before: done, Last: done+n >= 256+5024}}, false).Total()
		done += n
	}
	if ab[0] != want {
		t.Errorf("prefill time %g s, want the representative's %g s", ab[0], want)
	}
}

// TestQuantiles5090: the histogram and selection find the quantiles that
// sorting and quantile.Sorted do, bit for bit, and selectNth leaves every
// k-th value where sort.Float64s puts it, nothing larger before it,
// nothing smaller after.
func TestQuantiles5090(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	column := func(n int, draw func(i int) float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = draw(i)
		}
		return xs
	}
	heavy := func(int) float64 { return rng.ExpFloat64() * math.Pow(10, float64(rng.IntN(12)-6)) }
	ulps := func(int) float64 {
		return math.Nextafter(0.0125, float64(rng.IntN(5))) * (1 + float64(rng.IntN(3))*1e-16)
	}
	outlier := func(i int) float64 {
		if i == 7 {
			return 1e300
		}
		return 2 + rng.Float64()*1e-9
	}
	for _, c := range []struct {
		name string
		xs   []float64
	}{
		{"empty", nil},
		{"one", []float64{3}},
		{"two", []float64{3, 1}},
		{"three", []float64{2, 3, 1}},
		{"equal", column(100, func(int) float64 { return 2 })},
		{"zeros, subnormal, inf", []float64{math.Inf(1), 0, 5e-324, 1, 0, math.MaxFloat64, 1e-300}},
		{"heavy tail 1024", column(1024, heavy)},
		{"heavy tail 33", column(33, heavy)},
		{"heavy tail 1000", column(1000, heavy)},
		{"three values 1024", column(1024, func(int) float64 { return float64(rng.IntN(3)) })},
		{"a few ulps apart 1024", column(1024, ulps)},
		{"one far outlier 1024", column(1024, outlier)},
		{"zeros and inf 1024", column(1024, func(i int) float64 { return [...]float64{0, math.Inf(1), 1}[i%3] })},
		{"ascending 1000", column(1000, func(i int) float64 { return float64(i) / 7 })},
		{"descending 1000", column(1000, func(i int) float64 { return float64(1000-i) / 7 })},
	} {
		sorted := slices.Clone(c.xs)
		sort.Float64s(sorted)
		bounds := bitBounds{lo: math.MaxUint64}
		for _, x := range c.xs {
			bounds.add(x)
		}
		p50, p90 := quantiles5090(slices.Clone(c.xs), bounds, make([]float64, len(c.xs)))
		for _, q := range []struct {
			q, got float64
		}{{0.5, p50}, {0.9, p90}} {
			if want := quant.Sorted(sorted, q.q); math.Float64bits(q.got) != math.Float64bits(want) && !(math.IsNaN(q.got) && math.IsNaN(want)) {
				t.Errorf("%s: quantile %g = %v, sorted %v", c.name, q.q, q.got, want)
			}
		}
		for k := range c.xs {
			xs := slices.Clone(c.xs)
			selectNth(xs, k)
			if xs[k] != sorted[k] || slices.Max(append(xs[:k:k], xs[k])) != xs[k] || slices.Min(xs[k:]) != xs[k] {
				t.Fatalf("%s: selectNth(%d) = %v, sorted %v", c.name, k, xs, sorted)
			}
		}
	}
}

// TestOthersBusy: the share of a lane's load a request from one of n
// sessions finds, by hand.
func TestOthersBusy(t *testing.T) {
	for _, c := range []struct{ n, want float64 }{{0.5, 0}, {1, 0}, {2, 0.5}, {8.0 / 3, 0.625}, {8, 0.875}, {1024, 1023.0 / 1024}} {
		if got := othersBusy(c.n); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("othersBusy(%g) = %g, want %g", c.n, got, c.want)
		}
	}
}

// TestSeededPerm: the shared permutation is the one a fresh generator of
// the seed and stream draws first, however many others were drawn between.
func TestSeededPerm(t *testing.T) {
	for _, c := range []struct {
		seed, stream uint64
		n            int
	}{{1, 0xe71c7, 1024}, {1, 0x9e3779b9, 1024}, {7, 0xe71c7, 1}, {7, 0xe71c7, 0}, {2, 3, 100}} {
		want := rand.New(rand.NewPCG(c.seed, c.stream)).Perm(c.n)
		for i := range 70 {
			seededPerm(uint64(1000+i), c.stream, c.n)
			if got := seededPerm(c.seed, c.stream, c.n); !slices.Equal(got, want) {
				t.Fatalf("seededPerm(%d, %#x, %d) = %v, want %v", c.seed, c.stream, c.n, got[:min(len(got), 8)], want[:min(len(want), 8)])
			}
		}
	}
}

// TestPrefillKeyPacked: each field in its own bits, worked by hand, and
// keys with a field out of range left to the map.
func TestPrefillKeyPacked(t *testing.T) {
	for _, c := range []struct {
		k    prefillKey
		want uint64
		ok   bool
	}{
		{prefillKey{0, 0, false, 0}, 0, true},
		{prefillKey{1, 2, true, 16384}, 1<<39 | 2<<21 | 16384<<1 | 1, true},
		{prefillKey{1<<24 - 1, 1<<18 - 1, true, 1<<20 - 1}, 0x7fffffffffffffff, true},
		{prefillKey{1 << 24, 0, false, 16384}, 0, false},
		{prefillKey{0, 1 << 18, false, 16384}, 0, false},
		{prefillKey{0, 0, false, 1 << 20}, 0, false},
		{prefillKey{-1, 0, false, 16384}, 0, false},
	} {
		got, ok := c.k.packed()
		if got != c.want || ok != c.ok {
			t.Errorf("%+v: packed %#x %v, want %#x %v", c.k, got, ok, c.want, c.ok)
		}
	}
}

// TestBitBoundsPlain: a column is plain when every value is >= 0 and not a
// negative zero (the test quantiles5090's callers made value by value).
func TestBitBoundsPlain(t *testing.T) {
	for _, xs := range [][]float64{
		nil, {0}, {1, 2}, {math.Inf(1), 0, 5e-324}, {math.Copysign(0, -1)}, {1, -1}, {math.NaN()},
		{2, math.Float64frombits(0xfff8000000000001)}, {math.Inf(-1)}, {math.MaxFloat64, -5e-324},
	} {
		b := bitBounds{lo: math.MaxUint64}
		want := true
		for _, x := range xs {
			b.add(x)
			want = want && x >= 0 && !math.Signbit(x)
		}
		if got := b.plain(); got != want {
			t.Errorf("%v: plain %v, want %v", xs, got, want)
		}
	}
}
