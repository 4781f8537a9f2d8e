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
// canonical order, each once, with its family; a run that finishes early
// waits for the runs before it (and only until then); a run --min-steps
// excludes loses its Figure unfolded; a run that failed stops the folding.
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
	for _, i := range []int{2, 1, 5} {
		fo.done(i, runs[i])
	}
	if len(fj.folded) != 0 || len(fo.pending) != 3 {
		t.Fatalf("folded %v, %d pending before run 0 is scored", fj.folded, len(fo.pending))
	}
	fo.done(0, runs[0])
	if want := []string{"ppo:r0", "sac:r1", "ppo:r2"}; !slices.Equal(fj.folded, want) {
		t.Fatalf("folded %v, want %v", fj.folded, want)
	}
	fo.done(4, runs[4])
	fo.done(3, runs[3])
	if want := []string{"ppo:r0", "sac:r1", "ppo:r2", ":r4", "sac:r5"}; !slices.Equal(fj.folded, want) {
		t.Fatalf("folded %v, want %v", fj.folded, want)
	}
	if len(fo.pending) != 0 {
		t.Errorf("%d runs still pending", len(fo.pending))
	}
	for _, s := range runs {
		if s.Figure != nil {
			t.Errorf("run %s keeps its Figure", s.Key)
		}
	}

	// A failed run (nil) holds back every run after it: the job fails.
	fj.folded = nil
	fo = j.newFolder()
	fo.done(1, &scoring.Scored{Key: "b", Meta: map[string]string{}, Rows: 100})
	fo.done(0, nil)
	if len(fj.folded) != 0 {
		t.Errorf("folded %v after a failed run", fj.folded)
	}
	// A job that does not fold has no folder, and done does nothing.
	j.proto.job = struct{ scoring.Job }{}
	if fo := j.newFolder(); fo != nil {
		t.Fatal("a folder for a job without Fold")
	}
	var none *folder
	none.done(0, runs[0])
}
