// Package chart draws the project's figures as PNG or SVG: sweep frontiers
// (total tokens/s per GPU against interactivity, MTP against no
// speculation) and golden acceptance curves. It is apart from packages
// simulate and golden so that neither pulls in the plotting and font
// packages.
package chart

import (
	"fmt"
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
