//go:build !linux

package zarr

import (
	"testing"
	"time"
)

// freshPages returns a new buffer of n bytes (the runtime may give pages
// it has touched before).
func freshPages(b *testing.B, n int) ([]byte, func()) { return make([]byte, n), func() {} }

// threadCPU is the wall clock where the thread's CPU time is not read.
func threadCPU() time.Duration { return time.Duration(time.Now().UnixNano()) }
