// Package regular opens files for reading only when they are regular files.
//
// A check by path followed by an open leaves a window in which the path can
// be swapped for a FIFO (the open then blocks for ever) or a device (the read
// never ends). Open closes that window: it opens without blocking first and
// checks the file it holds. golden and kernels keep their own copies of these
// few lines because they import nothing from the project.
package regular

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// Open opens path read-only. O_NONBLOCK makes the open of a FIFO without a
// writer return at once instead of waiting; the descriptor is then checked
// with fstat, and anything but a regular file is closed and refused. On a
// regular file O_NONBLOCK has no effect on reads.
func Open(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s: not a regular file (%s)", path, kind(st.Mode()))
	}
	return f, st, nil
}

// ReadFile reads a whole regular file of at most limit bytes; what is larger
// is refused with its size and the limit, before anything is read.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, st, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d this reader accepts", path, st.Size(), limit)
	}
	// The file may grow after the stat: read at most one byte past the limit.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: more than the %d bytes this reader accepts", path, limit)
	}
	return data, nil
}

func kind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeDevice != 0 || m&os.ModeCharDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "mode " + m.String()
}
