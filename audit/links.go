package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// linkGuard decides which symbolic links in a checkpoint directory the audit
// follows. A link whose target stays inside the directory is followed, and
// so is one into the blobs folder of a Hugging Face hub cache (the hub's
// snapshots/<revision>/ directories are made of links to
// ../../blobs/<hash>). Any other link is not followed and becomes an error
// finding naming link and target: following it would read a file the
// checkpoint does not contain (and a header-length prefix would reveal its
// first bytes).
type linkGuard struct {
	dir     string // the directory as given
	realDir string // with its own links resolved
	blobs   string // <cache>/models--x--y/blobs when dir is a snapshot, else ""
	refused map[string]bool
}

func newLinkGuard(dir string) *linkGuard {
	g := &linkGuard{dir: dir, realDir: dir}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		g.realDir = r
	}
	if parent := filepath.Dir(g.realDir); filepath.Base(parent) == "snapshots" {
		g.blobs = filepath.Join(filepath.Dir(parent), "blobs")
	}
	return g
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// allow reports whether name (relative to the directory) may be opened. A
// name that is no link, or whose target does not exist, is allowed: opening
// it reports what is wrong.
func (g *linkGuard) allow(cp *Checkpoint, name string) bool {
	p := filepath.Join(g.dir, name)
	if st, err := os.Lstat(p); err != nil || st.Mode()&os.ModeSymlink == 0 {
		// a link may still sit in a directory component of an indexed name
		if !strings.ContainsRune(filepath.Clean(name), filepath.Separator) {
			return true
		}
	}
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return true
	}
	if within(g.realDir, target) || g.blobs != "" && within(g.blobs, target) {
		return true
	}
	if g.refused[p] { // reported once, however often it is named
		return false
	}
	if g.refused == nil {
		g.refused = map[string]bool{}
	}
	g.refused[p] = true
	cp.add(Finding{Code: "symlink-outside-dir", Severity: SeverityError,
		Message: fmt.Sprintf("%s is a symbolic link to %s, outside %s; it was not read. Copy the file into the checkpoint or link within it", p, target, g.dir)})
	return false
}

// filter keeps the names allow accepts.
func (g *linkGuard) filter(cp *Checkpoint, names []string) []string {
	out := names[:0:0]
	for _, n := range names {
		if g.allow(cp, n) {
			out = append(out, n)
		}
	}
	return out
}
