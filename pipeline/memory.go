package pipeline

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/crlbatch/crlbatch/scoring"
)

// DefaultMemoryShare is the share of the machine's memory (or of the
// cgroup's limit, when lower) that decoded rows may take before they spill.
const DefaultMemoryShare = 0.5

// fallbackMemory is the machine's memory when it cannot be read.
const fallbackMemory = 8 << 30

// DefaultMemoryLimit is DefaultMemoryShare of the memory this process may
// use: the machine's (from /proc/meminfo), or its cgroup's limit when lower.
func DefaultMemoryLimit() int64 {
	total := int64(fallbackMemory)
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				if kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64); err == nil {
					total = kb << 10
				}
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n < total {
			total = n
		}
	}
	return int64(float64(total) * DefaultMemoryShare)
}

// ParseBytes reads a size: a number of bytes with an optional unit, KB, MB,
// GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024); K, M, G, T
// are taken as binary.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   float64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1},
	}
	mult := 1.0
	for _, u := range units {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || x < 0 || x*mult > 1<<62 {
		return 0, fmt.Errorf("%q: want a size such as 4GiB, 512MB or 1048576", s)
	}
	return int64(x * mult), nil
}

// budget spills decoded objects to local disk once the rows held in memory
// would pass the limit, so that memory stays flat however large the sweep.
type budget struct {
	mu      sync.Mutex
	limit   int64
	dir     string      // the spill directory
	space   *spillSpace // the job's folder in it
	used    int64
	spilled int
}

// defaults fills in the default limit and folder.
func (b *budget) defaults() {
	if b.limit == 0 {
		b.limit = DefaultMemoryLimit()
	}
	if b.dir == "" {
		b.dir = os.TempDir()
	}
}

// admit accounts for a decoded object and spills it if the rows held
// would pass the limit, calling beforeSpill (when not nil) first. Objects
// that cannot spill are not counted.
func (b *budget) admit(obj scoring.Object, beforeSpill func()) error {
	o, ok := obj.(scoring.Spiller)
	if !ok {
		return nil
	}
	size := o.MemBytes()
	b.mu.Lock()
	over := b.used+size > b.limit
	if !over {
		b.used += size
	}
	b.mu.Unlock()
	if !over {
		return nil
	}
	if beforeSpill != nil {
		beforeSpill()
	}
	dir, err := b.space.folder()
	if err != nil {
		return &StorageError{Op: "spill", URL: b.dir, Err: err}
	}
	if err := o.Spill(dir); err != nil {
		return &StorageError{Op: "spill", URL: b.dir, Err: err}
	}
	b.mu.Lock()
	b.used += o.MemBytes()
	b.spilled++
	b.mu.Unlock()
	return nil
}
