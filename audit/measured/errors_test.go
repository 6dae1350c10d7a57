package measured

import (
	"errors"
	"strings"
	"testing"
)

// TestSetDefaultsErrorIsTyped: an unknown key is an *Error on
// "Deployment.KEY" with the value given, naming no command's flag; with
// several unknown keys the first in order is the one reported.
func TestSetDefaultsErrorIsTyped(t *testing.T) {
	for _, tt := range []struct {
		kv           map[string]string
		field, value string
	}{
		{map[string]string{"colour": "red"}, "Deployment.colour", "red"},
		{map[string]string{"gpu": "h200", "zeta": "1", "alpha": "2"}, "Deployment.alpha", "2"},
		{map[string]string{"GPU": "h200"}, "Deployment.GPU", "h200"},
	} {
		s, err := Parse("x.csv", []byte("gpu,conc,measured_tpot_ms\nh200,4,20\n"))
		if err != nil {
			t.Fatal(err)
		}
		err = s.SetDefaults(tt.kv)
		var e *Error
		if !errors.As(err, &e) || e.Field != tt.field || e.Value != tt.value || strings.Contains(err.Error(), "--") {
			t.Errorf("%v: error %#v, want an *Error on %s with value %q and no flag", tt.kv, err, tt.field, tt.value)
		}
	}
}
