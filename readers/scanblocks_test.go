package readers

import "testing"

// TestBlockReplay decodes sequences of rows through a decoder that takes
// prefixes and key blocks over and one that never does (samePrefixState
// after every line), and checks how many members were taken over from
// blocks.
func TestBlockReplay(t *testing.T) {
	const id = `"run_id":"r1","seed":3,"task":"nav"`
	const meta = `"host":"h","commit":"c"`
	cases := []struct {
		name  string
		lines []string
		used  int // members taken over from blocks
	}{
		{"a block in the middle, then first", []string{
			`{"reward":1,` + id + `,"regime_id":"a"}`,
			`{"reward":1,` + id + `,"regime_id":"a"}`, // values cached now: records run_id's block
			`{"step":1,` + id + `,"reward":1,"regime_id":"a"}`,
			`{` + id + `,"reward":1,"regime_id":"a"}`,
		}, 6},
		{"a block that ends the row", []string{
			`{"reward":1,"regime_id":"a",` + meta + `}`,
			`{"reward":1,"regime_id":"a",` + meta + `}`,
			`{"regime_id":"a","reward":2,` + meta + `}`,
			`{"regime_id":"a","reward":2,` + meta + ` }`,  // whitespace before the '}'
			`{"regime_id":"a","reward":2,` + meta + "}\t", // and after it
			`{"regime_id":"a","reward":2,` + meta + `}x`,  // bad after the '}'
			`{"regime_id":"a","reward":2,` + meta + `,}`,  // a ',' instead
			`{"regime_id":"a","reward":2,` + meta + `,"k":1}`,
		}, 6 * 2}, // the block ends with its last value: what follows is the loop's
		{"the first members of a block", []string{
			`{"reward":1,"regime_id":"a",` + id + `}`,
			`{"reward":1,"regime_id":"a",` + id + `}`,
			`{"reward":1,` + id + `,"regime_id":"a"}`,
			`{"reward":1,"run_id":"r1","seed":3,"step":2,"task":"nav","regime_id":"a"}`, // two of three, then a shorter block
			`{"reward":1,"run_id":"r1","seed":3,"task":"nav","regime_id":"a"}`,
			`{"reward":1,"run_id":"r1","seed":4,"task":"nav","regime_id":"a"}`, // run_id's member only: seed's value differs
			`{"reward":1,"run_id":"r1","seed":4,"task":"nav","regime_id":"a"}`, // run_id's member again
		}, 3 + 2 + 2 + 1 + 1}, // cut to two members; seed's changed value stops a block at seed
		{"whitespace inside and after a block", []string{
			`{"reward":1,` + id + `, "regime_id":"a"}`,
			`{"reward":1,` + id + `, "regime_id":"a"}`,
			`{"reward":1,` + id + `,   "regime_id":"a"}`,
			`{"reward":1,` + id + `,` + "\n" + `"regime_id":"a"}`,
			`{"reward":1,"run_id":"r1", "seed":3,"task":"nav", "regime_id":"a"}`,
			`{"reward":1,"run_id" :"r1","seed":3,"task":"nav","regime_id":"a"}`,
		}, 3 + 3 + 1 + 2}, // run_id's block cut to its first member; seed and task one now
		{"a key of the block met before it", []string{
			`{"reward":1,"regime_id":"a",` + id + `}`,
			`{"reward":1,"regime_id":"a",` + id + `}`,
			`{"task":"nav","reward":1,"regime_id":"a",` + id + `}`,
			`{"seed":3,"reward":1,"regime_id":"a",` + id + `}`,
			`{"run_id":"r1","reward":1,"regime_id":"a",` + id + `}`,
			`{"reward":1,"regime_id":"a",` + id + `,"seed":3}`,
			`{"reward":1,"regime_id":"a",` + id + `}`,
		}, 2 + 1 + 1 + 1 + 1}, // the members before the one met; cut by the row that differs after run_id
		{"the line ends inside the block, or after it", []string{
			`{"reward":1,"regime_id":"a",` + id + `,"x":1}`,
			`{"reward":1,"regime_id":"a",` + id + `,"x":1}`,
			`{"reward":1,"regime_id":"a",` + id,
			`{"reward":1,"regime_id":"a",` + id + `,`,
			`{"reward":1,"regime_id":"a",` + id + `, `,
			`{"reward":1,"regime_id":"a",` + `"run_id":"r1","se`,
			`{"reward":1,"regime_id":"a",` + `"run_id":"r1","seed":3`,
			`{"reward":1,"regime_id":"a",` + id + `,"x":1}`,
		}, 3 + 3 + 3 + 1 + 2 + 3}, // cut only where a byte differs
		{"a bad row after a block, then a block in a row the prefix starts", []string{
			`{"reward":1,"regime_id":"a",` + id + `,` + meta + `}`,
			`{"reward":1,"regime_id":"a",` + id + `,` + meta + `}`,
			`{"reward":1,"regime_id":"a",` + id + `,"seed":3}`,
			`{"reward":1,"regime_id":"a",` + meta + `,` + id + `}`,
			`{` + meta + `,"reward":1,"regime_id":"a"}`,
			`{` + meta + `,` + id + `,"reward":1,"regime_id":"a"}`,
			`{` + meta + `,` + id + `,"reward":1,"regime_id":"a"}`,
		}, 3 + 3 + 2 + 3}, // then the prefix holds host ... task
		{"gamma and schema fields end a block", []string{
			`{"reward":1,"run_id":"r","gamma":0.9,"k":2,"regime_id":"a"}`,
			`{"reward":1,"run_id":"r","gamma":0.9,"k":2,"regime_id":"a"}`,
			`{"reward":1,"run_id":"r","gamma":0.9,"k":2,"regime_id":"a"}`,
			`{"reward":1,"run_id":"r","k":2,"invalid_action":false,"regime_id":"a"}`,
			`{"reward":1,"run_id":"r","k":2,"invalid_action":false,"regime_id":"a"}`,
		}, 2},
		{"keys with escapes, keys predicted or not", []string{
			`{"reward":1,"regime_id":"a","run_\u0069d":"r1","seed":3,"k":1}`,
			`{"reward":1,"regime_id":"a","run_\u0069d":"r1","seed":3,"k":1}`,
			`{"reward":1,"run_\u0069d":"r1","seed":3,"k":1,"regime_id":"a"}`,
			`{"reward":1,"seed":3,"run_\u0069d":"r1","k":1,"regime_id":"a"}`,
			`{"reward":1,"seed":3,"run_\u0069d":"r1","k":1,"regime_id":"a"}`,
			`{"reward":1,"seed":3,"run_id":"r1","k":1,"regime_id":"a"}`,
		}, 2 + 1 + 1 + 1}, // a key with escapes starts no block, and ends one
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seq, plain := newRowDecoder(fuzzComps), newRowDecoder(fuzzComps)
			seq.blkMode, seq.forceBlk = true, true
			plain.noPrefix = true
			for n, line := range c.lines {
				samePrefixState(t, n+1, []byte(line), seq, seq.decode([]byte(line)), plain, plain.decode([]byte(line)))
			}
			if seq.blk.used != c.used || plain.blk.used != 0 {
				t.Fatalf("%d members taken over from blocks, want %d (%d without)", seq.blk.used, c.used, plain.blk.used)
			}
		})
	}
}

