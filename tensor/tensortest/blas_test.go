package tensortest

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"marsfs/tensor/kernel"
)

// TestBLAS checks that the float kernels call the BLAS the build names:
// by default gonum's with marsfs' gemm products in it (their assembly
// kernels where the CPU has AVX2 and FMA: "gemm", else gonum's own:
// "gonum"), OpenBLAS through gonum's netlib binding with the openblas
// build tag.
func TestBLAS(t *testing.T) {
	want := map[string]string{"gemm": "gemm.Implementation", "gonum": "gemm.Implementation", "OpenBLAS": "netlib.Implementation"}[kernel.BLAS]
	if want == "" {
		t.Fatalf("BLAS = %q, want gemm, gonum or OpenBLAS", kernel.BLAS)
	}
	for _, impl := range []any{blas64.Implementation(), blas32.Implementation()} {
		if got := fmt.Sprintf("%T", impl); got != want {
			t.Errorf("BLAS %s: implementation %s, want %s", kernel.BLAS, got, want)
		}
	}
}
