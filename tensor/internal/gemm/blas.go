package gemm

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Implementation is gonum's BLAS with the level-3 routines this package
// makes fast in its place: Dgemm, Sgemm, Dsyrk and Ssyrk. Given to
// blas64.Use and blas32.Use, it speeds up what calls them, gonum's LAPACK
// (QR, Cholesky, solves) included, whose blocked algorithms spend most of
// their flops in Dgemm.
type Implementation struct{ gonum.Implementation }

var (
	_ blas.Float64 = Implementation{}
	_ blas.Float32 = Implementation{}
)

// transposed reads a BLAS transpose flag, panicking on an invalid one as
// gonum does; a conjugate transpose of reals is a transpose.
func transposed(t blas.Transpose) bool {
	switch t {
	case blas.NoTrans:
		return false
	case blas.Trans, blas.ConjTrans:
		return true
	}
	panic("blas: illegal transpose")
}

func upper(ul blas.Uplo) bool {
	switch ul {
	case blas.Upper:
		return true
	case blas.Lower:
		return false
	}
	panic("blas: illegal triangle")
}

// Dgemm is the package's Dgemm behind gonum's signature.
func (Implementation) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	Dgemm(transposed(tA), transposed(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Sgemm is the package's Sgemm behind gonum's signature.
func (Implementation) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	Sgemm(transposed(tA), transposed(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Dsyrk is the package's Dsyrk behind gonum's signature.
func (Implementation) Dsyrk(ul blas.Uplo, t blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	Dsyrk(upper(ul), transposed(t), n, k, alpha, a, lda, beta, c, ldc)
}

// Ssyrk is the package's Ssyrk behind gonum's signature.
func (Implementation) Ssyrk(ul blas.Uplo, t blas.Transpose, n, k int, alpha float32, a []float32, lda int, beta float32, c []float32, ldc int) {
	Ssyrk(upper(ul), transposed(t), n, k, alpha, a, lda, beta, c, ldc)
}
