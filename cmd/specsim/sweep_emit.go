package main

import (
	"fmt"

	"github.com/specsim/specsim/simulate"
)

// emitFrontierRecipes writes a recipe per interactivity frontier point.
func emitFrontierRecipes(dir string, so *simulate.SweepOutput) ([]string, error) {
	return nil, fmt.Errorf("--emit: not implemented yet")
}
