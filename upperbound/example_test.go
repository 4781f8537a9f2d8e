package upperbound_test

import (
	"fmt"

	"github.com/crlbatch/crlbatch/configs"
	"github.com/crlbatch/crlbatch/upperbound"
)

// The analytic ceilings of the bundled specs, and the ceiling of an interval
// of 60 steps of which one is the episode's last.
func ExampleAnalytic() {
	for _, name := range []string{"paper", "experiment"} {
		data, err := configs.RewardSpec(name)
		if err != nil {
			panic(err)
		}
		spec, err := upperbound.ParseSpec(configs.RewardSpecPath(name), data)
		if err != nil {
			panic(err)
		}
		b, err := upperbound.Analytic(spec)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-12s per step %.4f   final step %.4f\n", name, b.PerStep, b.FinalStep)
		if name == "experiment" {
			fmt.Printf("interval of 60 holding the final step: %.4f\n", b.ForInterval(60, true))
		}
	}
	// Output:
	// paper        per step 0.0000   final step 0.5000
	// experiment   per step 0.3333   final step 1.0000
	// interval of 60 holding the final step: 0.3444
}

// A spec whose weight points at an open clip end has no closed-form
// ceiling; the error names the component.
func ExampleUnboundedRewardError() {
	spec, err := upperbound.ParseSpec("open.yaml", []byte(`
name: open
components:
  - {name: speed, weight: 0.5, clip: [0.0, null], cadence: step}
`))
	if err != nil {
		panic(err)
	}
	_, err = upperbound.Analytic(spec)
	fmt.Println(err)
	// Output:
	// reward spec "open": component "speed" has weight 0.5 and no high clip end, so its contribution is unbounded; give the clip a finite high end, or use the numeric or data_relative derivation
}
