package golden

import (
	"strings"
	"testing"
)

// TestReadRegularNamesADirectory: a directory given as a file says so
// (it used to say "mode d---------").
func TestReadRegularNamesADirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := readRegular(dir, 1<<20)
	if err == nil || !strings.Contains(err.Error(), dir+": not a regular file (a directory)") {
		t.Errorf("error %v, want it to say %s is a directory", err, dir)
	}
}
