// Package finding is the one result type of every audit: the checkpoint
// audit (package audit), the recipe check (audit/recipe) and the value test
// (audit/deep) report [Finding] values with one [Severity] order, so that a
// command can merge, sort and count them without converting.
package finding

import "slices"

// Severity ranks a finding: only errors make a command exit 1.
type Severity string

// Severities, most serious first.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Rank orders severities: 0 for [Error], 1 for [Warning], 2 for [Info], 3
// for anything else.
func (s Severity) Rank() int {
	switch s {
	case Error:
		return 0
	case Warning:
		return 1
	case Info:
		return 2
	}
	return 3
}

// Finding is one result: a stable code that scripts match on, a severity,
// a message that says what is wrong and what to change, and where (a
// tensor, a file line, a recipe variant; empty when the finding is about the
// whole input).
type Finding struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	Location string   `json:"location,omitempty"`
}

// Sort orders findings by severity, most serious first, keeping the order
// of findings of equal severity.
func Sort(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int { return a.Severity.Rank() - b.Severity.Rank() })
}

// Count is the number of findings of severity s.
func Count(fs []Finding, s Severity) int {
	n := 0
	for _, f := range fs {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// HasErrors reports whether any finding is error-severity.
func HasErrors(fs []Finding) bool { return Count(fs, Error) > 0 }
