package main

import (
	"bytes"
	"sort"
)

// runCLI runs specsim with args as a user would and returns the exit code
// and what it printed.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// keysOf lists a decoded JSON object's keys, sorted.
func keysOf(m map[string]any) []string {
	k := make([]string, 0, len(m))
	for key := range m {
		k = append(k, key)
	}
	sort.Strings(k)
	return k
}
