package deep

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/specsim/specsim/kernels/numfmt"
	"github.com/x448/float16"
)

// Test fixtures: real weight-like data, quantized exactly the way the
// exporters do (in float32, then rounded to the stored 16-bit format).

// matrix is a rows x cols float32 weight, row-major (rows = output
// channels, cols = input dimension).
type matrix struct {
	rows, cols int
	v          []float32
}

func gaussian(rows, cols int, sigma float64, seed uint64) matrix {
	r := rand.New(rand.NewPCG(seed, 17))
	m := matrix{rows, cols, make([]float32, rows*cols)}
	for i := range m.v {
		m.v[i] = float32(r.NormFloat64() * sigma)
	}
	return m
}

// trainedLike mimics trained projection weights: per-output-channel scales
// spread over a decade (log-normal), heavy tails (Student t with 4 degrees
// of freedom) and a few outlier input channels twenty times larger.
func trainedLike(rows, cols int, seed uint64) matrix {
	r := rand.New(rand.NewPCG(seed, 29))
	m := matrix{rows, cols, make([]float32, rows*cols)}
	outlier := map[int]bool{}
	for range max(1, cols/256) {
		outlier[r.IntN(cols)] = true
	}
	for i := range rows {
		rowScale := 0.02 * math.Exp(0.6*r.NormFloat64())
		for j := range cols {
			chi := 0.0
			for range 4 {
				z := r.NormFloat64()
				chi += z * z
			}
			t := r.NormFloat64() / math.Sqrt(chi/4)
			if outlier[j] {
				t *= 20
			}
			m.v[i*cols+j] = float32(t * rowScale)
		}
	}
	return m
}

func amax(v []float32) float32 {
	var a float32
	for _, x := range v {
		a = max(a, float32(math.Abs(float64(x))))
	}
	return a
}

// nvfp4 quantizes and dequantizes like ModelOpt's NVFP4 export: global
// scale amax/(6*448); per 16 values along the input dimension an E4M3
// block scale amax_b/(6*global) clamped to [2^-9, 448]; E2M1 codes of
// x/(block*global); dequantized as code * (block * global) in float32.
func nvfp4(m matrix) matrix { return nvfp4Dequant(m, false, amax(m.v)/(6*448)) }

// nvfp4Dequant quantizes like nvfp4 under the given tensor (global)
// scale; with bf16Scale the dequantizer first rounds the combined scale to
// BF16 (as a BF16-only kernel would).
func nvfp4Dequant(m matrix, bf16Scale bool, global float32) matrix {
	out := matrix{m.rows, m.cols, make([]float32, len(m.v))}
	for b := 0; b < len(m.v); b += 16 {
		blk := m.v[b : b+16]
		bs := float64(amax(blk) / (6 * global))
		bs = min(max(bs, 1.0/512), 448)
		scale := numfmt.E4M3(numfmt.ToE4M3(bs)) * global
		deq := scale
		if bf16Scale {
			deq = numfmt.BF16(numfmt.ToBF16(scale))
		}
		for i, x := range blk {
			q := numfmt.E2M1(numfmt.ToE2M1(float64(x / scale)))
			out.v[b+i] = q * deq
		}
	}
	return out
}

// mxfp4: E2M1 values with a power-of-two (E8M0) scale per 32 values.
func mxfp4(m matrix) matrix {
	out := matrix{m.rows, m.cols, make([]float32, len(m.v))}
	for b := 0; b < len(m.v); b += 32 {
		blk := m.v[b : b+32]
		e := math.Floor(math.Log2(float64(amax(blk)))) - 2 // OCP MX: floor(log2 amax) - emax(E2M1)
		scale := float32(math.Exp2(e))
		for i, x := range blk {
			out.v[b+i] = numfmt.E2M1(numfmt.ToE2M1(float64(x/scale))) * scale
		}
	}
	return out
}

// mxfp8: E4M3 values with a power-of-two (E8M0) scale per 32 values
// (OCP MX: 2^(floor(log2 amax) - 8), 8 being E4M3's largest exponent).
func mxfp8(m matrix) matrix {
	out := matrix{m.rows, m.cols, make([]float32, len(m.v))}
	for b := 0; b < len(m.v); b += 32 {
		blk := m.v[b : b+32]
		scale := float32(math.Exp2(math.Floor(math.Log2(float64(amax(blk)))) - 8))
		for i, x := range blk {
			out.v[b+i] = numfmt.E4M3(numfmt.ToE4M3(float64(x/scale))) * scale
		}
	}
	return out
}

// fp8 quantizes to E4M3 with the scale amax/448 taken over each
// rowsPer x colsPer tile (per-tensor: the whole matrix; per-channel: one
// row; block: 128x128).
func fp8(m matrix, rowsPer, colsPer int, e5m2 bool) matrix {
	out := matrix{m.rows, m.cols, make([]float32, len(m.v))}
	top, enc, dec := float32(448), numfmt.ToE4M3, numfmt.E4M3
	if e5m2 {
		top, enc, dec = 57344, numfmt.ToE5M2, numfmt.E5M2
	}
	for r0 := 0; r0 < m.rows; r0 += rowsPer {
		for c0 := 0; c0 < m.cols; c0 += colsPer {
			var a float32
			for r := r0; r < r0+rowsPer; r++ {
				a = max(a, amax(m.v[r*m.cols+c0:r*m.cols+c0+colsPer]))
			}
			s := a / top
			for r := r0; r < r0+rowsPer; r++ {
				for c := c0; c < c0+colsPer; c++ {
					out.v[r*m.cols+c] = dec(enc(float64(m.v[r*m.cols+c]/s))) * s
				}
			}
		}
	}
	return out
}

