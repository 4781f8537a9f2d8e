package skillshift

import (
	"strings"
	"testing"
)

func TestBuildTable(t *testing.T) {
	a := handRun(t) // gitlab, magento × src, tgt; SFR cells unstable
	b := score(t,
		task("reddit", "src", true, 2, -1, -1),
		task("gitlab", "mixed", false, 4, -1, -1),
	)
	tab := BuildTable([]TableInput{{"ASI", a}, {"AWM", b}}, nil)

	var titles []string
	for _, c := range tab.Columns {
		titles = append(titles, c.Title)
	}
	// Expected columns first, in Table 1 order, then the other names in
	// order of first appearance over the inputs, then O/A.
	want := "GitLab,Magento,WordPress,reddit,Src,Src-Perc,Src-Exec,Tgt,Tgt-Perc,Tgt-Exec,mixed,O/A"
	if strings.Join(titles, ",") != want {
		t.Fatalf("columns %s", strings.Join(titles, ","))
	}
	if tab.Columns[0].Group != GroupWebsite || tab.Columns[4].Group != GroupEnvironment || tab.Columns[11].Group != GroupOverall {
		t.Errorf("groups %+v", tab.Columns)
	}
	if len(tab.Rows) != 8 {
		t.Fatalf("%d rows", len(tab.Rows))
	}
	// Metric-major: ASI SR, AWM SR, ASI AS, …
	if tab.Rows[0].Name != "ASI" || tab.Rows[1].Name != "AWM" || tab.Rows[2].Metric != AS {
		t.Errorf("row order %s/%s %s/%s", tab.Rows[0].Name, tab.Rows[0].Metric, tab.Rows[2].Name, tab.Rows[2].Metric)
	}
	text := func(r TableRow) string {
		var s []string
		for _, c := range r.Cells {
			s = append(s, c.Text)
		}
		return strings.Join(s, " | ")
	}
	// ASI SR: gitlab 66.67, magento 25.00, src 16.67, tgt 75.00, O/A 45.83.
	if got, want := text(tab.Rows[0]), "66.67 | 25.00 | -- | -- | 16.67 | -- | -- | 75.00 | -- | -- | -- | 45.83"; got != want {
		t.Errorf("ASI SR\n got %s\nwant %s", got, want)
	}
	// ASI SFR: every value unstable (under 30 invocations).
	sfr := tab.Rows[6]
	if sfr.Name != "ASI" || sfr.Metric != SFR {
		t.Fatalf("row 6 is %s %s", sfr.Name, sfr.Metric)
	}
	if got, want := text(sfr), "33.33 ⚠︎ | 50.00 ⚠︎ | -- | -- | 66.67 ⚠︎ | -- | -- | 25.00 ⚠︎ | -- | -- | -- | 38.89 ⚠︎"; got != want {
		t.Errorf("ASI SFR\n got %s\nwant %s", got, want)
	}
	if !sfr.Cells[11].Unstable || !sfr.Cells[11].Invocations.OK || sfr.Cells[11].Invocations.V != 9 {
		t.Errorf("O/A cell %+v", sfr.Cells[11])
	}
	// AWM has no skill calls: every SFR cell is --, and the reason travels.
	awm := tab.Rows[7]
	for _, c := range awm.Cells {
		if c.Text != "--" || c.Value.Reason == "" {
			t.Errorf("AWM SFR cell %+v", c)
		}
	}
	if awm.Identity.Status != StatusSkipped {
		t.Errorf("AWM SFR identity %s", awm.Identity.Summary())
	}
	if c := tab.Rows[1].Cells[3]; c.Text != "100.00" { // AWM SR reddit
		t.Errorf("AWM reddit %+v", c)
	}
}

func TestCellText(t *testing.T) {
	if got := CellText(marginalValue(0.32), true); got != "0.32 \u26a0\ufe0e" {
		t.Errorf("%q", got)
	}
}
