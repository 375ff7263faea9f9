package tile

import (
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// QR and SVD tile by TSQR (tall-and-skinny QR). The input A (m x n) is cut
// into row blocks A_i holding all n columns. Each block is factored on its
// own, A_i = Q_i R_i; the R factors of up to qrCombine blocks are stacked and
// factored again, and so on up a tree whose root gives R. Q is never formed
// inside the tree: every factor op keeps LAPACK's compact form (Householder
// reflectors and their scales), and Q's row block i is recovered top-down by
// applying the reflectors of each tree node to the slice of its parent's
// result that belongs to it, starting from the identity at the root:
//
//	W_root = Q_root [I; 0],  W_c = Q_c [W_parent(rows of R_c); 0],  Q block i = W_leaf_i.
//
// The SVD is the SVD of the small R (k x n, k = min(m, n)): R = U_r S Vᵀ, so
// A = (Q U_r) S Vᵀ, and Q U_r is the same top-down pass started from U_r
// instead of I. An inner node of the tree holds at most qrCombine R factors
// of n rows each; every op holds whole rows, so TSQR suits matrices whose
// n x n R fits in one chunk (tall and skinny, as its name says).
//
// Compact form ("packed" chunk): a float64 array of (rows+1) x n whose first
// rows hold LAPACK's geqrf output (R on and above the diagonal, reflectors
// below) and whose last row holds the min(rows, n) reflector scales.

// qrCombine is how many R factors one tree node stacks.
const qrCombine = 8

// A tsqrTree is the factor ops of one TSQR, memoized per input node.
type tsqrTree struct {
	a      *tensor.TiledTensor // the input, cut into row blocks of all columns
	m, n   int
	levels [][]tsqrNode // levels[0] are the leaves; the last level is the root alone
}

type tsqrNode struct {
	key    uint64 // the packed factor
	rows   int    // rows factored: the block's, or the sum of the children's k
	k      int    // rows of this node's R: min(rows, n)
	parent int    // index in the next level
	off    int    // first row of this node's R in the parent's stacked R
}

func (tr *tsqrTree) root() tsqrNode { return tr.levels[len(tr.levels)-1][0] }

// sharedFor returns the value memoized under family and the ID of n's input,
// making it with mk the first time.
func (t *tiler) sharedFor(family string, n *spec.Node, mk func() (any, error)) (any, error) {
	key := fmt.Sprintf("%s:%d", family, n.Inputs[0].ID)
	if v, ok := t.shared[key]; ok {
		return v, nil
	}
	v, err := mk()
	if err != nil {
		return nil, err
	}
	if t.shared == nil {
		t.shared = map[string]any{}
	}
	t.shared[key] = v
	return v, nil
}

// tsqr returns the TSQR factor tree of n's first input, emitting it once.
func (t *tiler) tsqr(n *spec.Node) (*tsqrTree, error) {
	if len(n.Inputs) == 0 {
		return nil, fmt.Errorf("no input")
	}
	v, err := t.sharedFor("tsqr", n, func() (any, error) {
		a := t.input(n, 0)
		if len(a.Shape) != 2 {
			return nil, fmt.Errorf("input of shape %v is not 2-D", a.Shape)
		}
		m, cols := a.Shape[0], a.Shape[1]
		a = t.rechunk(a, [][]int{a.Chunks[0], {cols}})
		tr := &tsqrTree{a: a, m: m, n: cols}
		var level []tsqrNode
		for i, rows := range a.Chunks[0] {
			key := t.emit(&chunk.Op{Kind: chunk.KindQRFactor, Inputs: []int{int(a.Keys[i])}, Shape: []int{rows + 1, cols}, DType: tensor.Float64, Args: chunk.QRFactorArgs{Leaf: true}})
			level = append(level, tsqrNode{key: key, rows: rows, k: min(rows, cols)})
		}
		tr.levels = append(tr.levels, level)
		for len(level) > 1 {
			var next []tsqrNode
			for s := 0; s < len(level); s += qrCombine {
				group := level[s:min(s+qrCombine, len(level))]
				var inputs []int
				rows := 0
				for i := range group {
					group[i].parent = len(next)
					group[i].off = rows
					rows += group[i].k
					inputs = append(inputs, int(group[i].key))
				}
				key := t.emit(&chunk.Op{Kind: chunk.KindQRFactor, Inputs: inputs, Shape: []int{rows + 1, cols}, DType: tensor.Float64, Args: chunk.QRFactorArgs{}})
				next = append(next, tsqrNode{key: key, rows: rows, k: min(rows, cols)})
			}
			tr.levels = append(tr.levels, next)
			level = next
		}
		return tr, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*tsqrTree), nil
}

// qFactor runs the top-down pass of tr from seed (a key; -1 for the
// identity) of seedCols columns and returns the keys of Q's row blocks (times
// the seed), of dtype dt.
func (t *tiler) qFactor(tr *tsqrTree, seed int, seedCols int, dt tensor.DType) []uint64 {
	top := len(tr.levels) - 1
	var above []uint64
	for l := top; l >= 0; l-- {
		keys := make([]uint64, len(tr.levels[l]))
		odt := tensor.Float64
		if l == 0 {
			odt = dt
		}
		for i, nd := range tr.levels[l] {
			op := &chunk.Op{Kind: chunk.KindQRQ, Inputs: []int{int(nd.key)}, Shape: []int{nd.rows, seedCols}, DType: odt}
			if l == top {
				op.Args = chunk.QRQArgs{Root: true}
				if seed >= 0 {
					op.Inputs = append(op.Inputs, seed)
				}
			} else {
				op.Args = chunk.QRQArgs{Off: nd.off}
				op.Inputs = append(op.Inputs, int(above[nd.parent]))
			}
			keys[i] = t.emit(op)
		}
		above = keys
	}
	return above
}

// LinalgDType is the dtype NumPy's linalg gives results for inputs of dt.
func LinalgDType(dt tensor.DType) tensor.DType {
	if dt == tensor.Float32 {
		return tensor.Float32
	}
	return tensor.Float64
}

func checkFactorNode(n *spec.Node) error {
	if len(n.Inputs) != 1 {
		return fmt.Errorf("need 1 input, have %d", len(n.Inputs))
	}
	if len(n.Inputs[0].Shape) != 2 {
		return fmt.Errorf("input of shape %v is not 2-D", n.Inputs[0].Shape)
	}
	if n.DType != LinalgDType(n.Inputs[0].DType) {
		return fmt.Errorf("dtype %v for an input of %v", n.DType, n.Inputs[0].DType)
	}
	return nil
}

func tileQRQ(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	if err := checkFactorNode(n); err != nil {
		return nil, err
	}
	tr, err := t.tsqr(n)
	if err != nil {
		return nil, err
	}
	k := min(tr.m, tr.n)
	if !slices.Equal(n.Shape, []int{tr.m, k}) {
		return nil, fmt.Errorf("node shape %v, want %v", n.Shape, []int{tr.m, k})
	}
	keys := t.qFactor(tr, -1, k, n.DType)
	return &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{tr.a.Chunks[0], {k}}, Keys: keys}, nil
}

func tileQRR(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	if err := checkFactorNode(n); err != nil {
		return nil, err
	}
	tr, err := t.tsqr(n)
	if err != nil {
		return nil, err
	}
	k := min(tr.m, tr.n)
	if !slices.Equal(n.Shape, []int{k, tr.n}) {
		return nil, fmt.Errorf("node shape %v, want %v", n.Shape, []int{k, tr.n})
	}
	key := t.emit(&chunk.Op{Kind: chunk.KindQRR, Inputs: []int{int(tr.root().key)}, Shape: n.Shape, DType: n.DType})
	return &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{{k}, {tr.n}}, Keys: []uint64{key}}, nil
}

