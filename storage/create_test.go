package storage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"gocloud.dev/blob/memblob"
)

// TestCreateExclusive: of many concurrent creates of one key, exactly one
// reports true and the key holds its bytes; locally, no temporary file
// stays. LocalTempOwner reads back the owner of a temporary name.
func TestCreateExclusive(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	dir := t.TempDir()
	for _, c := range []struct{ name, file string }{{"mem", ""}, {"local", filepath.Join(dir, "sub", "claim.json")}} {
		t.Run(c.name, func(t *testing.T) {
			const n = 16
			won := make([]bool, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ok, err := CreateExclusive(ctx, b, "claim.json", c.file, []byte(fmt.Sprint(i)))
					if err != nil {
						t.Error(err)
					}
					won[i] = ok
				}()
			}
			wg.Wait()
			winners := 0
			var winner int
			for i, ok := range won {
				if ok {
					winners++
					winner = i
				}
			}
			if winners != 1 {
				t.Fatalf("%d creates succeeded, want 1", winners)
			}
			var got []byte
			if c.file != "" {
				got, _ = os.ReadFile(c.file)
				if ents, _ := os.ReadDir(filepath.Dir(c.file)); len(ents) != 1 {
					t.Errorf("the folder holds %v, want the claim alone", ents)
				}
			} else {
				got, _ = b.ReadAll(ctx, "claim.json")
			}
			if string(got) != fmt.Sprint(winner) {
				t.Errorf("the claim holds %q, written by %d", got, winner)
			}
		})
	}
	host, pid, ok := LocalTempOwner("job.json.tmp-node-7.lab-4242-0a1b2c3d")
	if !ok || host != "node-7.lab" || pid != 4242 {
		t.Errorf("LocalTempOwner = %q, %d, %v", host, pid, ok)
	}
	if _, _, ok := LocalTempOwner("job.json"); ok {
		t.Error("a claim's own name parsed as a temporary file")
	}
}
