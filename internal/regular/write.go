package regular

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// CheckOutput refuses, before any work, an output path that WriteFile would
// refuse: a symbolic link (refused rather than followed, so that a link
// planted at the path cannot redirect the write), anything that exists and
// is not a regular file (a directory, a device such as /dev/null, a FIFO, a
// socket: a rename would replace it), a path that is the same file as one
// of inputs (the command would overwrite what it reads), or a directory
// that does not exist.
func CheckOutput(path string, inputs []string) error {
	_, err := checkOutput(path, inputs)
	return err
}

func checkOutput(path string, inputs []string) (fs.FileMode, error) {
	if path == "" {
		return 0, errors.New("empty output path")
	}
	mode := fs.FileMode(0o644)
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return 0, fmt.Errorf("cannot write %s: %v", path, unwrap(err))
	case st.Mode()&fs.ModeSymlink != 0:
		return 0, fmt.Errorf("cannot write %s: it is a symbolic link; specsim does not write through links (give the file it points to, or another name)", path)
	case st.IsDir():
		return 0, fmt.Errorf("cannot write %s: it is a directory; give a file name", path)
	case !st.Mode().IsRegular():
		return 0, fmt.Errorf("cannot write %s: it exists and is %s, not a regular file; specsim writes only regular files", path, kind(st.Mode()))
	default:
		mode = st.Mode().Perm()
		for _, in := range inputs {
			if ist, err := os.Stat(in); err == nil && os.SameFile(st, ist) {
				return 0, fmt.Errorf("cannot write %s: it is the input %s; give another output file", path, in)
			}
		}
	}
	dir := filepath.Dir(path)
	dst, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, fmt.Errorf("cannot write %s: directory %s does not exist", path, dir)
	case err != nil:
		return 0, fmt.Errorf("cannot write %s: directory %s: %v", path, dir, unwrap(err))
	case !dst.IsDir():
		return 0, fmt.Errorf("cannot write %s: %s is not a directory", path, dir)
	}
	return mode, nil
}

// WriteFile writes data to path through a temporary file in the same
// directory that is renamed over path, so that a failed write leaves no
// half file. It refuses what CheckOutput refuses, checking again just
// before the rename. A new file gets mode 0644; an existing one keeps its
// mode. Errors name path, never the temporary file.
func WriteFile(path string, data []byte, inputs []string) error {
	mode, err := checkOutput(path, inputs)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".specsim-out-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: cannot create a file in directory %s: %v", path, dir, unwrap(err))
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return fmt.Errorf("cannot write %s: %v", path, unwrap(err))
	}
	if err := tmp.Chmod(mode); err != nil {
		return fail(err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if _, err := checkOutput(path, inputs); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("cannot write %s: %v", path, unwrap(err))
	}
	return nil
}

func unwrap(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}
