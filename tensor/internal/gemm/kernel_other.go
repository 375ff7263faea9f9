//go:build !amd64 || purego

package gemm

// Other architectures have no micro-kernels: the products are gonum's.
const haveKernels = false

var (
	kernelF64 func(k int, a, b, c *float64, ldc int, alpha, beta float64)
	kernelF32 func(k int, a, b, c *float32, ldc int, alpha, beta float32)
)
