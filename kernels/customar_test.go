package kernels

import (
	"math"
	"testing"
)

// TestCustomAllReduceFigures: on a GPU with the H100's NVLink bandwidth the
// price is the published figure at the published points, and in between it
// lies between its neighbours.
func TestCustomAllReduceFigures(t *testing.T) {
	g, err := lookupGPU("h200") // NVLink 4, 450 GB/s: the figures apply unscaled
	if err != nil {
		t.Fatal(err)
	}
	c := NewCoster(g)
	for _, tc := range []struct {
		bytes float64
		gpus  int
		us    float64
	}{{512, 2, 3.7}, {32768, 4, 4.8}, {262144, 8, 16.7}, {1048576, 8, 33.8}, {4096, 8, 5.7}} {
		got, ok := c.CustomAllReduce(tc.bytes, tc.gpus)
		if !ok || math.Abs(got.Seconds*1e6-tc.us) > 1e-9 || got.Source != SourcePublished {
			t.Errorf("%g B over %d: %.3f us (%v, %s), want %.1f us public-figure", tc.bytes, tc.gpus, got.Seconds*1e6, ok, got.Source, tc.us)
		}
	}
	mid, _ := c.CustomAllReduce(131072, 8)
	if us := mid.Seconds * 1e6; !(us > 7.8 && us < 16.7) {
		t.Errorf("128 KiB over 8: %.2f us, want between 7.8 and 16.7", us)
	}
	six, _ := c.CustomAllReduce(262144, 6) // halfway between TP4 13.9 and TP8 16.7
	if us := six.Seconds * 1e6; math.Abs(us-15.3) > 1e-9 {
		t.Errorf("256 KiB over 6: %.3f us, want 15.3", us)
	}
	// 2 MiB extends the 512 KiB -> 1 MiB slope: 33.8 + (33.8-22.1) * 2.
	big, ok := c.CustomAllReduce(2<<20, 8)
	if us := big.Seconds * 1e6; !ok || math.Abs(us-57.2) > 1e-6 {
		t.Errorf("2 MiB over 8: %.3f us, want 57.2", us)
	}
	for _, tc := range []struct {
		bytes float64
		gpus  int
	}{{4096, 1}, {4096, 16}, {16 << 20, 8}, {0, 8}} {
		if _, ok := c.CustomAllReduce(tc.bytes, tc.gpus); ok {
			t.Errorf("%g B over %d GPUs: SGLang would not run its custom all-reduce", tc.bytes, tc.gpus)
		}
	}
}

// TestCustomAllReduceScalesWithNVLink: on NVLink 5 (900 GB/s) the part of
// the time above the smallest message's latency halves.
func TestCustomAllReduceScalesWithNVLink(t *testing.T) {
	g, err := lookupGPU("b200")
	if err != nil {
		t.Fatal(err)
	}
	if g.NVLinkBandwidth != 900e9 {
		t.Skipf("b200 NVLink %.0f GB/s in the catalog, test assumes 900", g.NVLinkBandwidth/1e9)
	}
	got, _ := NewCoster(g).CustomAllReduce(1048576, 8)
	want := 5.9 + (33.8-5.9)/2
	if math.Abs(got.Seconds*1e6-want) > 1e-9 {
		t.Errorf("1 MiB over 8 on b200: %.3f us, want %.3f", got.Seconds*1e6, want)
	}
}
