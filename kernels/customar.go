package kernels

import (
	"math"
	"sort"
)

// SourcePublished marks a cost read from a public measurement of the
// kernel (another party's benchmark, cited where the figures live), not
// from a table measured by this project.
const SourcePublished = "public-figure"

// customARFigures is SGLang's custom all-reduce (the TensorRT-LLM-derived
// one-shot/two-shot kernels in sgl-kernel) as its authors measured it on 8x
// H100 SXM (NVLink 4, 450 GB/s per direction), without a CUDA graph:
// sgl-project/sglang pull request #2904 "optimize custom allreduce kernel",
// table "custom allreduce", latency by TP size 2/4/8 and message size in
// bytes. Microseconds.
var customARFigures = struct {
	bytes []float64
	tp    []int
	us    [][]float64 // [size][tp]
}{
	bytes: []float64{512, 4096, 32768, 262144, 524288, 1048576},
	tp:    []int{2, 4, 8},
	us: [][]float64{
		{3.7, 4.8, 5.9},
		{3.9, 3.7, 5.7},
		{4.5, 4.8, 7.8},
		{7.9, 13.9, 16.7},
		{12.5, 20.2, 22.1},
		{19.9, 31.1, 33.8},
	},
}

// customARFiguresBandwidth is the NVLink bandwidth per direction of the
// GPU the figures were measured on (H100 SXM).
const customARFiguresBandwidth = 450e9

// customARMaxBytes is the largest message SGLang sends through its custom
// all-reduce (CustomAllreduce max_size, 8 MiB); larger ones go to NCCL.
const customARMaxBytes = 8 << 20

// CustomAllReduce prices SGLang's custom all-reduce of a bytes message over
// gpus GPUs inside one NVLink domain from the published H100 figures:
// log-log interpolation in message size, linear between TP sizes; past the
// figures' 1 MiB the last segment's slope (the two-shot kernel's bandwidth
// regime) up to 8 MiB. On another NVLink generation the part above the
// smallest message's latency scales with the inverse of the link
// bandwidth. ok is false where the engine would not use it (one GPU, more
// than 8 or beyond the NVLink domain, above 8 MiB) or where a collective
// table measured on this GPU covers the shape: the measured path wins.
func (c *Coster) CustomAllReduce(bytes float64, gpus int) (cost Cost, ok bool) {
	f := customARFigures
	if gpus < 2 || gpus > f.tp[len(f.tp)-1] || gpus > c.gpu.NVLinkDomain || !(bytes > 0) || bytes > customARMaxBytes {
		return Cost{}, false
	}
	if c.coll != nil && c.coll.table != nil && c.coll.table.covers(AllReduce, gpus, bytes) {
		return Cost{}, false
	}
	at := func(size float64) float64 { // microseconds at this TP, H100
		col := func(i int) float64 {
			row := f.us[i]
			j := sort.SearchInts(f.tp, gpus)
			if j < len(f.tp) && f.tp[j] == gpus {
				return row[j]
			}
			lo, hi := f.tp[j-1], f.tp[j]
			u := float64(gpus-lo) / float64(hi-lo)
			return row[j-1] + u*(row[j]-row[j-1])
		}
		n := len(f.bytes)
		switch {
		case size <= f.bytes[0]:
			return col(0)
		case size >= f.bytes[n-1]:
			slope := (col(n-1) - col(n-2)) / (f.bytes[n-1] - f.bytes[n-2])
			return col(n-1) + slope*(size-f.bytes[n-1])
		}
		i := sort.SearchFloat64s(f.bytes, size)
		u := (math.Log(size) - math.Log(f.bytes[i-1])) / (math.Log(f.bytes[i]) - math.Log(f.bytes[i-1]))
		return math.Exp(math.Log(col(i-1)) + u*(math.Log(col(i))-math.Log(col(i-1))))
	}
	base := at(f.bytes[0])
	t := at(bytes)
	if bw := c.gpu.NVLinkBandwidth; bw > 0 {
		t = base + (t-base)*customARFiguresBandwidth/bw
	}
	n := float64(gpus)
	bound := "network"
	if t < 2*base {
		bound = "latency"
	}
	return Cost{Seconds: t * 1e-6, Bytes: trafficFactor(AllReduce, n) * bytes, Source: SourcePublished, Bound: bound}, true
}

// covers reports whether the measured collective table has op at gpus
// and bytes inside its grid.
func (t *collectiveTable) covers(op CollectiveOp, gpus int, bytes float64) bool {
	idx := collectiveIndex(op)
	if t == nil || idx < 0 || t.grids[idx] == nil {
		return false
	}
	_, inside, ok := t.grids[idx].at(coords{2, [maxGridDims]float64{bytes, float64(gpus)}})
	return ok && inside
}
