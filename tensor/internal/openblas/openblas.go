//go:build openblas && cgo

package openblas

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int);
*/
import "C"

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// init hands OpenBLAS to gonum's blas64 and blas32, one thread a call
// (marsfs runs a kernel a slot), before any kernel runs: gonum's choice
// of BLAS is package-wide state with no other hook.
func init() {
	C.openblas_set_num_threads(1)
	blas64.Use(netlib.Implementation{})
	blas32.Use(netlib.Implementation{})
}
