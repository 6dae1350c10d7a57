package kernels

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckDeviceErrorIsTyped: tables measured on a B200 (the fixture's
// device column) checked against another GPU are an *Error on "GPU" with
// that GPU's name, naming the measured device and no command's flag.
func TestCheckDeviceErrorIsTyped(t *testing.T) {
	imp := readAICFixture(t, "gemm_perf.txt")
	for _, gpu := range []string{"h200", "gb200", "b300"} {
		err := imp.CheckDevice(gpu)
		var e *Error
		if !errors.As(err, &e) || e.Field != "GPU" || e.Value != gpu || !strings.Contains(e.Reason, `"NVIDIA B200"`) || strings.Contains(err.Error(), "--") {
			t.Errorf("%s: error %#v, want an *Error on GPU naming NVIDIA B200 and no flag", gpu, err)
		}
	}
}
