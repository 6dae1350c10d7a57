// Package chart draws the project's figures as PNG or SVG: sweep frontiers
// (total tokens/s per GPU against interactivity, MTP against no
// speculation) and golden acceptance curves. It is apart from packages
// simulate and golden so that neither pulls in the plotting and font
// packages.
package chart

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/specsim/specsim/internal/regular"
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
// not write: an extension other than .png or .svg (FormatError), or what
// regular.CheckOutput refuses (a link, a directory, a device or FIFO, a
// directory that does not exist).
func CheckPath(path string) error {
	if err := checkExt(path); err != nil {
		return err
	}
	return regular.CheckOutput(path, nil)
}

func checkExt(path string) error {
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".png" && ext != ".svg" {
		return &FormatError{path}
	}
	return nil
}

// save renders the plot and writes it with regular.WriteFile (a regular
// file only, never through a link; plot.Save would truncate whatever is at
// the path, or block on a FIFO).
func save(p *plot.Plot, w, h vg.Length, path string) error {
	wt, err := p.WriterTo(w, h, strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."))
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return regular.WriteFile(path, buf.Bytes(), nil)
}
