package safecrl_test

import (
	"fmt"

	"github.com/crlbatch/crlbatch/protocol/safecrl"
)

// A run that trains on reach, switches to push, and comes back to reach;
// costs are logged, success only on reach.
func ExampleScore() {
	ep := func(task string, ret, cost float64) safecrl.Episode {
		return safecrl.Episode{Task: task, Return: ret, Cost: cost, HasCost: true}
	}
	run := &safecrl.Run{Key: "ppo-lag/seed0", Episodes: []safecrl.Episode{
		ep("reach", 10, 1), ep("reach", 30, 0),
		ep("push", 5, 2),
		ep("reach", 20, 1), ep("reach", 40, 0),
	}}
	for i := range run.Episodes {
		if run.Episodes[i].Task == "reach" {
			run.Episodes[i].Success, run.Episodes[i].HasSuccess = 1, true
		}
	}
	p := safecrl.Params{WindowEpisodes: 2}
	res, err := safecrl.Score(run, &p)
	if err != nil {
		panic(err)
	}
	for _, tr := range res.Tasks {
		fmt.Printf("%s: visits %d\n", tr.Task, tr.NVisits)
		for _, m := range safecrl.TaskMetrics {
			v, _ := tr.Metric(m)
			if v.OK {
				fmt.Printf("  %-22s %g\n", m, v.V)
			} else {
				fmt.Printf("  %-22s -- (%s)\n", m, v.Reason)
			}
		}
	}
	fmt.Println("run forgetting:", res.SeedValue("forgetting"))
	// Output:
	// reach: visits 2
	//   final_task_reward      30
	//   total_cost             1
	//   mean_episode_cost      0.5
	//   forgetting             -10
	//   normalized_forgetting  -1
	//   success_rate           1
	//   forgetting_success     0
	// push: visits 1
	//   final_task_reward      5
	//   total_cost             2
	//   mean_episode_cost      2
	//   forgetting             -- (task never revisited)
	//   normalized_forgetting  -- (task never revisited)
	//   success_rate           -- (no success recorded)
	//   forgetting_success     -- (no success recorded)
	// run forgetting: -10
}
