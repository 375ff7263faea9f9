package kernel

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// rTriangular returns R of the root factor p as an upper triangular matrix,
// or an error if it is numerically singular.
func rTriangular(p packed) (blas64.Triangular, error) {
	if p.k != p.n || p.rows != p.n {
		return blas64.Triangular{}, fmt.Errorf("factor of %d x %d is not square", p.rows, p.n)
	}
	r := make([]float64, p.n*p.n)
	p.upperR(r)
	big := 0.0
	for i := range p.n {
		big = max(big, math.Abs(r[i*p.n+i]))
	}
	tol := big * float64(p.n) * 0x1p-52
	for i := range p.n {
		if d := math.Abs(r[i*p.n+i]); d <= tol {
			return blas64.Triangular{}, fmt.Errorf("matrix is singular")
		}
	}
	return blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: p.n, Stride: p.n, Data: r}, nil
}

// solveKernel solves R x = c, c = Qᵀb from the bottom-up pass.
func solveKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	p, err := unpack(in[0])
	if err != nil {
		return nil, err
	}
	r, err := rTriangular(p)
	if err != nil {
		return nil, err
	}
	c := in[1]
	if c.DType != tensor.Float64 || len(c.Shape) != 2 || c.Shape[0] != p.n || c.Len() != tensor.NumElements(op.Shape) {
		return nil, fmt.Errorf("Qᵀb of %v%v for a %d x %d system of shape %v", c.DType, c.Shape, p.n, p.n, op.Shape)
	}
	x := append([]float64(nil), c.Float64s()...)
	if p.n > 0 && c.Shape[1] > 0 {
		blas64.Trsm(blas.Left, blas.NoTrans, 1, r, blas64.General{Rows: p.n, Cols: c.Shape[1], Stride: c.Shape[1], Data: x})
	}
	return fromFloat64(x, op.DType, op.Shape), nil
}

// invKernel computes the column block R⁻¹ Q_iᵀ of A⁻¹ from Q's row block i.
func invKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	p, err := unpack(in[0])
	if err != nil {
		return nil, err
	}
	r, err := rTriangular(p)
	if err != nil {
		return nil, err
	}
	q := in[1]
	if q.DType != tensor.Float64 || len(q.Shape) != 2 || q.Shape[1] != p.n || !slices.Equal(op.Shape, []int{p.n, q.Shape[0]}) {
		return nil, fmt.Errorf("Q block %v%v for an inverse block of %v", q.DType, q.Shape, op.Shape)
	}
	rows, size := q.Shape[0], p.n
	x := make([]float64, size*rows)
	qd := q.Float64s()
	for i := range rows {
		for j := range size {
			x[j*rows+i] = qd[i*size+j]
		}
	}
	if size > 0 && rows > 0 {
		blas64.Trsm(blas.Left, blas.NoTrans, 1, r, blas64.General{Rows: size, Cols: rows, Stride: rows, Data: x})
	}
	return fromFloat64(x, op.DType, op.Shape), nil
}

// choleskyUpdate returns a copy of in[0] (rows x cols) minus the sum of the
// products in[i] in[i+1]ᵀ over the pairs of blocks that follow it.
func choleskyUpdate(in []*tensor.Array) ([]float64, int, int, error) {
	a := in[0]
	if len(a.Shape) != 2 || len(in)%2 != 1 {
		return nil, 0, 0, fmt.Errorf("%d inputs, first of shape %v", len(in), a.Shape)
	}
	rows, cols := a.Shape[0], a.Shape[1]
	d := float64Copy(a)
	out := blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: d}
	for i := 1; i < len(in); i += 2 {
		x, y := in[i], in[i+1]
		if len(x.Shape) != 2 || len(y.Shape) != 2 || x.Shape[0] != rows || y.Shape[0] != cols || x.Shape[1] != y.Shape[1] {
			return nil, 0, 0, fmt.Errorf("update blocks %v and %v for a block of %v", x.Shape, y.Shape, a.Shape)
		}
		k := x.Shape[1]
		if rows == 0 || cols == 0 || k == 0 {
			continue
		}
		blas64.Gemm(blas.NoTrans, blas.Trans, -1,
			blas64.General{Rows: rows, Cols: k, Stride: k, Data: float64Copy(x)},
			blas64.General{Rows: cols, Cols: k, Stride: k, Data: float64Copy(y)},
			1, out)
	}
	return d, rows, cols, nil
}

// choleskyUpdateKernel subtracts a group of products from a block.
func choleskyUpdateKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	d, _, _, err := choleskyUpdate(in)
	if err != nil {
		return nil, err
	}
	return fromFloat64(d, tensor.Float64, op.Shape), nil
}

func choleskyDiagKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	d, rows, cols, err := choleskyUpdate(in)
	if err != nil {
		return nil, err
	}
	if rows != cols {
		return nil, fmt.Errorf("diagonal block of %d x %d", rows, cols)
	}
	if rows > 0 {
		if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: rows, Stride: rows, Data: d}); !ok {
			return nil, fmt.Errorf("matrix is not positive definite")
		}
	}
	for i := range rows {
		for j := i + 1; j < cols; j++ {
			d[i*cols+j] = 0
		}
	}
	return fromFloat64(d, op.DType, op.Shape), nil
}

// choleskyBlockKernel computes block (i, j) below the diagonal from A_ij,
// L_jj and the pairs L_il, L_jl.
func choleskyBlockKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	if len(in) < 2 {
		return nil, fmt.Errorf("%d inputs", len(in))
	}
	d, rows, cols, err := choleskyUpdate(append([]*tensor.Array{in[0]}, in[2:]...))
	if err != nil {
		return nil, err
	}
	ljj := in[1]
	if !slices.Equal(ljj.Shape, []int{cols, cols}) {
		return nil, fmt.Errorf("diagonal factor of shape %v for a block of %d columns", ljj.Shape, cols)
	}
	if rows > 0 && cols > 0 {
		l := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: cols, Stride: cols, Data: float64Copy(ljj)}
		blas64.Trsm(blas.Right, blas.Trans, 1, l, blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: d})
	}
	return fromFloat64(d, op.DType, op.Shape), nil
}

func zerosKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	return tensor.NewArray(op.DType, op.Shape), nil
}
