package tensortest

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"marsfs/tensor/kernel"
)

// TestBLAS checks that the float kernels call the BLAS the build names:
// gonum's by default, OpenBLAS through gonum's netlib binding with the
// openblas build tag.
func TestBLAS(t *testing.T) {
	want := map[string]string{"gonum": "gonum.Implementation", "OpenBLAS": "netlib.Implementation"}[kernel.BLAS]
	if want == "" {
		t.Fatalf("BLAS = %q, want gonum or OpenBLAS", kernel.BLAS)
	}
	for _, impl := range []any{blas64.Implementation(), blas32.Implementation()} {
		if got := fmt.Sprintf("%T", impl); got != want {
			t.Errorf("BLAS %s: implementation %s, want %s", kernel.BLAS, got, want)
		}
	}
}
