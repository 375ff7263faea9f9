//go:build !openblas || !cgo

package kernel

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"marsfs/tensor/internal/gemm"
)

// BLAS names the BLAS the float kernels call. By default it is gonum's
// pure-Go BLAS with its matrix products (Dgemm, Sgemm, Dsyrk, Ssyrk)
// replaced by marsfs' own, tensor/internal/gemm, which runs assembly
// micro-kernels on amd64 CPUs with AVX2 and FMA and needs no C library;
// the openblas build tag switches to OpenBLAS.
var BLAS = defaultBLAS()

// filledProducts says whether products of drawn blocks go to
// gemm.DgemmFilled, which makes the blocks' values as it packs them: where
// gemm runs its kernels.
var filledProducts = gemm.Fast()

func defaultBLAS() string {
	if gemm.Fast() {
		return "gemm"
	}
	return "gonum"
}

// init hands gemm's products to gonum's blas64 and blas32, so that the
// matmul kernels and gonum's LAPACK (QR, solves, Cholesky), which calls
// blas64 for its panel updates, both run on them. It must run before any
// kernel, and gonum offers no other hook than a package-wide choice.
func init() {
	blas64.Use(gemm.Implementation{})
	blas32.Use(gemm.Implementation{})
}
