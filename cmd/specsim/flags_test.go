package main

import (
	"bytes"
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestParseFlagsInterspersed(t *testing.T) {
	tests := []struct {
		args    []string
		wantPos []string
		wantJS  bool
	}{
		{[]string{"dir", "--json"}, []string{"dir"}, true},
		{[]string{"--json", "dir"}, []string{"dir"}, true},
		{[]string{"a", "b"}, []string{"a", "b"}, false},
		{[]string{"--", "--json"}, []string{"--json"}, false},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		js := fs.Bool("json", false, "")
		pos, err := parseFlags(fs, tt.args)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if !reflect.DeepEqual(pos, tt.wantPos) && !(len(pos) == 0 && len(tt.wantPos) == 0) {
			t.Errorf("%v: positional %v, want %v", tt.args, pos, tt.wantPos)
		}
		if *js != tt.wantJS {
			t.Errorf("%v: json %v, want %v", tt.args, *js, tt.wantJS)
		}
	}
}

func TestTableText(t *testing.T) {
	tb := table{header: []string{"name", ">value"}}
	tb.add("a", "1.5")
	tb.add("long", "10")
	var b bytes.Buffer
	tb.writeText(&b)
	want := "name  value\n----  -----\na       1.5\nlong     10\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	tb.writeMarkdown(&b)
	if !strings.Contains(b.String(), "|---|---:|") {
		t.Errorf("markdown alignment row missing: %q", b.String())
	}
}

func TestUnknownCommandExit2(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"no-such-command"}, &out, &errb); code != exitBadInput {
		t.Errorf("exit %d, want %d", code, exitBadInput)
	}
	if !strings.Contains(errb.String(), "no-such-command") {
		t.Errorf("stderr does not name the command: %q", errb.String())
	}
}

// A line break inside a cell ended the Markdown row: the rest of the cell
// became a line of its own and the table stopped rendering there.
func TestTableMarkdownCellStaysOnItsRow(t *testing.T) {
	for _, tc := range []struct {
		cell, want string
	}{
		{"plain", "| plain | 1 |"},
		{"a|b", `| a\|b | 1 |`},
		{"model\nX", `| model\nX | 1 |`},
		{"a\r\nb", `| a\nb | 1 |`},
		{"a\rb", `| a\rb | 1 |`},
		{"x\n| evil | row |", `| x\n\| evil \| row \| | 1 |`},
	} {
		tb := table{header: []string{"name", ">value"}}
		tb.add(tc.cell, "1")
		var b bytes.Buffer
		tb.writeMarkdown(&b)
		want := "| name | value |\n|---|---:|\n" + tc.want + "\n"
		if b.String() != want {
			t.Errorf("cell %q: got\n%s\nwant\n%s", tc.cell, b.String(), want)
		}
	}
}
