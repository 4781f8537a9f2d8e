//go:build unix

package pipeline

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process of this pid exists (a pid reused
// by another process counts as alive: a claim is then kept, never lost).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
