package safetensors

// dtypeBits is the element width of every dtype the safetensors format
// defines (huggingface/safetensors src/tensor.rs, Dtype::bitsize). Names are
// the serialized spellings. Sub-byte types (F4, F6_*) are packed densely, so
// a tensor's byte count is elements*bits/8 and must come out whole.
var dtypeBits = map[string]int{
	"BOOL":        8,
	"F4":          4,
	"F6_E2M3":     6,
	"F6_E3M2":     6,
	"U8":          8,
	"I8":          8,
	"F8_E5M2":     8,
	"F8_E4M3":     8,
	"F8_E8M0":     8,
	"F8_E4M3FNUZ": 8,
	"F8_E5M2FNUZ": 8,
	"I16":         16,
	"U16":         16,
	"F16":         16,
	"BF16":        16,
	"I32":         32,
	"U32":         32,
	"F32":         32,
	"C64":         64,
	"F64":         64,
	"I64":         64,
	"U64":         64,
}

// DTypeBits returns the bits per element of a safetensors dtype (F4 = 4,
// F6_E2M3 = 6, BF16 = 16, ...) and false for a dtype the format does not
// define.
func DTypeBits(dtype string) (int, bool) {
	b, ok := dtypeBits[dtype]
	return b, ok
}
