package simulate

import "fmt"

// Error is a setting of a [Query] that cannot be used: Field is the name of
// the Query field ("GPUsPerNode", "MoESkew", ...), or of the option of the
// call that took it ("Sim" and "Params" of Calibrate); Value what it held
// ("" when missing) and Reason what is wrong. A setting made of key=value
// pairs names the key after a dot: "AgentX.duration", and "Deployment.gpu"
// for a measured deployment's key. A command maps Field to its own flag.
type Error struct {
	Field  string
	Value  string
	Reason string
	Err    error // the underlying error, if any
}

func (e *Error) Error() string {
	if e.Value == "" {
		return e.Field + ": " + e.Reason
	}
	return fmt.Sprintf("%s %s: %s", e.Field, e.Value, e.Reason)
}

func (e *Error) Unwrap() error { return e.Err }
