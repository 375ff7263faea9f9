//go:build !linux

package zarr

import "testing"

// freshPages returns a new buffer of n bytes (the runtime may give pages
// it has touched before).
func freshPages(b *testing.B, n int) ([]byte, func()) { return make([]byte, n), func() {} }
