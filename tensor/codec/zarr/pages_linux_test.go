package zarr

import (
	"syscall"
	"testing"
)

// freshPages maps n bytes of new anonymous memory, none of it touched,
// and returns it with what unmaps it.
func freshPages(b *testing.B, n int) ([]byte, func()) {
	m, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		b.Fatal(err)
	}
	return m, func() { syscall.Munmap(m) }
}
