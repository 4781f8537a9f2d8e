// Copyright 2009 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package fpmath

// The float64 layout, as Go's math/bits.go has it.
const (
	mask  = 0x7FF
	shift = 64 - 11 - 1
	bias  = 1023
)
