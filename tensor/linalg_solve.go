package tensor

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Solve and inv reuse the TSQR of the square matrix A = QR: solve computes
// Qᵀb bottom-up through the factor tree (each node applies its reflectors to
// its block of b, or to its children's stacked results) and then solves the
// triangular system R x = Qᵀb; inv forms Q's row blocks top-down and turns
// each into a column block of A⁻¹ = R⁻¹Qᵀ, so the inverse comes out in as
// many chunks as A had row blocks.
//
// A is reported singular when a diagonal element of R is at most
// n·eps·max|R_ii| in magnitude, the tolerance NumPy's matrix_rank applies to
// singular values: an exactly singular matrix rarely gives an exact zero in
// floating point, and a system that close to singular has no meaningful
// solution.
//
// Cholesky tiles A into square blocks (the rows' and columns' chunk
// boundaries together) and computes the lower factor block by block, left
// looking: the diagonal block j is the Cholesky factor of A_jj − Σ_l L_jl
// L_jlᵀ, and block (i, j) below it is (A_ij − Σ_l L_il L_jlᵀ) L_jj⁻ᵀ; the
// sums are taken a few products an op, so that no op reads a whole row of
// blocks. Blocks above the diagonal are zeros, as NumPy returns them.

func checkSquare(n *Node) error {
	s := n.Inputs[0].Shape
	if len(s) != 2 || s[0] != s[1] {
		return fmt.Errorf("%s needs a square matrix, not one of shape %v", n.Op, s)
	}
	return nil
}

func tileSolve(t *tiler, n *Node) (*TiledTensor, error) {
	if len(n.Inputs) != 2 {
		return nil, fmt.Errorf("need 2 inputs, have %d", len(n.Inputs))
	}
	if err := checkSquare(n); err != nil {
		return nil, err
	}
	size := n.Inputs[0].Shape[0]
	b := t.input(n, 1)
	if (len(b.Shape) != 1 && len(b.Shape) != 2) || b.Shape[0] != size {
		return nil, fmt.Errorf("right-hand side of shape %v for a %d x %d matrix", b.Shape, size, size)
	}
	if !slices.Equal(n.Shape, b.Shape) {
		return nil, fmt.Errorf("node shape %v for a right-hand side of %v", n.Shape, b.Shape)
	}
	if n.DType != solveDType(n.Inputs[0].DType, b.DType) {
		return nil, fmt.Errorf("dtype %v for inputs of %v and %v", n.DType, n.Inputs[0].DType, b.DType)
	}
	tr, err := t.tsqr(n)
	if err != nil {
		return nil, err
	}
	nrhs := 1
	if len(b.Shape) == 2 {
		nrhs = b.Shape[1]
		b = t.rechunk(b, [][]int{tr.a.Chunks[0], {nrhs}})
	} else {
		b = t.rechunk(b, [][]int{tr.a.Chunks[0]})
	}
	var below []uint64 // the previous level's results
	for l, level := range tr.levels {
		keys := make([]uint64, len(level))
		for i, nd := range level {
			op := &ChunkOp{Kind: "linalg.qr.qt", Inputs: []int{int(nd.key)}, Shape: []int{nd.k, nrhs}, DType: Float64, Args: QRQTArgs{Leaf: l == 0}}
			if l == 0 {
				op.Inputs = append(op.Inputs, int(b.Keys[i]))
			} else {
				for c, child := range tr.levels[l-1] {
					if child.parent == i {
						op.Inputs = append(op.Inputs, int(below[c]))
					}
				}
			}
			keys[i] = t.emit(op)
		}
		below = keys
	}
	key := t.emit(&ChunkOp{Kind: "linalg.solve", Inputs: []int{int(tr.root().key), int(below[0])}, Shape: n.Shape, DType: n.DType})
	chunks := [][]int{{size}}
	if len(n.Shape) == 2 {
		chunks = append(chunks, []int{nrhs})
	}
	return &TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: chunks, Keys: []uint64{key}}, nil
}

