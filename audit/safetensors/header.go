// Package safetensors reads the headers of safetensors files and the
// model.safetensors.index.json that ties shards together, without touching
// tensor data.
//
// A checkpoint audit needs names, dtypes, shapes and offsets of hundreds of
// thousands of tensors spread over files of many gigabytes. The format puts
// all of that in a JSON header at the front of each file: an 8-byte
// little-endian length followed by that many bytes of JSON. ReadHeader reads
// exactly those bytes (and the file size from stat), so a 25 GB checkpoint
// costs a few megabytes of I/O. It validates what the reference
// implementation (huggingface/safetensors, src/tensor.rs) validates:
// bounded header length, offsets that tile the data buffer exactly, and
// byte counts equal to elements times the dtype width, with sub-byte types
// (F4, F6_*) packed and required to end on a byte boundary.
//
// github.com/nlpodyssey/safetensors cannot serve as this reader: it parses
// only from a buffer holding the whole file, and its dtype set stops at the
// 2023 list, so every F8_E4M3/F8_E5M2/F8_E8M0/F4/F6 header (all NVFP4 and
// FP8 checkpoints) fails to parse.
package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/specsim/specsim/internal/regular"
)

// MaxHeaderSize is the largest JSON header accepted, in bytes; the
// reference implementation uses the same bound.
const MaxHeaderSize = 100_000_000

// MaxRank bounds the number of dimensions of one tensor; real tensors have
// at most a handful.
const MaxRank = 64

// Tensor is one entry of a safetensors header.
type Tensor struct {
	Name  string
	DType string  // as spelled in the header ("BF16", "F8_E4M3", "U8", ...)
	Shape []int64 // empty for a scalar
	// Begin and End are absolute byte offsets in the file (the header's
	// data_offsets plus DataStart), End exclusive.
	Begin, End int64
}

// Elements is the product of the shape (1 for a scalar). ReadHeader has
// already rejected shapes whose product overflows int64.
func (t Tensor) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Bytes is the size of the tensor's data in the file.
func (t Tensor) Bytes() int64 { return t.End - t.Begin }

// KnownDType reports whether the tensor's dtype is one the format defines.
func (t Tensor) KnownDType() bool {
	_, ok := dtypeBits[t.DType]
	return ok
}

// Header is the parsed header of one safetensors file.
type Header struct {
	Path      string
	Size      int64 // file size in bytes
	DataStart int64 // 8 + JSON header length: where tensor data begins
	Tensors   []Tensor
	Metadata  map[string]string // the free-form __metadata__ map, nil if absent
	BytesRead int64             // bytes read from the file (length prefix + header)
}

// Error is a problem with one file, and with one tensor in it when Tensor is
// not empty.
type Error struct {
	Path   string
	Tensor string
	Err    error
}

