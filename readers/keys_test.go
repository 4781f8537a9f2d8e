package readers

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestPattern: pattern.at agrees with bytes.HasPrefix for every length up
// to and past 16, at every position, the end of the data included.
func TestPattern(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = ".,\"\x00\xff" // '.' and ',' differ in one bit
	for range 20000 {
		data := make([]byte, rng.IntN(40))
		for i := range data {
			data[i] = alphabet[rng.IntN(len(alphabet))]
		}
		for pos := 0; pos <= len(data); pos++ {
			var b []byte
			if rng.IntN(2) == 0 && pos < len(data) {
				b = bytes.Clone(data[pos:min(len(data), pos+rng.IntN(20))]) // a true prefix, often
			} else {
				b = make([]byte, rng.IntN(20))
				for i := range b {
					b[i] = alphabet[rng.IntN(len(alphabet))]
				}
			}
			p := makePattern(b)
			if got, want := p.at(data, pos, b), bytes.HasPrefix(data[pos:], b); got != want {
				t.Fatalf("%q at %d of %q: %v, want %v", b, pos, data, got, want)
			}
			if len(b) > 0 {
				// One byte off, anywhere: never a match.
				c := bytes.Clone(b)
				i := rng.IntN(len(c))
				c[i] = alphabet[(strings.IndexByte(alphabet, c[i])+1+rng.IntN(len(alphabet)-1))%len(alphabet)]
				p := makePattern(c)
				if got, want := p.at(data, pos, c), bytes.HasPrefix(data[pos:], c); got != want {
					t.Fatalf("%q at %d of %q: %v, want %v", c, pos, data, got, want)
				}
			}
		}
	}
}

// TestKeyTableFull: past maxKeys distinct keys, new keys get noKey and the
// keys already in keep their IDs.
func TestKeyTableFull(t *testing.T) {
	kt := newKeyTable()
	for i := range maxKeys + 5 {
		id := kt.intern([]byte{'k', byte(i)}, -1)
		if i < maxKeys && int(id) != i || i >= maxKeys && id != noKey {
			t.Fatalf("key %d: ID %d", i, id)
		}
	}
	if id := kt.intern([]byte{'k', 3}, -1); id != 3 {
		t.Fatalf("ID %d", id)
	}
	if kt.keys[3].quoted != nil {
		t.Fatalf("a key with a control byte has a raw form %q", kt.keys[3].quoted)
	}
}

// TestRunOfCachedIdentity: rows find their run through the cached identity
// values also when identities alternate, repeat after another, change in
// a row that is then skipped as bad, or go missing.
func TestRunOfCachedIdentity(t *testing.T) {
	row := func(id string, r int) string {
		if id == "" {
			return fmt.Sprintf(`{"reward":%d,"regime_id":"a"}`, r)
		}
		return fmt.Sprintf(`{"run_id":%q,"reward":%d,"regime_id":"a"}`, id, r)
	}
	var lines []string
	want := map[string][]float64{}
	add := func(id string, r int) {
		lines = append(lines, row(id, r))
		key := "run_id=" + id
		if id == "" {
			key = "anonymous:x"
		}
		want[key] = append(want[key], float64(r))
	}
	seq := []string{"x", "x", "y", "y", "x", "x", "y", "y", "x", "", "", "x", "z", "x"}
	for i, id := range seq {
		add(id, i)
		switch i {
		case 5, 10:
			// A bad row with the identity of the next row: it updates the
			// cache of run_id, and is skipped; the next row repeats the
			// cached value, yet belongs to another run than the row before.
			lines = append(lines, fmt.Sprintf(`{"run_id":%q,"reward":"bad","regime_id":"a"}`, seq[i+1]))
		}
	}
	opts := Options{OnBadRow: func(*DataError) error { return nil }}
	traces := mustDecode(t, opts, object{"x", strings.Join(lines, "\n")})
	got := map[string][]float64{}
	for _, tr := range traces {
		got[tr.Key] = tr.Rewards
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("runs %v\nwant %v", got, want)
	}
}

