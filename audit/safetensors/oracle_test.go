package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"testing"
	"unicode/utf8"
)

var errSyntax = errors.New("invalid JSON")

// oracleHeader parses a header with encoding/json, the straightforward way,
// to check the hand-written scanner against: same tensors, or both reject.
// Where encoding/json is laxer than the reference implementation
// (huggingface/safetensors tensor.rs: from_utf8, then serde_json into
// HashMetadata), the oracle applies the reference's rule first: invalid
// UTF-8 (encoding/json substitutes U+FFFD), unpaired surrogate escapes (the
// same), and null metadata values (encoding/json leaves "").
func oracleHeader(buf []byte, size int64) (*Header, error) {
	if len(buf) == 0 || buf[0] != '{' {
		return nil, errSyntax
	}
	if !utf8.Valid(buf) || loneSurrogate(buf) {
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
				if v == nil {
					return nil, errSyntax
				}
				h.Metadata[k] = *v
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

// loneSurrogate reports a \uD800-\uDFFF escape inside a JSON string that
// is not a high surrogate followed at once by a low one.
func loneSurrogate(b []byte) bool {
	hex := func(i int) (rune, bool) {
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		var r rune
		for _, c := range b[i+2 : i+6] {
			switch {
			case c >= '0' && c <= '9':
				r = r<<4 | rune(c-'0')
			case c >= 'a' && c <= 'f':
				r = r<<4 | rune(c-'a'+10)
			case c >= 'A' && c <= 'F':
				r = r<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return r, true
	}
	in := false
	for i := 0; i < len(b); i++ {
		switch {
		case !in:
			in = b[i] == '"'
		case b[i] == '"':
			in = false
		case b[i] == '\\':
			r, ok := hex(i)
			if !ok {
				i++ // skip the escaped character
				continue
			}
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return true
			case r >= 0xD800 && r <= 0xDBFF:
				r2, ok := hex(i + 6)
				if !ok || r2 < 0xDC00 || r2 > 0xDFFF {
					return true
				}
				i += 11
			default:
				i += 5
			}
		}
	}
	return false
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
