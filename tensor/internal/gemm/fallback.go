package gemm

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// The blocks the pure-Go path hands gonum: a 64 x 128 block of C, which
// gonum computes serially (it goes parallel from four 64 x 64 blocks of C
// up), over 128 of the contracted axis, so that the three blocks, 256 KiB
// of float64, stay in L2 while gonum makes its passes over them. Measured
// on 1000 x 1000 blocks, this did 20% more GFLOP a CPU second than one
// call for the whole product; and serial is what marsfs wants, since its
// runtime already runs one kernel a core.
const slowRows, slowCols, slowDepth = 64, 128, 128

// slowGemm is the product on CPUs without the kernels: gonum's, a block of
// C at a time.
func slowGemm[T float32 | float64](f func(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int),
	transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 || k == 0 || alpha == 0 {
		f(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	// at returns the buffer of op(x) from its element (i, j) on.
	at := func(x []T, ld int, t bool, i, j int) []T {
		if t {
			i, j = j, i
		}
		return x[i*ld+j:]
	}
	for i := 0; i < m; i += slowRows {
		mi := min(slowRows, m-i)
		for j := 0; j < n; j += slowCols {
			nj := min(slowCols, n-j)
			bt := beta
			for l := 0; l < k; l += slowDepth {
				f(trans(transA), trans(transB), mi, nj, min(slowDepth, k-l), alpha,
					at(a, lda, transA, i, l), lda, at(b, ldb, transB, l, j), ldb, bt, c[i*ldc+j:], ldc)
				bt = 1
			}
		}
	}
}

var (
	slowDgemm = func(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
		slowGemm(gonum.Implementation{}.Dgemm, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
	slowSgemm = func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		slowGemm(gonum.Implementation{}.Sgemm, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
)

// slowSyrk is the symmetric update on CPUs without the kernels: gonum's,
// but with beta 0 clearing the triangle first, since gonum's (v0.17)
// multiplies C by beta 0 for the lower triangle of aᵀ a, which keeps NaNs
// that BLAS must drop.
func slowSyrk[T float32 | float64](f func(ul blas.Uplo, t blas.Transpose, n, k int, alpha T, a []T, lda int, beta T, c []T, ldc int),
	upper, transA bool, n, k int, alpha T, a []T, lda int, beta T, c []T, ldc int) {
	if beta == 0 && n > 0 && len(c) >= (n-1)*ldc+n {
		for i := range n {
			if upper {
				clear(c[i*ldc+i : i*ldc+n])
			} else {
				clear(c[i*ldc : i*ldc+i+1])
			}
		}
		beta = 1
	}
	f(uplo(upper), trans(transA), n, k, alpha, a, lda, beta, c, ldc)
}
