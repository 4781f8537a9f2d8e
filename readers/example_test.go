package readers_test

import (
	"fmt"
	"strings"

	"github.com/crlbatch/crlbatch/readers"
)

// Two objects of one sweep: run r1 is split across them, the second object
// also holds an anonymous row. Objects may be decoded concurrently; Assemble
// takes them in key order.
func ExampleAssemble() {
	a := `{"run_id":"r1","seed":1,"algorithm_id":"ppo","regime_id":"a","reward":0.5,"gamma":0.95,"obs_hash":"x1"}
{"run_id":"r1","seed":1.0,"algorithm_id":"ppo","regime_id":"b","reward":0.25,"gamma":0.95,"obs_hash":"x2"}
`
	b := `{"run_id":"r1","seed":1,"algorithm_id":"ppo","regime_id":"a_again","regime_origin":"a","reward":0.75,"gamma":0.95,"obs_hash":"x3"}
{"regime_id":"z","reward":1}
`
	opts := readers.Options{Protocol: "skyfall"}
	var objs []*readers.ObjectRuns
	for _, o := range []struct{ key, data string }{{"2024/a.jsonl", a}, {"2024/b.jsonl.gz", b}} {
		obj, err := readers.DecodeObject("s3://bucket/runs/"+o.key, o.key, strings.NewReader(o.data), opts)
		if err != nil {
			fmt.Println(err)
			return
		}
		objs = append(objs, obj)
	}
	traces, err := readers.Assemble(objs, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range traces {
		fmt.Println(t.Key, t.Rewards, t.LabelNames, t.Origins)
		fmt.Println("  ", t.Meta)
	}
	// Output:
	// run_id=r1|seed=1|algorithm_id=ppo [0.5 0.25 0.75] [a b a_again] [a b a]
	//    map[algorithm_id:ppo gamma:0.95 run_id:r1 seed:1 source:2024/a.jsonl]
	// anonymous:2024/b.jsonl.gz [1] [z] [z]
	//    map[source:2024/b.jsonl.gz]
}

func ExampleDecodeObject_error() {
	data := `{"run_id":"r1","regime_id":"a","reward":0.5}
{"run_id":"r1","regime_id":"a","reward":"0.5"}
`
	_, err := readers.DecodeObject("s3://b/runs/x.jsonl", "x.jsonl", strings.NewReader(data), readers.Options{})
	fmt.Println(err)
	// Output:
	// s3://b/runs/x.jsonl: line 2: reward: got string, want number
}