// TestBlocksOfIrregularRows: on rows shaped like the irregular sweep's,
// blocks are taken over, and every row decodes as with a decoder that
// never replays.
func TestBlocksOfIrregularRows(t *testing.T) {
	lines := irregularLines(t)
	seq, plain := newRowDecoder(irregularComps), newRowDecoder(irregularComps)
	seq.blkMode, seq.forceBlk = true, true
	plain.noPrefix = true
	rep := 0 // the repeated cached members of non-schema keys other than gamma
	for n, line := range lines {
		samePrefixState(t, n+1, line, seq, seq.decode(line), plain, plain.decode(line))
		for i := range plain.extras {
			if e := &plain.extras[i]; e.hit && e.id != plain.gammaID {
				rep++
			}
		}
	}
	// 224 on these rows (forceBlk: these 59 rows are fewer than the 64
	// after which the key table decides to look keys up first).
	if taken := seq.blk.used; taken < 200 {
		t.Fatalf("%d members taken over from blocks, %d rows took a prefix over, of %d repeated cached members in %d rows",
			taken, seq.pfx.used, rep, len(lines))
	}
	t.Logf("%d members taken over from blocks, %d rows took a prefix over, of %d repeated cached members in %d rows",
		seq.blk.used, seq.pfx.used, rep, len(lines))
}
