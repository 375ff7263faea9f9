//go:build openblas && cgo

package kernel

import (
	"gonum.org/v1/gonum/blas"

	// Built with the openblas tag, the float kernels and factorizations
	// run on OpenBLAS, one thread a kernel: the runtime runs kernels in
	// parallel.
	_ "marsfs/tensor/internal/openblas"
)

// BLAS names the BLAS implementation the float kernels call.
const BLAS = "OpenBLAS"

// gemm sets the row-major m x n matrix c to a b + beta c, for a (m x k) and
// b (k x n) given as views of their buffers, and k > 0, with the general
// matrix product f of a BLAS.
func gemm[T float32 | float64](f func(ta, tb blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int),
	m, k, n int, a, b matView[T], beta T, c []T) {
	f(a.trans(), b.trans(), m, n, k, 1, a.at(0, 0), a.ld, b.at(0, 0), b.ld, beta, c, n)
}
