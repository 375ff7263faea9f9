//go:build amd64 && !purego

package gemm

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The micro-kernels of kernel_amd64.s: c = alpha a b + beta c for a block
// of c of mr x nr, from packed micro-panels of k steps.
//
//go:noescape
func kernelD(k int, a, b, c *float64, ldc int, alpha, beta float64)

//go:noescape
func kernelS(k int, a, b, c *float32, ldc int, alpha, beta float32)

//go:noescape
func kernelD512(k int, a, b, c *float64, ldc int, alpha, beta float64)

// haveKernels says whether the CPU and the OS run the kernels: AVX2 and
// FMA, and the OS saving the YMM registers (which cpu.X86.HasAVX2 checks).
var haveKernels = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// have512 says whether the CPU and the OS run kernelD512: AVX-512F, and
// the OS saving the ZMM registers (which cpu.X86.HasAVX512F checks).
var have512 = haveKernels && cpu.X86.HasAVX512F

var (
	kernelF64    = kernelD
	kernelF64x20 = kernelD512
	kernelF32    = kernelS
)

// fmaLoop runs n rounds of 12 independent FMAs on registers (96 float64
// flops a round): the benchmarks' measure of a core's real FMA peak, which
// a turbo clock puts above the nominal one /proc/cpuinfo gives.
//
//go:noescape
func fmaLoop(n int)

// The packing loops of pack_amd64.s, for packA and packB.
//
//go:noescape
func packPanels64(dst, src unsafe.Pointer, ld, rows, panels, stride int)

//go:noescape
func packRows6D(dst, src unsafe.Pointer, ld, kb int)

//go:noescape
func packRows4D(dst, src unsafe.Pointer, ld, kb, stride int)
