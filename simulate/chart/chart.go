// Package chart draws the project's figures as PNG or SVG: sweep frontiers
// (total tokens/s per GPU against interactivity, MTP against no
// speculation) and golden acceptance curves. It is apart from packages
// simulate and golden so that neither pulls in the plotting and font
// packages.
package chart

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// FormatError is a plot path whose extension names no format the package
// writes.
type FormatError struct{ Path string }

func (e *FormatError) Error() string { return e.Path + ": want a .png or .svg file" }

// checkExt refuses a path that is not .png or .svg, before anything is
// drawn or written.
// CheckPath refuses, before any work, a plot path that Sweep or AL could
// not write: an extension other than .png or .svg (FormatError), an
// existing directory, or a directory that does not exist.
func CheckPath(path string) error {
	if err := checkExt(path); err != nil {
		return err
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return fmt.Errorf("%s: directory %s does not exist", path, filepath.Dir(path))
	}
	return nil
}

func checkExt(path string) error {
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".png" && ext != ".svg" {
		return &FormatError{path}
	}
	return nil
}

func save(p *plot.Plot, w, h vg.Length, path string) error {
	if err := p.Save(w, h, path); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}
