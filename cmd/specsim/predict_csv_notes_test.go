package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// TestPredictCSVNotes: predict --format csv ends with a "note" table that
// holds the notes text and JSON carry. agg:dep8 spans two 4-GPU GB300
// hosts (multi-node); disagg 3xdep4+2xdep4 at 704 sessions gives each of
// the 2 decode workers 704/2 = 352 sessions, of which --max-running 32
// run (queued). A run without notes has no note table.
func TestPredictCSVNotes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--topology", "agg:dep8", "--isl", "1024", "--osl", "1024", "--conc", "64"}, []string{"multi-node"}},
		{[]string{"--topology", "disagg:3xdep4+2xdep4", "--conc", "704", "--max-running", "32", "--agentx", "duration=900"},
			[]string{fmt.Sprintf("queued: decode runs %d of %d", 32, 704/2)}},
		{[]string{"--topology", "agg:tp4", "--isl", "1024", "--osl", "1024", "--conc", "4"}, nil},
	} {
		code, out, errs := runCLI(append([]string{"predict", "--format", "csv"}, tc.args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d %s", tc.args, code, errs)
		}
		tabs := csvTables(t, out)
		last := tabs[len(tabs)-1]
		var got []string
		if last[0][0] == "note" {
			for _, row := range last[1:] {
				got = append(got, row[0])
			}
		}
		if len(got) < len(tc.want) || !reflect.DeepEqual(got[:len(tc.want)], tc.want) || tc.want == nil && got != nil {
			t.Errorf("%v: notes %q, want %q first", tc.args, got, tc.want)
		}
		_, js, _ := runCLI(append([]string{"predict", "--json"}, tc.args...)...)
		var d struct {
			Notes []string `json:"notes"`
		}
		if err := json.Unmarshal([]byte(js), &d); err != nil {
			t.Fatal(err)
		}
		if len(got) < len(d.Notes) || !reflect.DeepEqual(got[:len(d.Notes)], d.Notes) {
			t.Errorf("%v: CSV notes %q, JSON notes %q", tc.args, got, d.Notes)
		}
	}
}
