// Command derive turns a directory of kv-cache-tester trace files into the
// compact corpus specsim embeds (simulate/agentx/data/kv-cache-tester.agx.gz):
//
//	go run ./simulate/agentx/derive -o simulate/agentx/data/kv-cache-tester.agx.gz DIR
//
// DIR is the traces/ folder of github.com/callanjfox/kv-cache-tester.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/specsim/specsim/simulate/agentx"
)

func main() {
	out := flag.String("o", "", "output file (compact corpus, gzip)")
	flag.Parse()
	if flag.NArg() != 1 || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: derive -o FILE TRACE_DIR")
		os.Exit(2)
	}
	traces, err := agentx.LoadTraces(flag.Arg(0), 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := agentx.EncodeCorpus(f, traces); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	n := 0
	for _, t := range traces {
		n += len(t.Requests)
	}
	fmt.Printf("%d traces, %d requests -> %s\n", len(traces), n, *out)
}