func tileInv(t *tiler, n *Node) (*TiledTensor, error) {
	if err := checkFactorNode(n); err != nil {
		return nil, err
	}
	if err := checkSquare(n); err != nil {
		return nil, err
	}
	if !slices.Equal(n.Shape, n.Inputs[0].Shape) {
		return nil, fmt.Errorf("node shape %v for an input of %v", n.Shape, n.Inputs[0].Shape)
	}
	tr, err := t.tsqr(n)
	if err != nil {
		return nil, err
	}
	size := tr.n
	q := t.qFactor(tr, -1, size, Float64)
	out := &TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{{size}, tr.a.Chunks[0]}}
	for i, rows := range tr.a.Chunks[0] {
		out.Keys = append(out.Keys, t.emit(&ChunkOp{Kind: "linalg.inv", Inputs: []int{int(tr.root().key), int(q[i])}, Shape: []int{size, rows}, DType: n.DType}))
	}
	return out, nil
}

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
func solveKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	p, err := unpack(in[0])
	if err != nil {
		return nil, err
	}
	r, err := rTriangular(p)
	if err != nil {
		return nil, err
	}
	c := in[1]
	if c.DType != Float64 || len(c.Shape) != 2 || c.Shape[0] != p.n || c.Len() != NumElements(op.Shape) {
		return nil, fmt.Errorf("Qᵀb of %v%v for a %d x %d system of shape %v", c.DType, c.Shape, p.n, p.n, op.Shape)
	}
	x := append([]float64(nil), c.Float64s()...)
	if p.n > 0 && c.Shape[1] > 0 {
		blas64.Trsm(blas.Left, blas.NoTrans, 1, r, blas64.General{Rows: p.n, Cols: c.Shape[1], Stride: c.Shape[1], Data: x})
	}
	return fromFloat64(x, op.DType, op.Shape), nil
}

// invKernel computes the column block R⁻¹ Q_iᵀ of A⁻¹ from Q's row block i.
func invKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	p, err := unpack(in[0])
	if err != nil {
		return nil, err
	}
	r, err := rTriangular(p)
	if err != nil {
		return nil, err
	}
	q := in[1]
	if q.DType != Float64 || len(q.Shape) != 2 || q.Shape[1] != p.n || !slices.Equal(op.Shape, []int{p.n, q.Shape[0]}) {
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

func tileCholesky(t *tiler, n *Node) (*TiledTensor, error) {
	if err := checkFactorNode(n); err != nil {
		return nil, err
	}
	if err := checkSquare(n); err != nil {
		return nil, err
	}
	if !slices.Equal(n.Shape, n.Inputs[0].Shape) {
		return nil, fmt.Errorf("node shape %v for an input of %v", n.Shape, n.Inputs[0].Shape)
	}
	a := t.input(n, 0)
	cs := refineChunks(a.Chunks[0], a.Chunks[1])
	a = t.rechunk(a, [][]int{cs, cs})
	nb := len(cs)
	l := make([]uint64, nb*nb)
	for j := range nb {
		for i := j; i < nb; i++ {
			shape := []int{cs[i], cs[j]}
			// A_ij − Σ_l L_il L_jlᵀ, cholUpdates pairs an op, the first
			// pairs with the block itself.
			cur := int(a.Keys[i*nb+j])
			k := 0
			for ; j-k > cholUpdates; k += cholUpdates {
				inputs := []int{cur}
				for m := k; m < k+cholUpdates; m++ {
					inputs = append(inputs, int(l[i*nb+m]), int(l[j*nb+m]))
				}
				cur = int(t.emit(&ChunkOp{Kind: "linalg.cholesky.update", Inputs: inputs, Shape: shape, DType: Float64}))
			}
			inputs := []int{cur}
			kind := "linalg.cholesky"
			if i > j {
				kind = "linalg.cholesky.block"
				inputs = append(inputs, int(l[j*nb+j]))
			}
			for ; k < j; k++ {
				inputs = append(inputs, int(l[i*nb+k]), int(l[j*nb+k]))
			}
			l[i*nb+j] = t.emit(&ChunkOp{Kind: kind, Inputs: inputs, Shape: shape, DType: n.DType})
		}
		for i := range j {
			l[i*nb+j] = t.emit(&ChunkOp{Kind: "linalg.zeros", Shape: []int{cs[i], cs[j]}, DType: n.DType})
		}
	}
	return &TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{cs, cs}, Keys: l}, nil
}

// choleskyUpdate returns a copy of in[0] (rows x cols) minus the sum of the
// products in[i] in[i+1]ᵀ over the pairs of blocks that follow it.
func choleskyUpdate(in []*Array) ([]float64, int, int, error) {
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

// cholUpdates is how many products L_il L_jlᵀ one op subtracts, so that no
// op reads more than 2·cholUpdates+2 blocks however many blocks a side has.
const cholUpdates = 4

// choleskyUpdateKernel subtracts a group of products from a block.
func choleskyUpdateKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	d, _, _, err := choleskyUpdate(in)
	if err != nil {
		return nil, err
	}
	return fromFloat64(d, Float64, op.Shape), nil
}

func choleskyDiagKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
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
func choleskyBlockKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	if len(in) < 2 {
		return nil, fmt.Errorf("%d inputs", len(in))
	}
	d, rows, cols, err := choleskyUpdate(append([]*Array{in[0]}, in[2:]...))
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

func zerosKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	return NewArray(op.DType, op.Shape), nil
}
