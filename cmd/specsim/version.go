package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

func init() {
	register(&command{name: "version", summary: "print the specsim version (echoed in every sweep output)", run: runVersion})
}

// version is set at release with -ldflags "-X main.version=v1.2.3"; a
// development build reports its module version or VCS revision instead.
var version = ""

// specsimVersion is the version string sweep outputs echo.
func specsimVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "devel-" + rev
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", "\nspecsim version: print the version of this build and the Go toolchain.\n\nExample:\n  specsim version\n", stderr)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return usageExit(err)
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "specsim version: unexpected argument %q\n", rest[0])
		return exitBadInput
	}
	fmt.Fprintf(stdout, "specsim %s (%s %s/%s)\n", specsimVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}
