package kernels

import (
	"fmt"
	"strings"
	"testing"
)

// Duplicate measurements were averaged silently and 1e300 us accepted
// (issue 14, item 13).
func TestTableRejectsDuplicatesAndAbsurdValues(t *testing.T) {
	const hdr = "op,dtype,m,n,k,latency_us\n"
	for _, tc := range []struct{ body, want string }{
		{"gemm,bf16,1,4096,7168,10\ngemm,bf16,2,4096,7168,11\ngemm,bf16,1,4096,7168,12\n", "t.csv:4: same op, dtype and shape as line 2"},
		{"gemm,bf16,1,4096,7168,1e300\n", "t.csv:2: column latency_us: want a positive number of microseconds up to 1e+08"},
		{"gemm,bf16,1,4096,7168,inf\n", "t.csv:2: column latency_us"},
	} {
		_, err := ParseOpTable("t.csv", []byte(hdr+tc.body), true)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.body, err, tc.want)
		}
	}
	// the same shape in another dtype is another measurement
	if _, err := ParseOpTable("t.csv", []byte(hdr+"gemm,bf16,1,4096,7168,10\ngemm,fp8,1,4096,7168,6\n"), true); err != nil {
		t.Error(err)
	}
	coll := "op,dtype,gpus,bytes,latency_us\nallreduce,bf16,8,1024,10\nallreduce,bf16,8,1024,11\n"
	if _, err := ParseCollectiveTable("c.csv", []byte(coll)); err == nil || !strings.Contains(err.Error(), "c.csv:3: same op, dtype, gpus and bytes as line 2") {
		t.Errorf("collective duplicate: %v", err)
	}
	var b strings.Builder
	b.WriteString(hdr)
	for i := 0; i <= maxTableRows; i++ {
		fmt.Fprintf(&b, "copy,bf16,,%d,,1\n", i+1)
	}
	if _, err := ParseOpTable("big.csv", []byte(b.String()), false); err == nil || !strings.Contains(err.Error(), "more than 100000 rows") {
		t.Errorf("row cap: %v", err)
	}
}
