package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"testing"
)

var errSyntax = errors.New("invalid JSON")

// oracleHeader parses a header with encoding/json, the straightforward way,
// to check the hand-written scanner against: same tensors, or both reject.
func oracleHeader(buf []byte, size int64) (*Header, error) {
	if len(buf) == 0 || buf[0] != '{' {
		return nil, errSyntax
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(buf, &entries); err != nil {
		return nil, err
	}
	h := &Header{Size: size, DataStart: 8 + int64(len(buf)), Tensors: []Tensor{}}
	for name, raw := range entries {
		if name == "__metadata__" {
			var md map[string]*string
			if err := json.Unmarshal(raw, &md); err != nil {
				return nil, err
			}
			h.Metadata = map[string]string{}
			for k, v := range md {
				if v != nil {
					h.Metadata[k] = *v
				} else {
					h.Metadata[k] = ""
				}
			}
			continue
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
			return nil, errSyntax
		}
		var t Tensor
		t.Name = name
		var dt *string
		var shape, off *[]int64
		if err := unmarshalIf(fields["dtype"], &dt); err != nil {
			return nil, err
		}
		if err := unmarshalIf(fields["shape"], &shape); err != nil {
			return nil, err
		}
		if err := unmarshalIf(fields["data_offsets"], &off); err != nil {
			return nil, err
		}
		if dt == nil || shape == nil || off == nil || len(*off) != 2 || len(*shape) > MaxRank {
			return nil, errSyntax
		}
		enc, _ := json.Marshal(map[string]any{"dtype": *dt, "shape": *shape, "data_offsets": *off})
		s := &scanner{b: enc}
		pt, err := parseTensor(s, name)
		if err != nil {
			return nil, err
		}
		t = pt
		h.Tensors = append(h.Tensors, t)
	}
	if err := h.validate(); err != nil {
		return nil, err
	}
	return h, nil
}

func unmarshalIf(raw json.RawMessage, v any) error {
	if raw == nil {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// duplicateKeys reports whether any JSON object in data repeats a key
// (encoding/json keeps the last silently; the scanner rejects).
func duplicateKeys(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		obj  bool
		keys map[string]bool
		key  bool // next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		top := func() *frame {
			if len(stack) == 0 {
				return nil
			}
			return stack[len(stack)-1]
		}
		f := top()
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, &frame{obj: true, keys: map[string]bool{}, key: true})
				continue
			case '[':
				stack = append(stack, &frame{})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if f != nil && f.obj && f.key {
				if f.keys[v] {
					return true
				}
				f.keys[v] = true
				f.key = false
				continue
			}
		}
		if f = top(); f != nil && f.obj {
			f.key = true
		}
	}
}

func sortedTensors(h *Header) []Tensor {
	ts := append([]Tensor(nil), h.Tensors...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	for i := range ts {
		if len(ts[i].Shape) == 0 {
			ts[i].Shape = []int64{}
		}
	}
	return ts
}

// FuzzHeaderAgainstEncodingJSON checks the scanner-based header parser
// against encoding/json on arbitrary input.
func FuzzHeaderAgainstEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}}`,
		`{"__metadata__":{"format":"pt"},"w":{"dtype":"U8","shape":[4,8],"data_offsets":[0,32]},"s":{"dtype":"F8_E4M3","shape":[4,1],"data_offsets":[32,36]}}`,
		`{"a\u00e9\ud83d\ude00":{"dtype":"F4","shape":[4],"data_offsets":[0,2],"extra":[{"x":null}]}}`,
		`{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}} `,
		`{"a":{"dtype":null,"shape":[1],"data_offsets":[0,1]}}`,
		`{"a":{"dtype":"U8","shape":[1e0],"data_offsets":[0,1]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, header []byte) {
		var dataLen int64 = 64
		if h, err := oracleHeader(header, 1<<40); err == nil && len(h.Tensors) > 0 {
			dataLen = h.Tensors[len(h.Tensors)-1].End - h.DataStart
		}
		buf := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
		buf = append(buf, header...)
		size := int64(len(buf)) + dataLen
		got, gotErr := ParseHeader(buf, size)
		want, wantErr := oracleHeader(header, size)
		switch {
		case gotErr == nil && wantErr != nil:
			t.Fatalf("scanner accepted what encoding/json rejects (%v): %q", wantErr, header)
		case gotErr != nil && wantErr == nil:
			if !duplicateKeys(header) {
				t.Fatalf("scanner rejected (%v) what encoding/json accepts: %q", gotErr, header)
			}
		case gotErr == nil:
			if !reflect.DeepEqual(sortedTensors(got), sortedTensors(want)) {
				t.Fatalf("tensors differ:\n got %+v\nwant %+v", got.Tensors, want.Tensors)
			}
			if len(got.Metadata) != len(want.Metadata) {
				t.Fatalf("metadata differs: %v vs %v", got.Metadata, want.Metadata)
			}
			for k, v := range want.Metadata {
				if got.Metadata[k] != v {
					t.Fatalf("metadata[%q] = %q, want %q", k, got.Metadata[k], v)
				}
			}
		}
	})
}
