package golden_test

import (
	"fmt"

	"github.com/specsim/specsim/golden"
)

func ExampleSet_Curve() {
	set, err := golden.Default()
	if err != nil {
		panic(err)
	}
	c, err := set.Curve("nvidia/Qwen3.5-397B-A17B-NVFP4", golden.ThinkingOn)
	if err != nil {
		panic(err)
	}
	al, _ := c.At(6)
	dist, _ := c.Distribution(6)
	mean, variance := golden.Moments(dist)
	fmt.Printf("%s k=6: AL %.2f, mean %.2f, variance %.2f\n", c.Model, al, mean, variance)
	for l, p := range dist {
		fmt.Printf("P(L=%d) = %.2f\n", l+1, p)
	}
	// Output:
	// qwen3.5-397b-a17b-nvfp4 k=6: AL 4.80, mean 4.80, variance 4.50
	// P(L=1) = 0.07
	// P(L=2) = 0.13
	// P(L=3) = 0.14
	// P(L=4) = 0.08
	// P(L=5) = 0.14
	// P(L=6) = 0.05
	// P(L=7) = 0.39
}

func ExampleCurve_Consistent() {
	set, _ := golden.Default()
	c, _ := set.Curve("qwen3.5", golden.ThinkingOff)
	fmt.Println(c.Check())
	cc, repair := c.Consistent()
	fmt.Printf("AL(8) %.2f -> %.2f (moved %+.2f)\n", c.AL[7], cc.AL[7], repair.Moved[7])
	// Output:
	// [qwen3.5-397b-a17b-nvfp4 thinking off k=8: AL drops from 4.73 at k=7 to 4.71 at k=8]
	// AL(8) 4.71 -> 4.73 (moved +0.02)
}
