package zarr

import (
	"syscall"
	"testing"
	"time"
	"unsafe"
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

// threadCPU is the CPU time of the calling thread (user and system: page
// faults count), as Python's time.thread_time.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3 /* CLOCK_THREAD_CPUTIME_ID */, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}
