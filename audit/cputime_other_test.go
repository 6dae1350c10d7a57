//go:build !unix

package audit_test

func cpuTime() int64 { return 0 }