// TestBucketChains: keys whose first two bytes share a bucket are chained
// in the order they were met (the keys of nearly every row first), and
// find returns each of them on its raw bytes, and no key on bytes that
// only start like one.
func TestBucketChains(t *testing.T) {
	kt := newKeyTable()
	names := []string{"value", "reward", "regime_id", "episode", "regime_origin", "episode_len", "episode_return", "x", "eval/success_rate"}
	for _, n := range names {
		kt.intern([]byte(n), -1)
	}
	for _, n := range names {
		q := `"` + n + `"`
		var chain []string
		for id := kt.buckets[bucketOf(q[1], q[2])]; id != noKey; id = kt.keys[id].chain {
			chain = append(chain, string(kt.keys[id].name))
		}
		var want []string
		for _, m := range names {
			if bucketOf(m[0], (`"` + m + `"`)[2]) == bucketOf(q[1], q[2]) {
				want = append(want, m)
			}
		}
		if fmt.Sprint(chain) != fmt.Sprint(want) {
			t.Errorf("%s: chain %q, want %q", n, chain, want)
		}
		for _, tail := range []string{`:1,"a":2}`, ` : 1}`, ``} {
			data := []byte(q + tail)
			if id := kt.find(data, 0); id == noKey || string(kt.keys[id].name) != n {
				t.Errorf("find(%q) = %d, want %s", data, id, n)
			}
			short := []byte(q[:len(q)-1] + `x"` + tail)
			if id := kt.find(short, 0); id != noKey {
				t.Errorf("find(%q) = %s, want none", short, kt.keys[id].name)
			}
		}
	}
	// The bucket of "value" holds the episode keys after it.
	if q := `"value"`; kt.keys[kt.buckets[bucketOf(q[1], q[2])]].name[0] != 'v' {
		t.Errorf("value is not first in its bucket")
	}
}

// TestFindFirstHeads: with the key tables looking keys up first, a key at
// the head of its bucket (compared in key itself), after it in the chain,
// longer than 16 bytes, within the last 16 bytes of the line, differing
// from the head only in its second 8 bytes, or only starting like a known
// key decodes as a fresh decoder decodes it.
func TestFindFirstHeads(t *testing.T) {
	lines := []string{
		`{"reward":1,"regime_id":"a","value":2,"valuex":3,"eval/success_rate":0.5,"v":1}`,
		`{"valuex":3,"value":2,"reward":1.5,"regime_origin":"b","regime_id":"a","eval/success_rate":1}`,
		`{"episode":1,"regime_id":"c","value":2,"eval/success_rate":0.5,"eval/successes":2,"reward":0}`,
		`{"components":{"progress":0.5,"collision":1,"success":0},"reward":1,"episode_len":3,"rev":1,"regime_id":"a","re":2}`,
		`{"eval/success_rate":0.5,"reward":2,"v":1,"regime_id":"a","va":2,"val":3}`,
		`{"reward":2,"regime_id":"a","va":2,"v":1,"components":{"success":1,"progress":0.25,"progressx":2}}`,
		`{"re":1,"reward":2,"regime_id":"a","rev":3}`,
		// Keys that differ only after their first 8 bytes.
		`{"reward":1,"regime_id":"a","metrics_a":1,"metrics_b":2}`,
		`{"metrics_b":2,"reward":1,"regime_id":"a","metrics_a":1}`,
		`{"metrics_b":2,"reward":1,"regime_id":"a"}`,
	}
	seq := newRowDecoder(irregularComps)
	for n := range 3 * len(lines) {
		seq.top.findFirst, seq.compKeys.findFirst = true, true
		decodeAsAlone(t, seq, []byte(lines[n%len(lines)]), n+1)
		if !seq.top.findFirst {
			t.Fatalf("line %d: the key table left find-first mode", n+1)
		}
	}
	// The keys of the first line are the heads of their buckets.
	q := `"value"`
	if id := seq.top.buckets[bucketOf(q[1], q[2])]; id == noKey || string(seq.top.keys[id].name) != "value" {
		t.Errorf("value is not the head of its bucket")
	}
}

