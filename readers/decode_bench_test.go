package readers

// The decoder benchmark behind the choice recorded in doc.go. Every
// contender decodes the same realistic rows (about 490 bytes: identity
// fields, reward, regime_id, step, a components object of four entries,
// effective_rank, invalid_action, gamma and per-step extras with
// full-precision floats) and aggregates them into a skyfall.Builder.
//
//	go test ./readers -run XXX -bench Decode -benchmem -count 6 -cpu 1

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
	goccy "github.com/goccy/go-json"
	"github.com/valyala/fastjson"
)

var benchComps = []string{"success", "progress"}

// benchRows returns n realistic rows, one JSON object a line.
func benchRows(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	labels := []string{"calm", "wind_high", "wind_low", "calm_again"}
	f := func(scale float64) string { return strconv.FormatFloat((rng.Float64()-0.3)*scale, 'g', -1, 64) }
	var b bytes.Buffer
	for i := range n {
		label := labels[(i/50)%len(labels)]
		origin := ""
		if label == "calm_again" {
			origin = `"regime_origin":"calm",`
		}
		fmt.Fprintf(&b, `{"run_id":"sweep-0412/ppo/s3","seed":3,"algorithm_id":"ppo","policy_id":"mlp-256","task":"nav-v2",`+
			`"step":%d,"regime_id":%q,%s"reward":%s,`+
			`"components":{"progress":%s,"collision":%s,"success":%s,"energy":%s},`+
			`"invalid_action":%t,"effective_rank":%s,"gamma":0.99,`+
			`"obs_hash":"%016x","logp":%s,"value":%s,"entropy":%s}`+"\n",
			i, label, origin, f(1), f(0.1), f(1), f(1), f(0.01), rng.IntN(50) == 0, f(100), rng.Uint64(), f(3), f(10), f(1))
	}
	return b.Bytes()
}

// cpuMeter reports, besides the wall-clock MB/s of SetBytes, "cpuMB/s": the
// bytes decoded per second of CPU time of the whole process (garbage
// collection included). On a shared machine wall-clock numbers swing with
// the load; CPU time swings much less. Call the returned func after the loop.
func cpuMeter(b *testing.B, bytes int) func() {
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	start := cpuTime()
	return func() {
		if d := cpuTime() - start; d > 0 {
			b.ReportMetric(float64(bytes)*float64(b.N)/d/1e6, "cpuMB/s")
		}
	}
}

func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// eachLine calls fn for every line of data.
func eachLine(data []byte, fn func([]byte)) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			fn(data)
			return
		}
		fn(data[:i])
		data = data[i+1:]
	}
}

// benchRow is the typed target of encoding/json and goccy/go-json.
type benchRow struct {
	RunID         string             `json:"run_id"`
	Seed          int64              `json:"seed"`
	AlgorithmID   string             `json:"algorithm_id"`
	PolicyID      string             `json:"policy_id"`
	Task          string             `json:"task"`
	Step          *int64             `json:"step"`
	RegimeID      *string            `json:"regime_id"`
	RegimeOrigin  *string            `json:"regime_origin"`
	AliasOf       *string            `json:"alias_of"`
	Reward        *float64           `json:"reward"`
	Components    map[string]float64 `json:"components"`
	InvalidAction *bool              `json:"invalid_action"`
	EffectiveRank *float64           `json:"effective_rank"`
	Gamma         *float64           `json:"gamma"`
	ObsHash       string             `json:"obs_hash"`
	Logp          float64            `json:"logp"`
	Value         float64            `json:"value"`
	Entropy       float64            `json:"entropy"`
}

func (br *benchRow) toRow(r *skyfall.Row, intern map[string]string) {
	*r = skyfall.Row{Comps: r.Comps[:len(benchComps)], Invalid: -1}
	label := *br.RegimeID
	if s, ok := intern[label]; ok {
		label = s
	} else {
		intern[label] = label
	}
	r.Reward, r.Label = *br.Reward, label
	if br.RegimeOrigin != nil {
		r.Origin, r.HasOrigin = *br.RegimeOrigin, true
	}
	if br.Step != nil {
		r.Step, r.HasStep = *br.Step, true
	}
	for i, c := range benchComps {
		r.Comps[i] = br.Components[c]
	}
	if br.InvalidAction != nil {
		r.Invalid = 0
		if *br.InvalidAction {
			r.Invalid = 1
		}
	}
	if br.EffectiveRank != nil {
		r.EffRank, r.HasEffRank = *br.EffectiveRank, true
	}
	if br.Gamma != nil {
		r.Gamma, r.HasGamma = *br.Gamma, true
	}
}

