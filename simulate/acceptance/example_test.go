package acceptance_test

import (
	"fmt"

	"github.com/specsim/specsim/simulate/acceptance"
)

func ExampleNew() {
	// SGLang's multinomial method at AL 3.24 with 3 draft steps (4 draft tokens).
	s, err := acceptance.New(acceptance.Config{Method: acceptance.SGLangMultinomial, K: 3, TargetAL: 3.24, Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("expected mean %.3f\n", s.ExpectedMean())
	batch := make([]int, 8)
	s.Step(batch) // one draw shared by the whole batch
	fmt.Println(batch[0] == batch[7])
	// Output:
	// expected mean 3.127
	// true
}
