package kernels_test

import (
	"fmt"

	"github.com/specsim/specsim/kernels"
)

// How many of DeepSeek-V3's 256 routed experts a decode batch touches.
func ExampleExpectedDistinctExperts() {
	for _, tokens := range []int{1, 8, 64, 512} {
		fmt.Printf("%4d tokens: %5.1f experts uniform, %5.1f with Zipf skew 1\n", tokens,
			kernels.ExpectedDistinctExperts(tokens, 256, 8, 0),
			kernels.ExpectedDistinctExperts(tokens, 256, 8, 1))
	}
	// Output:
	//    1 tokens:   8.0 experts uniform,   8.0 with Zipf skew 1
	//    8 tokens:  57.4 experts uniform,  39.5 with Zipf skew 1
	//   64 tokens: 222.4 experts uniform, 145.1 with Zipf skew 1
	//  512 tokens: 256.0 experts uniform, 252.2 with Zipf skew 1
}

// An unquantized MTP draft next to an NVFP4 target: SGLang's
// flashinfer_cutedsl runner does not take BF16 experts, so the draft's MoE
// runs on Triton, priced slower.
func ExampleBackendFor() {
	b, fellBack, err := kernels.BackendFor("sglang", "flashinfer_cutedsl", kernels.BF16)
	if err != nil {
		panic(err)
	}
	fmt.Println(b.Name, fellBack, b.Efficiency)
	// Output: triton true 0.7
}

// The draft inherits the target's --moe-runner-backend: on
// flashinfer_trtllm SGLang's unquantized MoE method serves the BF16 draft
// there, with no fallback.
func ExampleResolveDraftMoE() {
	c, err := kernels.ResolveDraftMoE(kernels.MoELaunch{Engine: "sglang", Backend: "flashinfer_trtllm"}, kernels.BF16)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Backend.Name, c.FellBack, c.Origin)
	// Output: flashinfer_trtllm false inherited from the target: --moe-runner-backend
}