func BenchmarkDecode(b *testing.B) {
	data := benchRows(20000)
	b.Run("encoding_json", func(b *testing.B) {
		done := cpuMeter(b, len(data))
		defer done()
		for b.Loop() {
			bl := skyfall.NewBuilder("k", benchComps)
			var row skyfall.Row
			row.Comps = make([]float64, len(benchComps))
			intern := map[string]string{}
			eachLine(data, func(line []byte) {
				var br benchRow
				if err := stdjson.Unmarshal(line, &br); err != nil {
					b.Fatal(err)
				}
				br.toRow(&row, intern)
				bl.Add(&row)
			})
		}
	})
	b.Run("goccy_go_json", func(b *testing.B) {
		done := cpuMeter(b, len(data))
		defer done()
		for b.Loop() {
			bl := skyfall.NewBuilder("k", benchComps)
			var row skyfall.Row
			row.Comps = make([]float64, len(benchComps))
			intern := map[string]string{}
			eachLine(data, func(line []byte) {
				var br benchRow
				if err := goccy.Unmarshal(line, &br); err != nil {
					b.Fatal(err)
				}
				br.toRow(&row, intern)
				bl.Add(&row)
			})
		}
	})
	b.Run("fastjson", func(b *testing.B) {
		done := cpuMeter(b, len(data))
		defer done()
		var p fastjson.Parser
		for b.Loop() {
			bl := skyfall.NewBuilder("k", benchComps)
			var row skyfall.Row
			row.Comps = make([]float64, len(benchComps))
			intern := map[string]string{}
			eachLine(data, func(line []byte) {
				v, err := p.ParseBytes(line)
				if err != nil {
					b.Fatal(err)
				}
				row = skyfall.Row{Comps: row.Comps, Invalid: -1}
				row.Reward, err = v.Get("reward").Float64()
				if err != nil {
					b.Fatal(err)
				}
				lb, err := v.Get("regime_id").StringBytes()
				if err != nil {
					b.Fatal(err)
				}
				label, ok := intern[string(lb)]
				if !ok {
					label = string(lb)
					intern[label] = label
				}
				row.Label = label
				if o := v.Get("regime_origin"); o != nil && o.Type() == fastjson.TypeString {
					ob, _ := o.StringBytes()
					row.Origin, row.HasOrigin = string(ob), true
				}
				if s := v.Get("step"); s != nil {
					row.Step, row.HasStep = s.GetInt64(), true
				}
				comps := v.GetObject("components")
				for i, c := range benchComps {
					row.Comps[i] = comps.Get(c).GetFloat64()
				}
				if ia := v.Get("invalid_action"); ia != nil {
					row.Invalid = 0
					if ia.GetBool() {
						row.Invalid = 1
					}
				}
				if er := v.Get("effective_rank"); er != nil && er.Type() == fastjson.TypeNumber {
					row.EffRank, row.HasEffRank = er.GetFloat64(), true
				}
				if g := v.Get("gamma"); g != nil {
					row.Gamma, row.HasGamma = g.GetFloat64(), true
				}
				bl.Add(&row)
			})
		}
	})
	b.Run("scanner", func(b *testing.B) {
		// The row decoder alone, in the same harness as the others.
		done := cpuMeter(b, len(data))
		defer done()
		for b.Loop() {
			bl := skyfall.NewBuilder("k", benchComps)
			d := newRowDecoder(benchComps)
			intern := map[string]string{}
			eachLine(data, func(line []byte) {
				if err := d.decode(line); err != nil {
					b.Fatal(err)
				}
				label, ok := intern[string(d.label)]
				if !ok {
					label = string(d.label)
					intern[label] = label
				}
				d.row.Label = label
				if d.row.HasOrigin {
					o, ok := intern[string(d.origin)]
					if !ok {
						o = string(d.origin)
						intern[o] = o
					}
					d.row.Origin = o
				}
				bl.Add(&d.row)
			})
		}
	})
	b.Run("DecodeObject", func(b *testing.B) {
		// Everything the reader does per object: line splitting, the full
		// validation, identity grouping, metadata inference, the Builder.
		benchDecodeObject(b, data)
	})
}

