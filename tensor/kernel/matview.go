package kernel

import (
	"gonum.org/v1/gonum/blas"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// A matView is a 2-D operand of a product as a BLAS takes it: a block of a
// row-major buffer starting at data[off], the rows of the buffer ld
// elements apart, and stored transposed (the operand's rows are columns
// of the buffer) when transposed.
type matView[T any] struct {
	data       []T
	off, ld    int
	transposed bool
}

func (v matView[T]) trans() blas.Transpose {
	if v.transposed {
		return blas.Trans
	}
	return blas.NoTrans
}

// at returns the buffer from the operand's element (i, j) on.
func (v matView[T]) at(i, j int) []T {
	if v.transposed {
		i, j = j, i
	}
	return v.data[v.off+i*v.ld+j:]
}

// viewOf makes the matView of block x (a whole chunk when view is nil)
// whose data are d.
func viewOf[T any](d []T, x *tensor.Array, view *chunk.BlockView) matView[T] {
	cols := x.Shape[1]
	if view == nil {
		return matView[T]{data: d, ld: cols}
	}
	return matView[T]{data: d, off: view.R0*cols + view.C0, ld: cols, transposed: view.Trans}
}

// blasGemm sets the row-major m x n matrix c to a b + beta c, for a (m x k)
// and b (k x n) given as views of their buffers, and k > 0, with the
// general matrix product f of a BLAS, in one call: the BLAS blocks the
// product for the caches itself.
func blasGemm[T float32 | float64](f func(ta, tb blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int),
	m, k, n int, a, b matView[T], beta T, c []T) {
	f(a.trans(), b.trans(), m, n, k, 1, a.at(0, 0), a.ld, b.at(0, 0), b.ld, beta, c, n)
}

// blasSyrk sets the upper triangle (with the diagonal) of the row-major n x n
// matrix c to that of a aᵀ + beta c, for a (n x k) given as a view of its
// buffer, and k > 0, with the symmetric rank-k update f of a BLAS: half
// the flops of the product. The caller mirrors the triangle.
func blasSyrk[T float32 | float64](f func(ul blas.Uplo, t blas.Transpose, n, k int, alpha T, a []T, lda int, beta T, c []T, ldc int),
	n, k int, a matView[T], beta T, c []T) {
	f(blas.Upper, a.trans(), n, k, 1, a.at(0, 0), a.ld, beta, c, n)
}

// mirrorUpper copies the upper triangle of the row-major n x n matrix c
// onto its lower one, a square of 64 x 64 at a time so that both the rows
// read and the columns written stay in cache.
func mirrorUpper[T any](c []T, n int) {
	const b = 64
	for i0 := 0; i0 < n; i0 += b {
		for j0 := 0; j0 <= i0; j0 += b {
			for i := i0; i < min(i0+b, n); i++ {
				row := c[i*n : i*n+min(i, j0+b)]
				for j := j0; j < len(row); j++ {
					row[j] = c[j*n+i]
				}
			}
		}
	}
}

// materialize copies the block that view makes of x into an array of its
// own, for the kernels that read blocks whole.
func materialize(x *tensor.Array, view *chunk.BlockView) *tensor.Array {
	if view == nil {
		return x
	}
	shape := view.Shape()
	out := tensor.NewArray(x.DType, shape)
	size := x.DType.Size()
	cols := x.Shape[1]
	for r := view.R0; r < view.R1; r++ {
		for c := view.C0; c < view.C1; c++ {
			i, j := r-view.R0, c-view.C0
			if view.Trans {
				i, j = j, i
			}
			copy(out.Data[(i*shape[1]+j)*size:][:size], x.Data[(r*cols+c)*size:][:size])
		}
	}
	return out
}