func (e *Error) Error() string {
	if e.Tensor != "" {
		return fmt.Sprintf("%s: tensor %q: %v", e.Path, truncName(e.Tensor), e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ReadHeader reads and validates the header of the safetensors file at path.
// It reads only the 8-byte length and the JSON header. Tensors come back
// sorted by name. A tensor with a dtype the format does not define is kept
// (its size cannot be checked, but its offsets still must tile the buffer);
// callers decide what to make of it. Every error is an *Error naming the
// file.
func ReadHeader(path string) (*Header, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &Error{Path: path, Err: err}
	}
	h, err := readHeader(f, st.Size())
	if err != nil {
		return nil, &Error{Path: path, Tensor: tensorOf(err), Err: unwrapTensor(err)}
	}
	h.Path = path
	return h, nil
}

// OpenRegular opens path for reading and then checks that the open file is
// a regular file (see internal/regular), so that a FIFO or device planted in
// a checkpoint directory, or swapped in after a check, cannot block the
// reader.
func OpenRegular(path string) (*os.File, error) {
	f, _, err := regular.Open(path)
	return f, err
}

// ParseHeader validates a header given as the first bytes of a file of the
// given total size (the fuzz tests and in-memory callers use it). data must
// hold at least the length prefix and the JSON header.
func ParseHeader(data []byte, fileSize int64) (*Header, error) {
	return readHeader(bytes.NewReader(data), fileSize)
}

// tensorErr carries the tensor name out of the parser so ReadHeader can put
// it into the *Error.
// headerBufs recycles header buffers between files: parse copies out
// every string it keeps, so a buffer is free once its header is parsed.
var headerBufs sync.Pool

func getBuf(n int) *[]byte {
	if bp, ok := headerBufs.Get().(*[]byte); ok && cap(*bp) >= n {
		return bp
	}
	b := make([]byte, n)
	return &b
}

type tensorErr struct {
	name string
	err  error
}

func (e *tensorErr) Error() string { return fmt.Sprintf("tensor %q: %v", truncName(e.name), e.err) }

func tensorOf(err error) string {
	var te *tensorErr
	if errors.As(err, &te) {
		return te.name
	}
	return ""
}

func unwrapTensor(err error) error {
	var te *tensorErr
	if errors.As(err, &te) {
		return te.err
	}
	return err
}

func readHeader(r io.Reader, size int64) (*Header, error) {
	if size < 8 {
		return nil, fmt.Errorf("file is %d bytes, too short for the 8-byte header length", size)
	}
	var prefix [8]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		return nil, fmt.Errorf("reading header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(prefix[:])
	if n > MaxHeaderSize {
		return nil, fmt.Errorf("header length %d exceeds the %d-byte limit", n, MaxHeaderSize)
	}
	if int64(n) > size-8 {
		return nil, fmt.Errorf("header length %d runs past the end of the %d-byte file", n, size)
	}
	if n < 2 {
		return nil, fmt.Errorf("header length %d is too short for a JSON object", n)
	}
	bp := getBuf(int(n))
	defer headerBufs.Put(bp)
	buf := (*bp)[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("reading %d-byte header: %w", n, err)
	}
	h := &Header{Size: size, DataStart: 8 + int64(n), BytesRead: 8 + int64(n)}
	if err := h.parse(buf); err != nil {
		return nil, err
	}
	if err := h.validate(); err != nil {
		return nil, err
	}
	if err := h.sortByName(); err != nil {
		return nil, err
	}
	return h, nil
}

// parse reads the header JSON by the reference implementation's rules
// (huggingface/safetensors safetensors/src/tensor.rs, read_metadata and
// HashMetadata): the header must be UTF-8 (core::str::from_utf8), strings
// may not hold an unpaired surrogate escape (serde_json), a tensor entry
// names each of dtype, shape and data_offsets once (serde's derived
// TensorInfo refuses a duplicate field), and __metadata__ is null or maps
// strings to strings (Option<HashMap<String, String>>). The reference keeps
// the last of two tensors with one name; this parser refuses them.
func (h *Header) parse(buf []byte) error {
	if !utf8.Valid(buf) {
		i := 0
		for i < len(buf) {
			r, n := utf8.DecodeRune(buf[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return fmt.Errorf("header is not valid UTF-8 (byte 0x%02x at offset %d)", buf[i], i)
	}
	s := &scanner{b: buf}
	if s.peek() != '{' {
		return errors.New("header does not begin with '{'")
	}
	// One allocation of the right size: each entry names data_offsets once
	// (a second one is refused), and growing by doubling would hold up to
	// twice the memory.
	h.Tensors = make([]Tensor, 0, bytes.Count(buf, []byte(`"data_offsets"`)))
	err := s.object(func(name string) error {
		if name == "__metadata__" {
			if h.Metadata != nil {
				return errors.New("__metadata__ appears twice")
			}
			md, err := stringMap(s)
			if err != nil {
				return fmt.Errorf("__metadata__ must map strings to strings: %w", err)
			}
			h.Metadata = md
			return nil
		}
		t, err := parseTensor(s, name)
		if err != nil {
			return &tensorErr{name: name, err: err}
		}
		h.Tensors = append(h.Tensors, t)
		return nil
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		if tensorOf(err) != "" {
			return err
		}
		return fmt.Errorf("header is not a JSON object: %w", err)
	}
	if h.Tensors == nil {
		h.Tensors = []Tensor{}
	}
	return nil
}

// sortByName puts the tensors in name order and rejects a name listed
// twice (encoding/json and the reference implementation would keep one
// entry silently).
func (h *Header) sortByName() error {
	slices.SortFunc(h.Tensors, func(a, b Tensor) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(h.Tensors); i++ {
		if h.Tensors[i].Name == h.Tensors[i-1].Name {
			return &tensorErr{name: h.Tensors[i].Name, err: errors.New("appears twice in the header")}
		}
	}
	return nil
}

// stringMap reads {"k": "v", ...} or null (a nil map, as encoding/json
// gives).
func stringMap(s *scanner) (map[string]string, error) {
	if s.peek() == 'n' && s.literal("null") {
		return map[string]string{}, nil
	}
	m := map[string]string{}
	err := s.object(func(k string) error {
		if s.peek() != '"' {
			return fmt.Errorf("the value of %q is not a string", truncName(k))
		}
		v, err := s.str()
		if err != nil {
			return err
		}
		m[k] = v
		return nil
	})
	return m, err
}

func parseTensor(s *scanner, name string) (Tensor, error) {
	t := Tensor{Name: name}
	var hasDType, hasShape bool
	var off []int64
	if s.peek() == 'n' && s.literal("null") {
		return Tensor{}, errors.New(`missing "dtype"`)
	}
	seen := 0
	err := s.object(func(k string) error {
		bit := 0
		switch k {
		case "dtype":
			bit = 1
		case "shape":
			bit = 2
		case "data_offsets":
			bit = 4
		}
		if seen&bit != 0 {
			return fmt.Errorf("duplicate field %q", k)
		}
		seen |= bit
		if s.peek() == 'n' && s.literal("null") {
			switch k {
			case "dtype":
				hasDType = false
			case "shape":
				hasShape = false
			case "data_offsets":
				off = nil
			}
			return nil
		}
		var err error
		switch k {
		case "dtype":
			t.DType, err = s.str()
			hasDType = err == nil
		case "shape":
			t.Shape, err = s.shape()
			if err != nil {
				return fmt.Errorf("shape: %w", err)
			}
			hasShape = true
		case "data_offsets":
			off, err = s.intArray(3)
			if err != nil {
				return fmt.Errorf("data_offsets: %w", err)
			}
		default:
			err = s.skip(0)
		}
		return err
	})
	if err != nil {
		return Tensor{}, fmt.Errorf("bad entry: %w", err)
	}
	switch {
	case !hasDType:
		return Tensor{}, errors.New(`missing "dtype"`)
	case !hasShape:
		return Tensor{}, errors.New(`missing "shape"`)
	case off == nil:
		return Tensor{}, errors.New(`missing "data_offsets"`)
	case len(off) != 2:
		return Tensor{}, fmt.Errorf("data_offsets has %d values, want 2", len(off))
	}
	elems := uint64(1)
	for _, d := range t.Shape {
		if d < 0 {
			return Tensor{}, fmt.Errorf("negative dimension in shape %v", t.Shape)
		}
		hi, lo := bits.Mul64(elems, uint64(d))
		if hi != 0 || lo > math.MaxInt64/64 {
			return Tensor{}, fmt.Errorf("shape %v has too many elements", t.Shape)
		}
		elems = lo
	}
	if off[0] < 0 || off[1] < off[0] {
		return Tensor{}, fmt.Errorf("data_offsets [%d, %d] are not an increasing pair of non-negative offsets", off[0], off[1])
	}
	if b, ok := dtypeBits[t.DType]; ok {
		nbits := elems * uint64(b)
		if nbits%8 != 0 {
			return Tensor{}, fmt.Errorf("%s %v is %d bits, not a whole number of bytes", t.DType, t.Shape, nbits)
		}
		if want := int64(nbits / 8); off[1]-off[0] != want {
			return Tensor{}, fmt.Errorf("%s %v needs %d bytes but data_offsets [%d, %d] span %d",
				t.DType, t.Shape, want, off[0], off[1], off[1]-off[0])
		}
	}
	t.Begin, t.End = off[0], off[1]
	return t, nil
}

// validate checks that the tensors tile [0, data length) with no gap and no
// overlap, and that the data ends exactly at the end of the file.
func (h *Header) validate() error {
	slices.SortFunc(h.Tensors, func(a, b Tensor) int {
		if a.Begin != b.Begin {
			if a.Begin < b.Begin {
				return -1
			}
			return 1
		}
		if a.End != b.End {
			if a.End < b.End {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	dataLen := h.Size - h.DataStart
	var pos int64
	for i := range h.Tensors {
		t := &h.Tensors[i]
		switch {
		case t.Begin < pos:
			prev := h.Tensors[i-1].Name
			return &tensorErr{name: t.Name, err: fmt.Errorf("data_offsets [%d, %d] overlap tensor %q, which ends at %d", t.Begin, t.End, prev, pos)}
		case t.Begin > pos:
			return &tensorErr{name: t.Name, err: fmt.Errorf("data_offsets start at %d, leaving a %d-byte hole after offset %d", t.Begin, t.Begin-pos, pos)}
		case t.End > dataLen:
			return &tensorErr{name: t.Name, err: fmt.Errorf("data ends at offset %d, past the %d bytes of data in the file (truncated?)", t.End, dataLen)}
		}
		pos = t.End
		t.Begin += h.DataStart
		t.End += h.DataStart
	}
	if pos != dataLen {
		return fmt.Errorf("tensors cover %d bytes of data but the file holds %d after the header", pos, dataLen)
	}
	return nil
}

// maxNameInError is the most bytes of a tensor name or key an error quotes:
// a header may hold a name of many megabytes, and an error line should stay
// a line.
const maxNameInError = 160

// truncName shortens a name for an error message, saying how long it was.
func truncName(s string) string {
	if len(s) <= maxNameInError {
		return s
	}
	cut := maxNameInError
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:cut], len(s))
}