// tileSVD tiles one result of the reduced SVD; the three share the TSQR and
// the small SVD of R.
func tileSVD(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	if err := checkFactorNode(n); err != nil {
		return nil, err
	}
	tr, err := t.tsqr(n)
	if err != nil {
		return nil, err
	}
	m, cols, k := tr.m, tr.n, min(tr.m, tr.n)
	v, _ := t.sharedFor("svd", n, func() (any, error) {
		return t.emit(&chunk.Op{Kind: chunk.KindSVDSmall, Inputs: []int{int(tr.root().key)}, Shape: []int{k*k + k + k*cols}, DType: tensor.Float64}), nil
	})
	small := int(v.(uint64))
	var want []int
	switch n.Op {
	case tensor.OpSVDU:
		want = []int{m, k}
	case tensor.OpSVDS:
		want = []int{k}
	default:
		want = []int{k, cols}
	}
	if !slices.Equal(n.Shape, want) {
		return nil, fmt.Errorf("node shape %v, want %v", n.Shape, want)
	}
	switch n.Op {
	case tensor.OpSVDU:
		ur := t.emit(&chunk.Op{Kind: chunk.KindSVDPart, Inputs: []int{small}, Shape: []int{k, k}, DType: tensor.Float64, Args: chunk.SVDPartArgs{Part: 0, K: k}})
		keys := t.qFactor(tr, int(ur), k, n.DType)
		return &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{tr.a.Chunks[0], {k}}, Keys: keys}, nil
	case tensor.OpSVDS:
		key := t.emit(&chunk.Op{Kind: chunk.KindSVDPart, Inputs: []int{small}, Shape: n.Shape, DType: n.DType, Args: chunk.SVDPartArgs{Part: 1, K: k}})
		return &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{{k}}, Keys: []uint64{key}}, nil
	default:
		key := t.emit(&chunk.Op{Kind: chunk.KindSVDPart, Inputs: []int{small}, Shape: n.Shape, DType: n.DType, Args: chunk.SVDPartArgs{Part: 2, K: k}})
		return &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{{k}, {cols}}, Keys: []uint64{key}}, nil
	}
}