// TestLiteral: literal reads null, true and false, or fails, as comparing
// the bytes does (the word it compares with 8 bytes to read, the bytes
// nearer the end of the line): at every distance from the end, with each
// byte of the literal changed, and cut short.
func TestLiteral(t *testing.T) {
	ref := func(d *rowDecoder, lit string) *rowError {
		if len(d.data)-d.pos >= len(lit) && string(d.data[d.pos:d.pos+len(lit)]) == lit {
			d.pos += len(lit)
			return nil
		}
		for i := 0; i < len(lit) && d.pos < len(d.data) && d.data[d.pos] == lit[i]; i++ {
			d.pos++
		}
		return d.syntax("a JSON value")
	}
	lits := map[string]uint64{"null": wordNull, "true": wordTrue, "false": wordFalse}
	n := 0
	for lit, w := range lits {
		var vals []string
		for i := range len(lit) + 1 {
			vals = append(vals, lit[:i]) // cut short; whole
			if i < len(lit) {
				vals = append(vals, lit[:i]+"x"+lit[i+1:], lit[:i]+strings.ToUpper(lit[i:i+1])+lit[i+1:])
			}
		}
		vals = append(vals, lit+"x", "nulll", "truee", "falsee")
		for _, v := range vals {
			for tail := range 10 {
				line := []byte(`{"a":` + v + strings.Repeat("}", tail))
				got, want := &rowDecoder{data: line, pos: 5}, &rowDecoder{data: line, pos: 5}
				gerr, werr := got.literal(lit, w), ref(want, lit)
				if got.pos != want.pos || (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
					t.Errorf("literal(%q) on %q: pos %d, %v; want pos %d, %v", lit, line, got.pos, gerr, want.pos, werr)
				}
				if werr == nil {
					n++
				}
			}
		}
	}
	// Each literal whole, followed by "x" and by its own last byte (read up
	// to there), at every tail.
	if n != 3*3*10 {
		t.Errorf("%d literals read, want %d", n, 90)
	}
}

// TestPredictedFindFirst: predictedColon returns the key that followed prev
// last time when its quoted form and colon, as the key's first row wrote
// them, are there, in find-first mode too, and nil on other bytes, on
// another colon form and with fewer than 16 bytes to read.
func TestPredictedFindFirst(t *testing.T) {
	for _, findFirst := range []bool{false, true} {
		kt := newKeyTable()
		a, b := kt.intern([]byte("reward"), -1), kt.intern([]byte("regime_id"), -1)
		kt.follow(startKey, a)
		kt.follow(a, b)
		kt.keys[a].colonForm([]byte(`": 1`), 1)
		kt.keys[b].colonForm([]byte(`":"a"`), 1)
		kt.findFirst = findFirst
		if k := kt.predictedColon(a, []byte(`"regime_id":"calm", "gamma": 1}`), 0); k == nil || k.id != b || k.qcn != 12 {
			t.Errorf("findFirst %v: predicted after reward = %v, want regime_id and its colon", findFirst, k)
		}
		if k := kt.predictedColon(startKey, []byte(`"reward": 1, "regime_id": "a"}`), 0); k == nil || k.id != a || k.qcn != 10 {
			t.Errorf("findFirst %v: predicted first = %v, want reward, its colon and space", findFirst, k)
		}
		// Whitespace after the colon is the caller's.
		if k := kt.predictedColon(a, []byte(`"regime_id": "calm", "gamma": 1}`), 0); k == nil || k.id != b || k.qcn != 12 {
			t.Errorf("findFirst %v: predicted after reward, a space after the colon = %v, want regime_id and its colon", findFirst, k)
		}
		for _, data := range []string{`"regime_origin": null, "x": 1}`, `"regime_id" :"a", "x": 1}`, `"regime_id":1}`} {
			if k := kt.predictedColon(a, []byte(data), 0); k != nil {
				t.Errorf("findFirst %v: predicted on %q = %s, want none", findFirst, data, k.name)
			}
		}
		for _, data := range []string{`"reward":1, "regime_id": "a"}`, `"reward" : 1, "regime_id": "a"}`} {
			if k := kt.predictedColon(startKey, []byte(data), 0); k != nil {
				t.Errorf("findFirst %v: predicted first on %q = %s, want none", findFirst, data, k.name)
			}
		}
	}
}

// TestColonForm: a key's pattern with its colon is what its first row with
// a colon right after the quoted form wrote; none for a key without a
// quoted form, a colon after whitespace or a pattern over 16 bytes.
func TestColonForm(t *testing.T) {
	kt := newKeyTable()
	for _, c := range []struct {
		name, after string
		want        string // the pattern's bytes; "" for none
	}{
		{"reward", `:1,`, `"reward":`},
		{"gamma", `: 0.99`, `"gamma": `},
		{"seed", `:  3`, `"seed": `},
		{"task", ` : "x"`, ``},
		{"step", ``, ``},
		{"regime_origin", `: null`, ``},               // 17 bytes
		{"invalid_act", `: false`, `"invalid_act": `}, // 16 bytes
		{"a\b", `:1`, ``},
	} {
		id := kt.intern([]byte(c.name), -1)
		k := &kt.keys[id]
		k.colonForm([]byte(c.after), 0)
		if c.want == "" {
			if k.qc != noPattern {
				t.Errorf("%s followed by %q: pattern %v, want none", c.name, c.after, k.qc)
			}
			continue
		}
		if int(k.qcn) != len(c.want) || k.qc != makePattern([]byte(c.want)) {
			t.Errorf("%s followed by %q: pattern of %d bytes, want %q", c.name, c.after, k.qcn, c.want)
		}
	}
}

