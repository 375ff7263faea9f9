//go:build !openblas || !cgo

package tensor

// BLAS names the BLAS implementation the float kernels call: by default
// gonum's pure-Go one, which needs no C library; the openblas build tag
// switches to OpenBLAS.
const BLAS = "gonum"
