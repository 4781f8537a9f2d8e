package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSpillFolderSweep: a job spills into a folder of its own, which it
// removes when it ends, and its first spill removes the spill folders
// this host's killed jobs left (their process gone) — and nothing else:
// not a live job's, not another host's, not its own, not files or folders
// of other names.
func TestSpillFolderSweep(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skipf("no process to outlive: %v", err)
	}
	deadPID := dead.Process.Pid
	if processAlive(deadPID) {
		t.Skipf("pid %d was taken again", deadPID)
	}
	parent := t.TempDir()
	folder := func(host string, pid int) string {
		return fmt.Sprintf("%s.tmp-%s-%d-0badf00d", spillName, host, pid)
	}
	killed := folder(host, deadPID)
	kept := []string{
		folder(host, os.Getppid()),       // a live job's
		folder(host, os.Getpid()),        // this process's (another job in it)
		folder("elsewhere", deadPID),     // another host's: its pids say nothing here
		spillName + "age.tmp-x-1-00",     // another name
		spillName + "-1234567",           // a loose spill file of earlier versions
		spillName + ".tmp-" + host + "-", // no pid
	}
	for _, name := range append([]string{killed}, kept...) {
		p := filepath.Join(parent, name)
		if strings.HasPrefix(name, spillName+"-") {
			if err := os.WriteFile(p, []byte("rows"), 0o600); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "crlbatch-spill-42"), []byte("rows"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	in := spillSweep(t, 200)
	var log bytes.Buffer
	cfg := localJob(in, filepath.Join(t.TempDir(), "out"), &log)
	cfg.Concurrency, cfg.MemoryLimit, cfg.SpillDir = 2, 1, parent
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "spilled decoded rows to disk") {
		t.Fatalf("nothing spilled: the test tests nothing\n%s", log.String())
	}
	if _, err := os.Stat(filepath.Join(parent, killed)); !os.IsNotExist(err) {
		t.Errorf("the killed job's spill folder is still there (%v)", err)
	}
	if !strings.Contains(log.String(), "removed the spill files killed jobs left") || !strings.Contains(log.String(), killed) {
		t.Errorf("no warning naming the folder removed:\n%s", log.String())
	}
	left, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	want := slices.Sorted(slices.Values(kept))
	if !slices.Equal(names, want) {
		t.Errorf("left in the spill directory:\n%s\nwant (the job's own folder gone):\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
}
