package family

import (
	"strings"
	"testing"
)

// TestFamiliesEqualUnderNFC: two family names that differ only in Unicode
// normalisation (a precomposed é against e and a combining acute; Å as
// U+00C5 and as the Ångström sign U+212B) print the same in every table
// and figure but are two families, as their bytes differ (run keys and
// JSON compare bytes, never merged silently): a global note names them,
// each escaped so that the difference shows. Names that differ otherwise
// are not noted.
func TestFamiliesEqualUnderNFC(t *testing.T) {
	cases := []struct {
		name     string
		families []string
		// want are the escaped names each note must hold, one slice per
		// note, in order.
		want [][]string
	}{
		{"NFC and NFD", []string{"caf\u00e9", "ppo", "cafe\u0301"}, [][]string{{`"caf\u00e9"`, `"cafe\u0301"`}}},
		{"three spellings of one name", []string{"\u00c5", "\u212b", "A\u030a"}, [][]string{{`"\u00c5"`, `"\u212b"`, `"A\u030a"`}}},
		{"two groups", []string{"\u212b", "cafe\u0301", "\u00c5", "caf\u00e9"}, [][]string{{`"\u212b"`, `"\u00c5"`}, {`"cafe\u0301"`, `"caf\u00e9"`}}},
		{"distinct names", []string{"ppo", "PPO", "caf\u00e9", "cafe", "p po"}, nil},
		// Names that differ only in white space at either end or in a run
		// of it, or in invisible (format) characters, print alike too: in
		// a table cell, a code span or a figure's legend, "ppo " is "ppo".
		{"white space", []string{"ppo", "ppo ", "\tppo", "ewc", "p  po", "p po"}, [][]string{{`"ppo"`, `"ppo "`, `"\tppo"`}, {`"p  po"`, `"p po"`}}},
		{"invisible characters", []string{"ppo", "pp\u200bo", "\u202eppo", "ppo\ufeff"}, [][]string{{`"ppo"`, `"pp\u200bo"`, `"\u202eppo"`, `"ppo\ufeff"`}}},
		{"all at once", []string{"caf\u00e9 ", "cafe\u0301"}, [][]string{{`"caf\u00e9 "`, `"cafe\u0301"`}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var runs []Run
			for i, f := range c.families {
				runs = append(runs, run(f+"-r", f, "0", float64(i), 0.5, 100))
			}
			res, err := Aggregate(metrics, runs, opts())
			if err != nil {
				t.Fatal(err)
			}
			var got []Note
			for _, n := range res.Notes {
				if n.Kind == NoteNormalization {
					got = append(got, n)
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("%d normalisation notes, want %d: %v", len(got), len(c.want), res.Notes)
			}
			for i, n := range got {
				if !n.Global {
					t.Errorf("note %q is not global", n.Text)
				}
				rest := n.Text
				for _, w := range c.want[i] {
					j := strings.Index(rest, w)
					if j < 0 {
						t.Fatalf("note %q lacks %s (in order)", n.Text, w)
					}
					rest = rest[j+len(w):]
				}
				if !strings.Contains(n.Text, "Unicode normalisation") {
					t.Errorf("note %q does not say why", n.Text)
				}
			}
		})
	}
}
