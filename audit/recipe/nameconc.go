package recipe

import (
	"strconv"
	"strings"
)

// NameConcurrency reads the benchmark concurrency a variant's name spells
// as a "c<N>" token (override_tp2_tp2_c72, agg-gb300-tp2-c24-mtp-...),
// the naming convention of InferenceX's srt-slurm recipes. srt-slurm itself
// gives the name no meaning (src/srtctl/core/config.py,
// generate_override_configs keeps the override suffix as a name only);
// InferenceX passes the concurrency to the benchmark from its master
// config's conc-list (benchmarks/multi_node/agentic_srt.sh reads CONC), and
// names each recipe after it. ok is false when the names carry no such
// token, or tokens that disagree.
func NameConcurrency(names ...string) (conc int, ok bool) {
	for _, name := range names {
		for _, tok := range strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ':' }) {
			if len(tok) < 2 || len(tok) > 7 || tok[0] != 'c' {
				continue
			}
			n, err := strconv.Atoi(tok[1:])
			if err != nil || n < 1 || tok[1] == '0' || tok[1] == '+' {
				continue
			}
			if ok && n != conc {
				return 0, false
			}
			conc, ok = n, true
		}
	}
	return conc, ok
}
