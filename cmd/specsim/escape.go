package main

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// escaper stands between every command and the terminal. Tensor names,
// dtypes, shard names, golden keys, log ranks and file names come from
// input files, and a control character among them (ESC starts a terminal
// escape sequence, BEL rings, NUL and CR hide text) must reach the terminal
// as visible text. escaper rewrites C0 controls other than newline and tab,
// DEL, C1 controls and the Unicode bidirectional overrides as \u00XX-style
// escapes, and bytes that are not UTF-8 as \xNN. The \u form is also a
// valid escape inside a JSON string, and encoding/json never writes a raw
// control character outside one, so JSON output stays JSON. A carriage
// return is kept only as the first byte of a write: the progress line
// rewrites itself that way, and no input text can start a write.
type escaper struct {
	w io.Writer
	// helpTo, on the stderr escaper, is where --help text goes: run sets
	// it to the stdout escaper (newFlagSet).
	helpTo  io.Writer
	pending []byte // an incomplete UTF-8 sequence at the end of the last write
	buf     []byte
}

func newEscaper(w io.Writer) *escaper { return &escaper{w: w} }

func (e *escaper) Write(p []byte) (int, error) {
	n := len(p)
	data := p
	if len(e.pending) > 0 {
		data = append(e.pending, p...)
		e.pending = nil
	}
	out := e.buf[:0]
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\n' || c == '\t' || c == '\r' && i == 0:
				out = append(out, c)
			case c < 0x20 || c == 0x7f:
				out = fmt.Appendf(out, `\u%04x`, c)
			default:
				out = append(out, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			if !utf8.FullRune(data[i:]) {
				// may complete in the next write
				e.pending = append([]byte(nil), data[i:]...)
				break
			}
			out = fmt.Appendf(out, `\x%02x`, data[i])
			i++
			continue
		}
		if hiddenRune(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, data[i:i+size]...)
		}
		i += size
	}
	e.buf = out
	if _, err := e.w.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}

// Flush writes out an incomplete UTF-8 sequence left at the end, escaped.
func (e *escaper) Flush() {
	if len(e.pending) == 0 {
		return
	}
	var out []byte
	for _, b := range e.pending {
		out = fmt.Appendf(out, `\x%02x`, b)
	}
	e.pending = nil
	e.w.Write(out)
}

// hiddenRune reports the non-ASCII runes that change what a terminal shows
// without being shown: C1 controls (U+0080..U+009F, CSI among them) and the
// bidirectional embeddings, overrides and isolates that reorder a line.
func hiddenRune(r rune) bool {
	return r >= 0x80 && r <= 0x9f ||
		r >= 0x202a && r <= 0x202e ||
		r >= 0x2066 && r <= 0x2069 ||
		r == 0x200e || r == 0x200f || r == 0x061c
}
