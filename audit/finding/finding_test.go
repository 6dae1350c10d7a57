package finding

import (
	"slices"
	"testing"
)

func TestSortAndCount(t *testing.T) {
	fs := []Finding{
		{Code: "a", Severity: Info},
		{Code: "b", Severity: Error},
		{Code: "c", Severity: Warning},
		{Code: "d", Severity: Error},
		{Code: "e", Severity: "odd"},
		{Code: "f", Severity: Info},
	}
	Sort(fs)
	var got []string
	for _, f := range fs {
		got = append(got, f.Code)
	}
	// Errors first in their given order (b before d), unknown severities last.
	if want := []string{"b", "d", "c", "a", "f", "e"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if Count(fs, Error) != 2 || Count(fs, Warning) != 1 || Count(fs, Info) != 2 || !HasErrors(fs) {
		t.Errorf("counts %d %d %d", Count(fs, Error), Count(fs, Warning), Count(fs, Info))
	}
	if HasErrors(fs[2:]) {
		t.Error("HasErrors without errors")
	}
}
