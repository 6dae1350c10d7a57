package main

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/specsim/specsim/simulate"
	"github.com/specsim/specsim/simulate/acceptance"
)

func TestFlagError(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&simulate.Error{Field: "MoESkew", Value: "9", Reason: "want 0..4"}, "--moe-skew 9: want 0..4"},
		{fmt.Errorf("wrapped: %w", &simulate.Error{Field: "AL", Reason: "no curve"}), "--al: no curve; pass --al"},
		{&acceptance.Error{Field: acceptance.FieldHistogram, Value: "h.csv", Reason: "too long"}, "--histogram h.csv: too long"},
		{&simulate.Error{Field: "Unmapped", Value: "x", Reason: "r"}, "Unmapped x: r"},
		{fmt.Errorf("plain"), "plain"},
	} {
		if got := flagError(tt.err).Error(); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.err, got, tt.want)
		}
	}
	// Every Query field has a flag.
	for _, f := range reflect.VisibleFields(reflect.TypeOf(simulate.Query{})) {
		if _, ok := queryFlagNames[f.Name]; !ok {
			t.Errorf("Query.%s has no flag name", f.Name)
		}
	}
}
