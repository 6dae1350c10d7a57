package safetensors_test

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	nlp "github.com/nlpodyssey/safetensors"
	"github.com/specsim/specsim/audit/checkpointtest"
	"github.com/specsim/specsim/audit/safetensors"
)

// TestEveryDType writes one [2, 8] tensor (16 elements) of each dtype the
// format defines and checks the byte count the reader demands against the
// width written out by hand.
func TestEveryDType(t *testing.T) {
	wantBytes := map[string]int64{
		"BOOL": 16, "U8": 16, "I8": 16, "F8_E4M3": 16, "F8_E5M2": 16, "F8_E8M0": 16,
		"F4": 8, "F6_E2M3": 12, "F6_E3M2": 12,
		"I16": 32, "U16": 32, "F16": 32, "BF16": 32,
		"I32": 64, "U32": 64, "F32": 64,
		"I64": 128, "U64": 128, "F64": 128, "C64": 128,
	}
	for dt, want := range wantBytes {
		bits, ok := safetensors.DTypeBits(dt)
		if !ok || int64(bits)*16/8 != want {
			t.Errorf("DTypeBits(%s) = %d, %v; want %d bytes for 16 elements", dt, bits, ok, want)
		}
		// One byte short must be rejected, the exact size accepted.
		for _, span := range []int64{want, want - 1} {
			hdr := []byte(`{"x":{"dtype":"` + dt + `","shape":[2,8],"data_offsets":[0,` + strconv.FormatInt(span, 10) + `]}}`)
			path := filepath.Join(t.TempDir(), "m.safetensors")
			if err := checkpointtest.WriteRaw(path, hdr, span); err != nil {
				t.Fatal(err)
			}
			h, err := safetensors.ReadHeader(path)
			if span == want {
				if err != nil {
					t.Errorf("%s: %v", dt, err)
					continue
				}
				if got := h.Tensors[0]; got.Bytes() != want || got.Elements() != 16 || got.Begin != h.DataStart {
					t.Errorf("%s: got %+v", dt, got)
				}
			} else if err == nil || !strings.Contains(err.Error(), "needs") {
				t.Errorf("%s with %d bytes: want a size error, got %v", dt, span, err)
			}
		}
	}
}

