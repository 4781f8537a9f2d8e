package contilab_test

import (
	"fmt"

	"github.com/crlbatch/crlbatch/protocol/contilab"
)

func ExampleScore() {
	run := &contilab.Run{
		Key:      "seed=0",
		Scenario: contilab.ScenarioClassIL,
		Matrix: []contilab.MatrixEntry{
			{AfterTask: 0, EvalTask: 0, Acc: 0.9},
			{AfterTask: 1, EvalTask: 0, Acc: 0.6},
			{AfterTask: 1, EvalTask: 1, Acc: 0.8},
		},
	}
	res, err := contilab.Score(run, nil)
	if err != nil {
		panic(err)
	}
	for _, m := range []string{"acc", "bwt", "fwt", "intransigence"} {
		v, _ := res.Metric(m)
		if v.OK {
			fmt.Printf("%s %.4f\n", m, v.V)
		} else {
			fmt.Printf("%s -- (%s)\n", m, v.Reason)
		}
	}
	// Output:
	// acc 0.7000
	// bwt -0.3000
	// fwt -- (undefined in Class-IL: a task's classes are masked out before it is learned)
	// intransigence -- (no joint-training rows)
}

func ExampleBenchmarks() {
	scores := map[string][]float64{"ewc": {0.6, 0.7}, "er": {0.8, 0.75}, "lwf": {0.5, 0.7}}
	benches := []string{"split-cifar", "split-mnist"}
	score := func(family, bench string) (float64, bool) {
		for i, b := range benches {
			if b == bench {
				return scores[family][i], true
			}
		}
		return 0, false
	}
	better, _ := contilab.HigherIsBetter(contilab.DefaultRankMetric)
	res, err := contilab.Benchmarks([]string{"ewc", "er", "lwf"}, benches, better, score)
	if err != nil {
		panic(err)
	}
	for _, f := range res.Families {
		fmt.Printf("%-4s %.2f\n", f.Family, f.AverageRank.V)
	}
	fmt.Printf("friedman %.4f p %.4f cd %.4f\n", res.FriedmanStatistic.V, res.FriedmanP.V, res.CriticalDifference.V)
	// Output:
	// ewc  2.25
	// er   1.00
	// lwf  2.75
	// friedman 3.7143 p 0.1561 cd 2.3430
}
