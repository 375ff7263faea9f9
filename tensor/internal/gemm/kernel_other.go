//go:build !amd64 || purego

package gemm

import "unsafe"

// Other architectures have no micro-kernels: the products are gonum's.
const haveKernels, have512 = false, false

var (
	kernelF64    func(k int, a, b, c *float64, ldc int, alpha, beta float64)
	kernelF64x20 func(k int, a, b, c *float64, ldc int, alpha, beta float64)
	kernelF32    func(k int, a, b, c *float32, ldc int, alpha, beta float32)
)

// The packing loops of pack_amd64.s are never called here (haveKernels is
// false).
func packPanels64(dst, src unsafe.Pointer, ld, rows, panels, stride int) {
	panic("gemm: no packing loops")
}

func packRows6D(dst, src unsafe.Pointer, ld, kb int) { panic("gemm: no packing loops") }

func packRows4D(dst, src unsafe.Pointer, ld, kb, stride int) { panic("gemm: no packing loops") }
