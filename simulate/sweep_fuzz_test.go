package simulate

import (
	"strings"
	"testing"
)

// FuzzParseShard: --shard either fails or gives 0 <= I < N <= 4096 that
// prints back as the input.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/4", "3/4", "4/4", "-1/2", "1/0", "a/b", "1", "0/4096", "00/4", "+1/4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			return
		}
		if sh.Index < 0 || sh.Index >= sh.Count || sh.Count > 4096 {
			t.Fatalf("ParseShard(%q) = %+v", s, sh)
		}
	})
}

// FuzzReadSweepOutput: merge's reader never panics and either refuses a
// file or returns one with inputs.
func FuzzReadSweepOutput(f *testing.F) {
	for _, s := range []string{`{}`, `{"inputs":{"specsim_version":"x","model":"m"},"points":[]}`, `{"points":3}`, `[`,
		`{"inputs":{"specsim_version":"x","model":"m","sla":{"max_ttft_ms_p90":-1}}}`, `{"inputs":{"specsim_version":"x","model":"m","shard":{"index":1,"count":2}},"points":[{"index":1,"sim":"event"}]}`,
		`{"inputs":{"specsim_version":"x","model":"m","gpus":8,"concs":[4],"steps":[3,3],"scope":"all"},"points":[{"topology":"agg:tp8","conc":4,"steps":3}],"frontier":[],"band":null}`,
		`{"inputs":{"specsim_version":"x","model":"m","gpus":8,"concs":[4],"steps":[3,3],"topologies":["agg:tp8"]},"points":[{"topology":"agg:tp999","conc":4,"steps":3}]}`,
		`{"points":[{"index":0}],"inputs":{}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ReadSweepOutput("f.json", strings.NewReader(s))
		if err != nil {
			if !strings.Contains(err.Error(), "f.json") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if o.Inputs.Model == "" {
			t.Fatal("accepted a file without inputs")
		}
		// Merging one file must not panic either.
		_, _ = Merge([]string{"f.json"}, []*SweepOutput{o}, nil, nil)
	})
}
