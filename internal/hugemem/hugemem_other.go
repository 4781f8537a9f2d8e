//go:build !linux

package hugemem

func available() bool { return false }

func addr(b []byte) uintptr { return 0 }

func advise(p, n uintptr) {}

func unadvise(p, n uintptr) {}

func releaseExecutable() int64 { return 0 }
