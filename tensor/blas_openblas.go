//go:build openblas && cgo

package tensor

// Built with the openblas tag, float products and factorizations run on
// OpenBLAS (one thread a kernel: the runtime runs kernels in parallel).
import _ "marsfs/tensor/internal/openblas"

// BLAS names the BLAS implementation the float kernels call.
const BLAS = "OpenBLAS"
