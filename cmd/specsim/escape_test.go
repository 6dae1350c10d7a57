package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func escapeAll(chunks ...string) string {
	var b bytes.Buffer
	e := newEscaper(&b)
	for _, c := range chunks {
		e.Write([]byte(c))
	}
	e.Flush()
	return b.String()
}

func TestEscaper(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"mtp.\x1b[2Jfc.weight\n"}, `mtp.\u001b[2Jfc.weight` + "\n"},
		{[]string{"bel\x07 nul\x00 del\x7f tab\tok\n"}, `bel\u0007 nul\u0000 del\u007f tab` + "\tok\n"},
		{[]string{"\rsweep: 1/6", " name\rspoof"}, "\rsweep: 1/6" + ` name\u000dspoof`},
		{[]string{"csi \u009b31m", " rlo \u202eexe.txt"}, `csi \u009b31m rlo \u202eexe.txt`},
		{[]string{"bad \xff\xfe utf8"}, `bad \xff\xfe utf8`},
		// a multi-byte rune split across writes stays whole
		{[]string{"a \xe2\x89", "\xa4 b"}, "a \u2264 b"},
		{[]string{"end \xe2\x89"}, `end \xe2\x89`},
		{[]string{"plain ünïcode ≤ × µs\n"}, "plain ünïcode ≤ × µs\n"},
	} {
		if got := escapeAll(tc.in...); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzEscape: whatever a command prints, the terminal gets no control
// character but newline, tab and a leading carriage return, only UTF-8,
// and JSON stays the same JSON.
func FuzzEscape(f *testing.F) {
	f.Add("tensor \x1b]0;title\x07 name", "\rprogress", true)
	f.Add("\u202e\u0085\x00", "\xc2", false)
	f.Add("{\"name\": \"a\u202eb\u0085c\"}", "", true)
	f.Fuzz(func(t *testing.T, a, b string, asJSON bool) {
		if asJSON {
			raw, _ := json.Marshal(map[string]string{"name": a, "dtype": b})
			got := escapeAll(string(raw))
			var back, orig map[string]string
			if err := json.Unmarshal([]byte(got), &back); err != nil {
				t.Fatalf("escaped JSON %q does not parse: %v", got, err)
			}
			json.Unmarshal(raw, &orig)
			if back["name"] != orig["name"] || back["dtype"] != orig["dtype"] {
				t.Fatalf("JSON changed: %q -> %q", raw, got)
			}
			return
		}
		// a leading carriage return is the one kept on purpose
		got := escapeAll(strings.TrimLeft(a, "\r"), strings.TrimLeft(b, "\r"))
		if !utf8.ValidString(got) {
			t.Fatalf("not UTF-8: %q", got)
		}
		for i, r := range got {
			if ok := r == '\n' || r == '\t' || r >= 0x20 && r != 0x7f && !hiddenRune(r); !ok {
				t.Fatalf("raw %U at %d in %q", r, i, got)
			}
		}
	})
}