// TestAgreesWithNLPOdyssey serializes real BF16/F32 data with
// github.com/nlpodyssey/safetensors (which handles those dtypes) and checks
// that the header-only reader sees the same tensors and offsets.
func TestAgreesWithNLPOdyssey(t *testing.T) {
	f32 := make([]byte, 0, 24)
	for _, v := range []float32{0, 1, 2, 3, 4, 5} {
		f32 = binary.LittleEndian.AppendUint32(f32, math.Float32bits(v))
	}
	bf16 := make([]byte, 2*4*3)
	a, err := nlp.NewTensorView(nlp.F32, []uint64{2, 3}, f32)
	if err != nil {
		t.Fatal(err)
	}
	b, err := nlp.NewTensorView(nlp.BF16, []uint64{4, 3}, bf16)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := nlp.Serialize(map[string]nlp.TensorView{"a.weight": a, "b.weight": b}, map[string]string{"format": "pt"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := safetensors.ReadHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := nlp.Deserialize(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Tensors) != ref.Len() {
		t.Fatalf("got %d tensors, reference %d", len(h.Tensors), ref.Len())
	}
	for _, tn := range h.Tensors {
		view, ok := ref.Tensor(tn.Name)
		if !ok {
			t.Fatalf("reference lacks %q", tn.Name)
		}
		if tn.DType != view.DType().String() || tn.Bytes() != int64(view.DataLen()) {
			t.Errorf("%s: got %s %d bytes, reference %s %d", tn.Name, tn.DType, tn.Bytes(), view.DType(), view.DataLen())
		}
		if string(raw[tn.Begin:tn.End]) != string(view.Data()) {
			t.Errorf("%s: absolute offsets [%d,%d) do not point at the tensor's data", tn.Name, tn.Begin, tn.End)
		}
	}
	if h.Metadata["format"] != "pt" || h.BytesRead != h.DataStart {
		t.Errorf("metadata %v, bytes read %d, data start %d", h.Metadata, h.BytesRead, h.DataStart)
	}
}

func TestUnknownDTypeIsKept(t *testing.T) {
	hdr := []byte(`{"a":{"dtype":"F2_WEIRD","shape":[4],"data_offsets":[0,3]},"b":{"dtype":"BF16","shape":[2],"data_offsets":[3,7]}}`)
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := checkpointtest.WriteRaw(path, hdr, 7); err != nil {
		t.Fatal(err)
	}
	h, err := safetensors.ReadHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	if h.Tensors[0].Name != "a" || h.Tensors[0].KnownDType() || !h.Tensors[1].KnownDType() {
		t.Errorf("got %+v", h.Tensors)
	}
}

// TestCorrupt covers every way a header can be broken; each must come back
// as an *Error naming the file, never a panic.
func TestCorrupt(t *testing.T) {
	ok := `{"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`
	cases := []struct {
		name    string
		write   func(path string) error
		wantErr string
	}{
		{"empty file", func(p string) error { return os.WriteFile(p, nil, 0o644) }, "too short"},
		{"truncated length", func(p string) error { return os.WriteFile(p, []byte{1, 2, 3}, 0o644) }, "too short"},
		{"truncated header", func(p string) error {
			return checkpointtest.WriteWithLength(p, 500, []byte(ok[:40]), 0)
		}, "past the end"},
		{"huge length", func(p string) error {
			return checkpointtest.WriteWithLength(p, 1<<62, []byte(ok), 12)
		}, "exceeds"},
		{"length just over the limit", func(p string) error {
			return checkpointtest.WriteWithLength(p, safetensors.MaxHeaderSize+1, []byte(ok), 12)
		}, "exceeds"},
		{"bad JSON", func(p string) error { return checkpointtest.WriteRaw(p, []byte(`{"a":{"dtype":`), 0) }, "bad entry"},
		{"bad JSON at top level", func(p string) error { return checkpointtest.WriteRaw(p, []byte(`{"a" 1}`), 0) }, "not a JSON object"},
		{"duplicate tensor", func(p string) error {
			return checkpointtest.WriteRaw(p, []byte(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`), 2)
		}, "twice"},
		{"not an object", func(p string) error { return checkpointtest.WriteRaw(p, []byte(`[1,2]`), 0) }, "begin with"},
		{"overlapping offsets", func(p string) error {
			return checkpointtest.WriteRaw(p, []byte(`{"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`), 8)
		}, "overlap"},
		{"hole between tensors", func(p string) error {
			return checkpointtest.WriteRaw(p, []byte(`{"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[10,14]}}`), 14)
		}, "hole"},
		{"data past end of file", func(p string) error { return checkpointtest.WriteRaw(p, []byte(ok), 10) }, "past the"},
		{"trailing bytes", func(p string) error { return checkpointtest.WriteRaw(p, []byte(ok), 20) }, "holds 20"},
		{"dtype/size mismatch", func(p string) error {
			return checkpointtest.WriteRaw(p, []byte(`{"a":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,8]}}`), 8)
		}, "needs 12 bytes"},
		{"misaligned F4", func(p string) error {
			return checkpointtest.WriteRaw(p, []byte(`{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}`), 2)
		}, "whole number of bytes"},
		{"negative dimension", func(p string) error {
			return checkpointtest.WriteRaw(p, []byte(`{"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,0]}}`), 0)
		}, "negative"},
		{"element overflow", func(p string) error {
			return checkpointtest.WriteRaw(p, []byte(`{"a":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,0]}}`), 0)
		}, "too many elements"},
		{"missing offsets", func(p string) error {
			return checkpointtest.WriteRaw(p, []byte(`{"a":{"dtype":"U8","shape":[1]}}`), 1)
		}, "data_offsets"},
		{"reversed offsets", func(p string) error {
			return checkpointtest.WriteRaw(p, []byte(`{"a":{"dtype":"U8","shape":[0],"data_offsets":[4,0]}}`), 4)
		}, "increasing"},
		{"metadata not strings", func(p string) error {
			return checkpointtest.WriteRaw(p, []byte(`{"__metadata__":{"n":1}}`), 0)
		}, "__metadata__"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.safetensors")
			if err := c.write(path); err != nil {
				t.Fatal(err)
			}
			_, err := safetensors.ReadHeader(path)
			var e *safetensors.Error
			if !errors.As(err, &e) || e.Path != path {
				t.Fatalf("want *Error naming %s, got %v", path, err)
			}
			if !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("error %q does not mention %q", err, c.wantErr)
			}
		})
	}
}

func TestEmptyAndScalar(t *testing.T) {
	// Scalars hold one element; empty tensors none. Both are valid.
	hdr := []byte(`{"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"e":{"dtype":"BF16","shape":[0,7],"data_offsets":[4,4]}}`)
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := checkpointtest.WriteRaw(path, hdr, 4); err != nil {
		t.Fatal(err)
	}
	h, err := safetensors.ReadHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, tn := range h.Tensors {
		got[tn.Name] = tn.Elements()
	}
	if got["s"] != 1 || got["e"] != 0 {
		t.Errorf("elements: %v", got)
	}
}

func FuzzParseHeader(f *testing.F) {
	seeds := []string{
		`{"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}}`,
		`{"__metadata__":{"format":"pt"},"w":{"dtype":"U8","shape":[4,8],"data_offsets":[0,32]},"s":{"dtype":"F8_E4M3","shape":[4,1],"data_offsets":[32,36]}}`,
		`{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}`,
		`{"a":{"dtype":"??","shape":[1],"data_offsets":[0,1]}}`,
		`{}`, `[`, `{"a":1}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), int64(64))
	}
	f.Fuzz(func(t *testing.T, header []byte, dataLen int64) {
		if dataLen < 0 || dataLen > 1<<40 {
			return
		}
		buf := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
		buf = append(buf, header...)
		h, err := safetensors.ParseHeader(buf, int64(len(buf))+dataLen)
		if err != nil {
			return
		}
		var pos = h.DataStart
		for _, tn := range h.Tensors {
			if tn.Begin != pos || tn.End < tn.Begin {
				t.Fatalf("accepted non-contiguous tensor %+v", tn)
			}
			pos = tn.End
		}
		if pos != h.Size {
			t.Fatalf("accepted header whose data ends at %d in a %d-byte file", pos, h.Size)
		}
	})
}
