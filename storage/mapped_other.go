//go:build !linux

package storage

import "os"

// mapsFiles says whether local objects are mapped (Mapped): on Linux only.
const mapsFiles = false

func mapFile(*os.File, int64) []byte { return nil }
func unmapFile([]byte)               {}
func releasePages([]byte)            {}
func populatePages([]byte)           {}