// TestLabelCache: a row whose regime_id repeats the last raw label, or
// differs from it only at its end, past its 8th or 16th byte, or near the
// end of the line, decodes as a fresh decoder decodes it.
func TestLabelCache(t *testing.T) {
	labels := []string{"calm", "calm2", "windy-with-gusts-a", "windy-with-gusts-b", "windy-with-gusts-b",
		"a-label-of-30-bytes-and-more-1", "a-label-of-30-bytes-and-more-2", "calm", "calm"}
	seq := newRowDecoder(irregularComps)
	n := 0
	for _, l := range labels {
		for _, line := range []string{
			`{"reward":1,"regime_id":"` + l + `","value":2}`,
			`{"reward":1,"regime_id":"` + l + `"}`,
			`{"reward":1,"regime_id":"` + l + `x"}`,
		} {
			n++
			decodeAsAlone(t, seq, []byte(line), n)
			if got := string(seq.label); got != l && got != l+"x" {
				t.Fatalf("line %d: label %q", n, got)
			}
		}
	}
}

// TestCrowdedBuckets: keys of one prefix crowd one bucket; past
// crowdedChain keys it is looked up by rawHash, and every key is found at
// a line's position whatever follows it (within the 17 bytes rawHash
// reads, or too close to the line's end for it: the chain), longer keys
// sharing their first 16 bytes included, and no other key is.
func TestCrowdedBuckets(t *testing.T) {
	kt := newKeyTable()
	var names []string
	for k := range 40 {
		names = append(names, fmt.Sprintf("obs_%d", k))
	}
	for k := range 6 {
		names = append(names, fmt.Sprintf("observation_vector_%d", k)) // 16 bytes in common
	}
	names = append(names, "ob", "o", "observation_vect", "observation_vec", "observation_vecto") // 2, 1, 16, 15 and 17 bytes
	for _, n := range names {
		if kt.intern([]byte(n), -1) == noKey {
			t.Fatalf("%s: the table is full", n)
		}
	}
	if b := bucketOf('o', 'b'); kt.crowded[b>>6]&(1<<(b&63)) == 0 {
		t.Fatalf("the bucket of obs_ keys is not crowded")
	}
	for _, n := range names {
		q := `"` + n + `"`
		for _, tail := range []string{`:1,"obs_1":2,"obs_2":3}`, ` : 1}`, `:"obs_3"`, ``} {
			data := []byte(q + tail)
			if id := kt.find(data, 0); id == noKey || string(kt.keys[id].name) != n {
				t.Errorf("find(%q) = %d, want %s", data, id, n)
			}
			at := []byte(`{"x":1,` + q + tail)
			if id := kt.find(at, 7); id == noKey || string(kt.keys[id].name) != n {
				t.Errorf("find(%q, 7) = %d, want %s", at, id, n)
			}
		}
	}
	for _, n := range []string{"obs_40", "obs_", "obs_1x", "obs_10_", "observation_vector_6", "observation_vector_", "observation_ve", "oa", "obX"} {
		for _, tail := range []string{`:1,"obs_1":2,"obs_2":3}`, ``} {
			data := []byte(`"` + n + `"` + tail)
			if id := kt.find(data, 0); id != noKey {
				t.Errorf("find(%q) = %s, want none", data, kt.keys[id].name)
			}
		}
	}
	// Rows of 70 keys of one prefix (more than the table holds), in
	// another order on every row: each decodes as a fresh decoder decodes it.
	rng := rand.New(rand.NewPCG(3, 4))
	seq := newRowDecoder(irregularComps)
	for n := range 300 {
		keys := rng.Perm(70)
		var b strings.Builder
		b.WriteString(`{"reward":1,"regime_id":"a"`)
		for _, k := range keys[:60+rng.IntN(10)] {
			fmt.Fprintf(&b, `,"obs_%d":%d`, k, rng.IntN(1000))
		}
		b.WriteString("}")
		decodeAsAlone(t, seq, []byte(b.String()), n+1)
	}
}
