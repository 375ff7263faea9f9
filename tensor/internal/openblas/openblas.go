//go:build cgo

// Package openblas makes gonum's blas64 and blas32 packages call OpenBLAS,
// through gonum's cgo binding, with one OpenBLAS thread a call.
//
// Importing it is the whole interface: its init switches the
// implementations. It needs libopenblas at build and run time (Debian:
// libopenblas-dev); marsfs imports it only when built with the openblas tag.
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

func init() {
	C.openblas_set_num_threads(1)
	blas64.Use(netlib.Implementation{})
	blas32.Use(netlib.Implementation{})
}
