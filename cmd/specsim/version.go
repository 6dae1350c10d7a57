package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
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
		return binaryVersion()
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
		return binaryVersion()
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "devel-" + rev
}

// binaryVersion names a build without version or VCS stamp (built with
// -buildvcs=false, or outside a repository) by its executable's content,
// so that sweep shards of different builds still differ: "devel-bin-"
// and the first 12 hex digits of the executable's SHA-256, computed once.
var binaryVersion = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return "devel"
	}
	f, err := os.Open(exe)
	if err != nil {
		return "devel"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "devel"
	}
	return "devel-bin-" + hex.EncodeToString(h.Sum(nil))[:12]
})

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
