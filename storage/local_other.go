//go:build !unix

package storage

const nonBlocking = 0