// int4Sym: s = amax/7 per group, q = clamp(round(x/s), -8, 7).
func int4Sym(m matrix, group int) matrix {
	out := matrix{m.rows, m.cols, make([]float32, len(m.v))}
	for b := 0; b < len(m.v); b += group {
		blk := m.v[b : b+group]
		s := amax(blk) / 7
		for i, x := range blk {
			q := min(max(math.RoundToEven(float64(x/s)), -8), 7)
			out.v[b+i] = float32(q) * s
		}
	}
	return out
}

// int8Sym: s = amax/127 per group, q = round(x/s).
func int8Sym(m matrix, group int) matrix {
	out := matrix{m.rows, m.cols, make([]float32, len(m.v))}
	for b := 0; b < len(m.v); b += group {
		blk := m.v[b : b+group]
		s := amax(blk) / 127
		for i, x := range blk {
			out.v[b+i] = float32(math.RoundToEven(float64(x/s))) * s
		}
	}
	return out
}

// int4Asym (GPTQ/AWQ style): s = (max-min)/15, integer zero point
// z = round(-min/s), q = clamp(round(x/s)+z, 0, 15), value (q-z)*s.
func int4Asym(m matrix, group int) matrix {
	out := matrix{m.rows, m.cols, make([]float32, len(m.v))}
	for b := 0; b < len(m.v); b += group {
		blk := m.v[b : b+group]
		lo, hi := blk[0], blk[0]
		for _, x := range blk {
			lo, hi = min(lo, x), max(hi, x)
		}
		s := (hi - lo) / 15
		z := math.RoundToEven(float64(-lo / s))
		for i, x := range blk {
			q := min(max(math.RoundToEven(float64(x/s))+z, 0), 15)
			out.v[b+i] = float32(q-z) * s
		}
	}
	return out
}

func constant(rows, cols int, c float32) matrix {
	m := matrix{rows, cols, make([]float32, rows*cols)}
	for i := range m.v {
		m.v[i] = c
	}
	return m
}

// nearOne mimics norm weights: 1 + N(0, 0.02). On an INT8 lattice with
// the maximum at 127 such values are within rounding of a grid point about
// half the time, so that grid cannot be tested on them.
func nearOne(rows, cols int, seed uint64) matrix {
	r := rand.New(rand.NewPCG(seed, 4))
	m := matrix{rows, cols, make([]float32, rows*cols)}
	for i := range m.v {
		m.v[i] = float32(1 + 0.02*r.NormFloat64())
	}
	return m
}

// partly takes the first rows of q and the rest of m: a tensor laundered
// only in part.
func partly(m, q matrix, rows int) matrix {
	out := matrix{m.rows, m.cols, append([]float32(nil), m.v...)}
	copy(out.v, q.v[:rows*m.cols])
	return out
}

// fewValues draws every element from a handful of values: on some grid
// whatever its origin, so no verdict can be drawn.
func fewValues(rows, cols int, vals []float32) matrix {
	r := rand.New(rand.NewPCG(3, 3))
	m := matrix{rows, cols, make([]float32, rows*cols)}
	for i := range m.v {
		m.v[i] = vals[r.IntN(len(vals))]
	}
	return m
}

// encode stores a matrix as little-endian BF16, F16 or F32.
func encode(m matrix, dtype string) []byte {
	switch dtype {
	case "F32":
		b := make([]byte, 4*len(m.v))
		for i, x := range m.v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return b
	case "F16":
		b := make([]byte, 2*len(m.v))
		for i, x := range m.v {
			binary.LittleEndian.PutUint16(b[2*i:], float16.Fromfloat32(x).Bits())
		}
		return b
	}
	b := make([]byte, 2*len(m.v))
	for i, x := range m.v {
		binary.LittleEndian.PutUint16(b[2*i:], numfmt.ToBF16(x))
	}
	return b
}

type fixtureTensor struct {
	name  string
	dtype string
	shape []int64
	data  []byte
}

func matrixTensor(name, dtype string, m matrix) fixtureTensor {
	return fixtureTensor{name, dtype, []int64{int64(m.rows), int64(m.cols)}, encode(m, dtype)}
}

// writeSafetensors writes a safetensors file (8-byte little-endian header
// length, JSON header padded with spaces to 8 bytes, data) and returns the
// tensors with absolute byte ranges.
func writeSafetensors(t testing.TB, path string, ts []fixtureTensor) []Tensor {
	t.Helper()
	sort.Slice(ts, func(i, j int) bool { return ts[i].name < ts[j].name })
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var off int64
	for _, x := range ts {
		header[x.name] = map[string]any{"dtype": x.dtype, "shape": x.shape, "data_offsets": []int64{off, off + int64(len(x.data))}}
		off += int64(len(x.data))
	}
	js, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	for len(js)%8 != 0 {
		js = append(js, ' ')
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(js)))
	f.Write(n[:])
	f.Write(js)
	start := int64(8 + len(js))
	var out []Tensor
	off = 0
	for _, x := range ts {
		if _, err := f.Write(x.data); err != nil {
			t.Fatal(err)
		}
		out = append(out, Tensor{Path: path, Name: x.name, DType: x.dtype, Shape: x.shape, Begin: start + off, End: start + off + int64(len(x.data))})
		off += int64(len(x.data))
	}
	return out
}

func auditOne(t testing.TB, x fixtureTensor, budget int64) TensorResult {
	t.Helper()
	ts := writeSafetensors(t, filepath.Join(t.TempDir(), "model.safetensors"), []fixtureTensor{x})
	rep, err := Audit(ts, Options{Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tensors) != 1 {
		t.Fatalf("%d tensor results", len(rep.Tensors))
	}
	return rep.Tensors[0]
}
