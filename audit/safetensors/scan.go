package safetensors

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner is a small JSON reader specialised for safetensors headers and
// index files. encoding/json spends most of an audit's time building
// generic maps and reflecting into structs; headers have one fixed shape,
// so reading them directly is several times faster and allocates only the
// strings and slices the result keeps. It accepts exactly the JSON grammar
// (RFC 8259) and bounds nesting when skipping unknown values.
type scanner struct {
	b     []byte
	i     int
	arena []int64 // backing store for shapes, carved up to save allocations
}

const maxSkipDepth = 64

func (s *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: "+format, append([]any{s.i}, args...)...)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// consume skips whitespace and the byte c, reporting whether it was there.
func (s *scanner) consume(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// literal consumes "null", "true" or "false".
func (s *scanner) literal(word string) bool {
	s.ws()
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// str reads a JSON string. Invalid UTF-8 is replaced by U+FFFD, as
// encoding/json does.
func (s *scanner) str() (string, error) {
	if !s.consume('"') {
		return "", s.errorf("want a string")
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			if utf8.Valid(raw) {
				return string(raw), nil
			}
			return string([]rune(string(raw))), nil
		case c == '\\':
			return s.slowStr(start)
		case c < 0x20:
			return "", s.errorf("control character in string")
		}
		s.i++
	}
	return "", s.errorf("unterminated string")
}

// internedStr reads a string, returning the copy already in pool when
// there is one.
func (s *scanner) internedStr(pool map[string]string) (string, error) {
	save := s.i
	if s.consume('"') {
		start := s.i
		for s.i < len(s.b) && s.b[s.i] != '"' && s.b[s.i] != '\\' && s.b[s.i] >= 0x20 {
			s.i++
		}
		if s.i < len(s.b) && s.b[s.i] == '"' && utf8.Valid(s.b[start:s.i]) {
			if v, ok := pool[string(s.b[start:s.i])]; ok {
				s.i++
				return v, nil
			}
		}
	}
	s.i = save
	v, err := s.str()
	if err == nil && len(pool) < 1<<16 {
		pool[v] = v
	}
	return v, err
}

func (s *scanner) slowStr(start int) (string, error) {
	out := make([]byte, 0, s.i-start+16)
	out = append(out, s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			if utf8.Valid(out) {
				return string(out), nil
			}
			return string([]rune(string(out))), nil
		case c < 0x20:
			return "", s.errorf("control character in string")
		case c != '\\':
			out = append(out, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			break
		}
		e := s.b[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return "", s.errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
					save := s.i
					s.i += 2
					if x, ok := s.hex4(); ok {
						r2 = x
					} else {
						return "", s.errorf("bad \\u escape")
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						out = utf8.AppendRune(out, d)
						continue
					}
					s.i = save
				}
				// serde_json, which the reference implementation parses
				// headers with, refuses an unpaired surrogate in a string.
				return "", s.errorf("lone UTF-16 surrogate \\u%04X in a string", r)
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", s.errorf("bad escape \\%c", e)
		}
	}
	return "", s.errorf("unterminated string")
}

func (s *scanner) hex4() (rune, bool) {
	if len(s.b)-s.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
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
	s.i += 4
	return r, true
}

// number returns the raw bytes of a JSON number.
func (s *scanner) number() ([]byte, error) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	intStart := s.i
	if n := digits(); n == 0 || (n > 1 && s.b[intStart] == '0') {
		return nil, s.errorf("bad number")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return nil, s.errorf("bad number")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return nil, s.errorf("bad number")
		}
	}
	return s.b[start:s.i], nil
}

// int64 reads a JSON number that must be a whole int64 (as encoding/json
// requires when decoding into an int64).
func (s *scanner) int64() (int64, error) {
	raw, err := s.number()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, s.errorf("%s is not an int64", raw)
	}
	return n, nil
}

// intArray reads [int, ...] with at most max elements.
func (s *scanner) intArray(max int) ([]int64, error) {
	out, err := s.appendInts(nil, max)
	if out == nil && err == nil {
		out = []int64{}
	}
	return out, err
}

// appendInts reads [int, ...] (at most max elements) onto dst.
func (s *scanner) appendInts(dst []int64, max int) ([]int64, error) {
	if !s.consume('[') {
		return nil, s.errorf("want an array")
	}
	if s.consume(']') {
		return dst, nil
	}
	for n := 0; ; n++ {
		if n == max {
			return nil, s.errorf("array longer than %d", max)
		}
		v, err := s.int64()
		if err != nil {
			return nil, err
		}
		dst = append(dst, v)
		if s.consume(']') {
			return dst, nil
		}
		if !s.consume(',') {
			return nil, s.errorf("want ',' or ']'")
		}
	}
}

// shape reads a tensor shape into the scanner's arena, so that a header's
// shapes share a few large allocations.
func (s *scanner) shape() ([]int64, error) {
	if cap(s.arena)-len(s.arena) < MaxRank {
		s.arena = make([]int64, 0, 8192)
	}
	start := len(s.arena)
	out, err := s.appendInts(s.arena, MaxRank)
	if err != nil {
		return nil, err
	}
	s.arena = out
	return out[start:len(out):len(out)], nil
}

// skip consumes any JSON value.
func (s *scanner) skip(depth int) error {
	if depth > maxSkipDepth {
		return s.errorf("nesting deeper than %d", maxSkipDepth)
	}
	switch s.peek() {
	case '"':
		_, err := s.str()
		return err
	case '{':
		return s.object(func(string) error { return s.skip(depth + 1) })
	case '[':
		s.i++
		if s.consume(']') {
			return nil
		}
		for {
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			if s.consume(']') {
				return nil
			}
			if !s.consume(',') {
				return s.errorf("want ',' or ']'")
			}
		}
	case 't':
		if s.literal("true") {
			return nil
		}
	case 'f':
		if s.literal("false") {
			return nil
		}
	case 'n':
		if s.literal("null") {
			return nil
		}
	default:
		_, err := s.number()
		return err
	}
	return s.errorf("unexpected character")
}

// object reads {"key": value, ...}, calling member for each key with the
// scanner positioned at the value; member must consume the value.
func (s *scanner) object(member func(key string) error) error {
	if !s.consume('{') {
		return s.errorf("want an object")
	}
	if s.consume('}') {
		return nil
	}
	for {
		k, err := s.str()
		if err != nil {
			return err
		}
		if !s.consume(':') {
			return s.errorf("want ':'")
		}
		if err := member(k); err != nil {
			return err
		}
		if s.consume('}') {
			return nil
		}
		if !s.consume(',') {
			return s.errorf("want ',' or '}'")
		}
	}
}

// end checks that only whitespace follows.
func (s *scanner) end() error {
	s.ws()
	if s.i != len(s.b) {
		return s.errorf("data after the JSON value")
	}
	return nil
}
