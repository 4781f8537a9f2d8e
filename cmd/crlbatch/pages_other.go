//go:build !linux

package main

// dropStartupPages does nothing outside Linux (pages_linux.go).
func dropStartupPages() int64 { return 0 }
