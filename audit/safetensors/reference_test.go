package safetensors

import (
	"encoding/binary"
	"strings"
	"testing"
)

// TestReferenceLoaderRules holds headers at the edges where encoding/json
// and the safetensors reference implementation disagree, with the
// reference's verdict: huggingface/safetensors safetensors/src/tensor.rs,
// SafeTensors::read_metadata (core::str::from_utf8 on the header bytes, then
// serde_json::from_str into HashMetadata { __metadata__:
// Option<HashMap<String, String>>, flatten HashMap<String, TensorInfo> },
// TensorInfo { dtype, shape: Vec<usize>, data_offsets: (usize, usize) }).
// "refuse" cases fail there with InvalidHeader or
// InvalidHeaderDeserialization; the parser must refuse them too, naming
// what is wrong.
func TestReferenceLoaderRules(t *testing.T) {
	const a = `"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}`
	for _, tc := range []struct {
		name, header string
		want         string // "" = the reference accepts
	}{
		{"plain", `{` + a + `}`, ""},
		{"metadata null (Option::None)", `{"__metadata__":null,` + a + `}`, ""},
		{"metadata strings", `{"__metadata__":{"format":"pt"},` + a + `}`, ""},
		{"surrogate pair in a name", `{"a\ud83d\ude00":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, ""},
		{"unknown field ignored (no deny_unknown_fields)", `{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"x":[1,{"y":null}]}}`, ""},
		{"padding after the object", `{` + a + `}    `, ""},

		{"invalid UTF-8 in a name (from_utf8)", "{\"a\xff\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}", "not valid UTF-8 (byte 0xff at offset 3)"},
		{"invalid UTF-8 in padding", "{" + a + "}\xc3", "not valid UTF-8"},
		{"lone high surrogate", `{"a\ud800":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, `lone UTF-16 surrogate \uD800`},
		{"lone low surrogate", `{"__metadata__":{"k":"\udc00"},` + a + `}`, `lone UTF-16 surrogate \uDC00`},
		{"high surrogate then a non-surrogate escape", `{"a\ud800\u0041":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, "lone UTF-16 surrogate"},
		{"data_offsets twice (duplicate field)", `{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,1],"data_offsets":[0,2]}}`, `duplicate field "data_offsets"`},
		{"dtype twice", `{"a":{"dtype":"U8","dtype":"BF16","shape":[1],"data_offsets":[0,2]}}`, `duplicate field "dtype"`},
		{"__metadata__ twice", `{"__metadata__":{},"__metadata__":{},` + a + `}`, "__metadata__ appears twice"},
		{"metadata value null", `{"__metadata__":{"k":null},` + a + `}`, `the value of "k" is not a string`},
		{"metadata value a number", `{"__metadata__":{"k":1},` + a + `}`, `the value of "k" is not a string`},
		{"metadata value an object", `{"__metadata__":{"k":{"x":"y"}},` + a + `}`, `the value of "k" is not a string`},
		{"metadata a list", `{"__metadata__":["x"],` + a + `}`, "__metadata__ must map strings to strings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf := binary.LittleEndian.AppendUint64(nil, uint64(len(tc.header)))
			buf = append(buf, tc.header...)
			_, err := ParseHeader(buf, int64(len(buf))+2)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused what the reference accepts: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// A name of megabytes is quoted shortened in an error, with its length.
func TestLongNameTruncatedInErrors(t *testing.T) {
	name := strings.Repeat("x", 1<<20)
	header := `{"` + name + `":{"dtype":"U8","shape":[3],"data_offsets":[0,2]}}`
	buf := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	buf = append(buf, header...)
	_, err := ParseHeader(buf, int64(len(buf))+2)
	if err == nil {
		t.Fatal("accepted a size mismatch")
	}
	e := (&Error{Path: "f.safetensors", Tensor: tensorOf(err), Err: unwrapTensor(err)}).Error()
	if len(e) > 400 || !strings.Contains(e, "... (1048576 bytes)") {
		t.Errorf("error of %d bytes: %.300q", len(e), e)
	}
}
