package audit

import "github.com/specsim/specsim/audit/finding"

// Severity and Finding are the shared types of package audit/finding.
type (
	Severity = finding.Severity
	Finding  = finding.Finding
)

// Severities, most serious first.
const (
	SeverityError   = finding.Error
	SeverityWarning = finding.Warning
	SeverityInfo    = finding.Info
)

// HasErrors reports whether any finding is error-severity.
func HasErrors(fs []Finding) bool { return finding.HasErrors(fs) }
