//go:build openblas && cgo

package kernel

import (
	// Built with the openblas tag, the float kernels and factorizations
	// run on OpenBLAS, one thread a kernel: the runtime runs kernels in
	// parallel.
	_ "marsfs/tensor/internal/openblas"
)

// BLAS names the BLAS the float kernels call.
var BLAS = "OpenBLAS"

// filledProducts is false: OpenBLAS multiplies stored blocks only.
const filledProducts = false
