package tile

import (
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
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

func checkSquare(n *spec.Node) error {
	s := n.Inputs[0].Shape
	if len(s) != 2 || s[0] != s[1] {
		return fmt.Errorf("%s needs a square matrix, not one of shape %v", n.Op, s)
	}
	return nil
}

func tileSolve(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
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
	if n.DType != spec.SolveDType(n.Inputs[0].DType, b.DType) {
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
			op := &chunk.Op{Kind: chunk.KindQRQT, Inputs: []int{int(nd.key)}, Shape: []int{nd.k, nrhs}, DType: tensor.Float64, Args: chunk.QRQTArgs{Leaf: l == 0}}
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
	key := t.emit(&chunk.Op{Kind: chunk.KindSolve, Inputs: []int{int(tr.root().key), int(below[0])}, Shape: n.Shape, DType: n.DType})
	chunks := [][]int{{size}}
	if len(n.Shape) == 2 {
		chunks = append(chunks, []int{nrhs})
	}
	return &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: chunks, Keys: []uint64{key}}, nil
}

func tileInv(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
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
	q := t.qFactor(tr, -1, size, tensor.Float64)
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{{size}, tr.a.Chunks[0]}}
	for i, rows := range tr.a.Chunks[0] {
		out.Keys = append(out.Keys, t.emit(&chunk.Op{Kind: chunk.KindInv, Inputs: []int{int(tr.root().key), int(q[i])}, Shape: []int{size, rows}, DType: n.DType}))
	}
	return out, nil
}

func tileCholesky(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
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
			for ; j-k > CholUpdates; k += CholUpdates {
				inputs := []int{cur}
				for m := k; m < k+CholUpdates; m++ {
					inputs = append(inputs, int(l[i*nb+m]), int(l[j*nb+m]))
				}
				cur = int(t.emit(&chunk.Op{Kind: chunk.KindCholeskyUpdate, Inputs: inputs, Shape: shape, DType: tensor.Float64}))
			}
			inputs := []int{cur}
			kind := chunk.KindCholesky
			if i > j {
				kind = chunk.KindCholeskyBlock
				inputs = append(inputs, int(l[j*nb+j]))
			}
			for ; k < j; k++ {
				inputs = append(inputs, int(l[i*nb+k]), int(l[j*nb+k]))
			}
			l[i*nb+j] = t.emit(&chunk.Op{Kind: kind, Inputs: inputs, Shape: shape, DType: n.DType})
		}
		for i := range j {
			l[i*nb+j] = t.emit(&chunk.Op{Kind: chunk.KindLinalgZeros, Shape: []int{cs[i], cs[j]}, DType: n.DType})
		}
	}
	return &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{cs, cs}, Keys: l}, nil
}

// CholUpdates is how many products L_il L_jlᵀ one op subtracts, so that no
// op reads more than 2·cholUpdates+2 blocks however many blocks a side has.
const CholUpdates = 4
