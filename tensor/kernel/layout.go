package kernel

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// diagonalKernel copies the run of the diagonal of its block that starts
// at (Row, Col).
func diagonalKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.DiagonalArgs)
	if !ok || len(in) != 1 || len(op.Shape) != 1 {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	x := in[0]
	l := op.Shape[0]
	if len(x.Shape) != 2 || args.Row < 0 || args.Col < 0 || l > 0 && (args.Row+l > x.Shape[0] || args.Col+l > x.Shape[1]) {
		return nil, fmt.Errorf("a run of %d from (%d, %d) leaves the block %v", l, args.Row, args.Col, x.Shape)
	}
	out := tensor.NewArray(x.DType, []int{l})
	sz := x.DType.Size()
	for i := range l {
		src := ((args.Row+i)*x.Shape[1] + args.Col + i) * sz
		copy(out.Data[i*sz:(i+1)*sz], x.Data[src:src+sz])
	}
	return out, nil
}

// eighKernel decomposes the symmetric matrix in[0] (its lower triangle,
// or its upper): row 0 of the result holds the eigenvalues,
// ascending, and the rows after it the eigenvectors, in columns.
func eighKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.EighArgs)
	if !ok || len(in) != 1 || len(in[0].Shape) != 2 || in[0].Shape[0] != in[0].Shape[1] {
		return nil, fmt.Errorf("eigh takes one square matrix")
	}
	n := in[0].Shape[0]
	// The upper triangle is read as the lower one of the transpose.
	a := make([]float64, n*n)
	for i := range n {
		for j := range n {
			src := i*n + j
			if args.Upper {
				src = j*n + i
			}
			a[i*n+j] = in[0].Float64At(src)
		}
	}
	uplo := blas.Lower
	w := make([]float64, n)
	if n > 0 {
		sym := blas64.Symmetric{Uplo: uplo, N: n, Stride: n, Data: a}
		work := make([]float64, 1)
		lapack64.Syev(lapack.EVCompute, sym, w, work, -1)
		work = make([]float64, int(work[0]))
		if !lapack64.Syev(lapack.EVCompute, sym, w, work, len(work)) {
			return nil, fmt.Errorf("Eigenvalues did not converge")
		}
	}
	out := tensor.NewArray(tensor.Float64, []int{n + 1, n})
	copy(out.Float64s(), w)
	copy(out.Float64s()[n:], a)
	return out, nil
}

// eighPartKernel cuts the values (row 0) or the vectors out of the packed
// decomposition, in the op's dtype.
func eighPartKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	p := in[0]
	if len(p.Shape) != 2 || p.Shape[0] != p.Shape[1]+1 {
		return nil, fmt.Errorf("packed decomposition of shape %v", p.Shape)
	}
	n := p.Shape[1]
	src := p.Float64s()[n:]
	if op.Kind == tensor.OpEighW {
		src = p.Float64s()[:n]
	}
	return fromFloat64(append([]float64(nil), src...), op.DType, op.Shape), nil
}
