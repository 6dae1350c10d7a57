package main

import (
	"errors"
	"fmt"

	"github.com/specsim/specsim/simulate/acceptance"
)

// flagError restates a library error about a setting in terms of the flag
// that sets it.
func flagError(err error) error {
	var ae *acceptance.Error
	if errors.As(err, &ae) {
		if ae.Value == "" {
			return fmt.Errorf("--%s: %s", ae.Field, ae.Reason)
		}
		return fmt.Errorf("--%s %s: %s", ae.Field, ae.Value, ae.Reason)
	}
	return err
}
