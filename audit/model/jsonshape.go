package model

import "fmt"

// maxJSONContainers bounds the objects and arrays in one config file. A real
// config.json holds a few dozen and an hf_quant_config.json a handful (its
// module lists are arrays of strings); decoding into map[string]any costs
// hundreds of bytes per container, so a file of nothing but empty objects
// would otherwise take gigabytes.
const maxJSONContainers = 100_000

// checkJSONShape counts objects and arrays outside strings in one pass over
// the bytes, before anything is decoded.
func checkJSONShape(data []byte) error {
	n := 0
	in, esc := false, false
	for _, c := range data {
		switch {
		case in:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				in = false
			}
		case c == '"':
			in = true
		case c == '{' || c == '[':
			if n++; n > maxJSONContainers {
				return fmt.Errorf("more than %d JSON objects and arrays; a config file holds far fewer", maxJSONContainers)
			}
		}
	}
	return nil
}