func benchDecodeObject(b *testing.B, data []byte) {
	done := cpuMeter(b, len(data))
	defer done()
	opts := Options{Components: benchComps}
	for b.Loop() {
		o, err := DecodeObject("bench", "bench", bytes.NewReader(data), opts)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Assemble([]*ObjectRuns{o}, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeObject measures whole objects per format; MB/s are of the
// decompressed bytes.
func BenchmarkDecodeObject(b *testing.B) {
	data := benchRows(20000)
	for _, c := range []struct {
		name string
		enc  []byte
	}{{"plain", data}, {"gzip", gz(b, data)}, {"zstd", zst(b, data)}} {
		b.Run(c.name, func(b *testing.B) {
			done := cpuMeter(b, len(data))
			defer done()
			opts := Options{Components: benchComps}
			for b.Loop() {
				o, err := DecodeObject("bench", "bench", bytes.NewReader(c.enc), opts)
				if err != nil {
					b.Fatal(err)
				}
				if o.Rows != 20000 {
					b.Fatal(o.Rows)
				}
			}
		})
	}
}

// TestBenchRowsDecode keeps the benchmark honest: every contender reads the
// same values.
func TestBenchRowsDecode(t *testing.T) {
	data := benchRows(300)
	traces := mustDecode(t, Options{Components: benchComps}, object{"x", string(data)})
	if len(traces) != 1 || traces[0].Len() != 300 {
		t.Fatalf("%d traces", len(traces))
	}
	tr := traces[0]
	i := 0
	eachLine(data, func(line []byte) {
		var br benchRow
		if err := stdjson.Unmarshal(line, &br); err != nil {
			t.Fatal(err)
		}
		if *br.Reward != tr.Rewards[i] || br.Components["success"] != tr.Components["success"][i] || *br.Step != tr.Steps[i] {
			t.Fatalf("row %d differs", i)
		}
		i++
	})
	if avg := len(data) / 300; avg < 400 || avg > 500 {
		t.Errorf("rows average %d bytes, want 400 to 500", avg)
	}
	want := map[string]string{"run_id": "sweep-0412/ppo/s3", "seed": "3", "algorithm_id": "ppo", "policy_id": "mlp-256",
		"task": "nav-v2", "gamma": "0.99", "source": "x"}
	if fmt.Sprint(tr.Meta) != fmt.Sprint(want) {
		t.Errorf("meta %v", tr.Meta)
	}
}

// TestMemBytes: decoded rows are held in compact columns, tens of bytes a
// row, not the JSON's hundreds. These rows carry four dense float columns
// (reward, two components, effective_rank): 32 bytes, and little besides.
func TestMemBytes(t *testing.T) {
	data := benchRows(20000)
	o, err := DecodeObject("x", "x", bytes.NewReader(data), Options{Components: benchComps})
	if err != nil {
		t.Fatal(err)
	}
	perRow := float64(o.MemBytes()) / float64(o.Rows)
	t.Logf("%.1f bytes a row in memory, %.1f in JSON", perRow, float64(len(data))/float64(o.Rows))
	if perRow < 32 || perRow > 100 {
		t.Errorf("%.1f bytes a row", perRow)
	}
}

// BenchmarkDecodeFile decodes the JSONL (or compressed) file named by
// CRLBATCH_BENCH_FILE, for profiling on real sweeps (`crlbatch synth`
// output, say); skipped when it is unset.
func BenchmarkDecodeFile(b *testing.B) {
	name := os.Getenv("CRLBATCH_BENCH_FILE")
	if name == "" {
		b.Skip("CRLBATCH_BENCH_FILE is not set")
	}
	data, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	done := cpuMeter(b, len(data))
	defer done()
	opts := Options{Components: []string{"progress", "collision", "success"}}
	for b.Loop() {
		if _, err := DecodeObject("bench", "bench", bytes.NewReader(data), opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeObjectIrregular decodes rows of the irregular sweep shape
// (testdata/irregular.jsonl without its first row, the run's 1.5 KB config,
// repeated to about 10 MB): keys in varying order, optional keys, json.dumps
// separators and floats. Beside BenchmarkDecodeObject/plain it shows what
// the shape costs the decoder; BenchmarkDecodeFile with a whole object of
// bench/irregulargen measures the real mix.
func BenchmarkDecodeObjectIrregular(b *testing.B) {
	lines := irregularLines(b)[1:]
	var data []byte
	rows := 0
	for len(data) < 10_000_000 {
		for _, l := range lines {
			data = append(append(data, l...), '\n')
			rows++
		}
	}
	done := cpuMeter(b, len(data))
	defer done()
	opts := Options{Components: []string{"progress", "collision", "success"}}
	for b.Loop() {
		o, err := DecodeObject("bench", "bench", bytes.NewReader(data), opts)
		if err != nil {
			b.Fatal(err)
		}
		if o.Rows != rows {
			b.Fatal(o.Rows)
		}
	}
}

// BenchmarkEncoding measures an object's cache encoding as the engine
// writes it (pipeline's encodeForCache: Encoding, then WriteTo into the
// entry's compressor; here io.Discard): MB/s are of the encoding.
func BenchmarkEncoding(b *testing.B) {
	o, err := DecodeObject("bench", "bench", bytes.NewReader(benchRows(100_000)), Options{Components: benchComps})
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for b.Loop() {
		en, err := o.Encoding()
		if err != nil {
			b.Fatal(err)
		}
		if n, err = en.WriteTo(io.Discard); err != nil || n != en.Len() {
			b.Fatal(n, err)
		}
	}
	b.SetBytes(n)
}
