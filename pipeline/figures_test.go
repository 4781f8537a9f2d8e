package pipeline

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/crlbatch/crlbatch/figures"
	"github.com/crlbatch/crlbatch/scoring"
)

// TestMain renders each distinct figure once for the package's tests, as
// cmd/crlbatch's does (figures.Memoize: a figure is looked up by every
// command it draws, so the bytes are a fresh render's); the engine's tests
// run the same small inputs through many jobs. CRLBATCH_FIGURE_MEMO=0
// renders every figure every time.
//
// The package's tests call t.Parallel() (up to -parallel, GOMAXPROCS by
// default, run at once) unless they change what every job in the process
// sees: a test hook (testHook*), lightPrepare, uploadGraceTime, syncFile or
// syncDir, the environment, or they count the process's goroutines. Such a
// test runs sequentially, before every parallel one and never beside it;
// its comment says why.
func TestMain(m *testing.M) {
	figures.Memoize(os.Getenv("CRLBATCH_FIGURE_MEMO") != "0")
	os.Exit(m.Run())
}

// foldJob records what the engine folds.
type foldJob struct {
	scoring.Job
	folded []string
}

func (f *foldJob) Fold(fam string, s *scoring.Scored) {
	f.folded = append(f.folded, fam+":"+s.Key)
	s.Figure = nil
}

// TestFolderFoldsInCanonicalOrder: runs scored in any order are folded in
// canonical order within their family, each once, with its family; a run
// that finishes early waits for the runs of its family before it (and only
// until then), not for other families'; a run --min-steps excludes loses
// its Figure unfolded; a run that failed stops its family's folding.
func TestFolderFoldsInCanonicalOrder(t *testing.T) {
	t.Parallel()
	fj := &foldJob{}
	j := &job{cfg: &Config{MinSteps: 10}, proto: bound{job: fj, groupBy: []string{"algorithm_id"}}}
	fo := j.newFolder()
	var runs []*scoring.Scored
	for i := range 6 {
		s := &scoring.Scored{Key: fmt.Sprintf("r%d", i), Rows: 100, Meta: map[string]string{"algorithm_id": []string{"ppo", "sac"}[i%2]}, Figure: i}
		runs = append(runs, s)
	}
	runs[3].Rows = 5                     // excluded
	delete(runs[4].Meta, "algorithm_id") // the family (none)
	for i, s := range runs {
		fo.add(i, s.Meta)
	}
	for _, i := range []int{2, 1, 5} {
		fo.done(i, runs[i])
	}
	// r1 is sac's first: folded at once; r2 waits for ppo's r0, r5 for
	// sac's r3.
	if want := []string{"sac:r1"}; !slices.Equal(fj.folded, want) {
		t.Fatalf("folded %v before run 0 is scored, want %v", fj.folded, want)
	}
	fo.done(0, runs[0])
	if want := []string{"sac:r1", "ppo:r0", "ppo:r2"}; !slices.Equal(fj.folded, want) {
		t.Fatalf("folded %v, want %v", fj.folded, want)
	}
	fo.done(4, runs[4])
	if want := []string{"sac:r1", "ppo:r0", "ppo:r2", ":r4"}; !slices.Equal(fj.folded, want) {
		t.Fatalf("folded %v, want %v", fj.folded, want)
	}
	fo.done(3, runs[3])
	if want := []string{"sac:r1", "ppo:r0", "ppo:r2", ":r4", "sac:r5"}; !slices.Equal(fj.folded, want) {
		t.Fatalf("folded %v, want %v", fj.folded, want)
	}
	for i, r := range fo.runs {
		if r.scored != nil {
			t.Errorf("run %d still held", i)
		}
	}
	for _, s := range runs {
		if s.Figure != nil {
			t.Errorf("run %s keeps its Figure", s.Key)
		}
	}

	// A failed run (nil) holds back every run of its family after it (the
	// job fails), not another family's.
	fj.folded = nil
	fo = j.newFolder()
	for i, fam := range []string{"ppo", "ppo", "sac"} {
		fo.add(i, map[string]string{"algorithm_id": fam})
	}
	fo.done(1, &scoring.Scored{Key: "b", Meta: map[string]string{"algorithm_id": "ppo"}, Rows: 100})
	fo.done(0, nil)
	fo.done(2, &scoring.Scored{Key: "c", Meta: map[string]string{"algorithm_id": "sac"}, Rows: 100})
	if want := []string{"sac:c"}; !slices.Equal(fj.folded, want) {
		t.Errorf("folded %v after a failed run, want %v", fj.folded, want)
	}
	// Runs are handed out in canonical order, each once.
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a run handed out out of order was taken")
			}
		}()
		j.newFolder().add(1, nil)
	}()
	// A job that does not fold has no folder, and add and done do nothing.
	j.proto.job = struct{ scoring.Job }{}
	if fo := j.newFolder(); fo != nil {
		t.Fatal("a folder for a job without Fold")
	}
	var none *folder
	none.add(0, runs[0].Meta)
	none.done(0, runs[0])
}
