package tensor

import (
	"context"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/lapack/lapack64"
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

// QRFactorArgs are the arguments of "linalg.qr.factor": a leaf factors a
// block of A; an inner node factors the stacked R factors of its inputs.
type QRFactorArgs struct{ Leaf bool }

// QRQArgs are the arguments of "linalg.qr.q", one step of the top-down pass.
// At the root the second input, if any, is the seed (U_r for the SVD;
// without one the seed is the identity); elsewhere the second input is the
// parent's result, of which rows Off... belong to this node.
type QRQArgs struct {
	Root bool
	Off  int
}

// QRQTArgs are the arguments of "linalg.qr.qt", one step of the bottom-up
// product Qᵀb: a leaf applies its Q_iᵀ to its block of b, an inner node to
// the stacked results of its children.
type QRQTArgs struct{ Leaf bool }

// SVDPartArgs are the arguments of "linalg.svd.part": which of U_r (0), S
// (1) and Vᵀ (2) to take from the small SVD, for k singular values.
type SVDPartArgs struct{ Part, K int }

// A tsqrTree is the factor ops of one TSQR, memoized per input node.
type tsqrTree struct {
	a      *TiledTensor // the input, cut into row blocks of all columns
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
func (t *tiler) sharedFor(family string, n *Node, mk func() (any, error)) (any, error) {
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
func (t *tiler) tsqr(n *Node) (*tsqrTree, error) {
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
			key := t.emit(&ChunkOp{Kind: "linalg.qr.factor", Inputs: []int{int(a.Keys[i])}, Shape: []int{rows + 1, cols}, DType: Float64, Args: QRFactorArgs{Leaf: true}})
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
				key := t.emit(&ChunkOp{Kind: "linalg.qr.factor", Inputs: inputs, Shape: []int{rows + 1, cols}, DType: Float64, Args: QRFactorArgs{}})
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
func (t *tiler) qFactor(tr *tsqrTree, seed int, seedCols int, dt DType) []uint64 {
	top := len(tr.levels) - 1
	var above []uint64
	for l := top; l >= 0; l-- {
		keys := make([]uint64, len(tr.levels[l]))
		odt := Float64
		if l == 0 {
			odt = dt
		}
		for i, nd := range tr.levels[l] {
			op := &ChunkOp{Kind: "linalg.qr.q", Inputs: []int{int(nd.key)}, Shape: []int{nd.rows, seedCols}, DType: odt}
			if l == top {
				op.Args = QRQArgs{Root: true}
				if seed >= 0 {
					op.Inputs = append(op.Inputs, seed)
				}
			} else {
				op.Args = QRQArgs{Off: nd.off}
				op.Inputs = append(op.Inputs, int(above[nd.parent]))
			}
			keys[i] = t.emit(op)
		}
		above = keys
	}
	return above
}

// linalgDType is the dtype NumPy's linalg gives results for inputs of dt.
func linalgDType(dt DType) DType {
	if dt == Float32 {
		return Float32
	}
	return Float64
}

func checkFactorNode(n *Node) error {
	if len(n.Inputs) != 1 {
		return fmt.Errorf("need 1 input, have %d", len(n.Inputs))
	}
	if len(n.Inputs[0].Shape) != 2 {
		return fmt.Errorf("input of shape %v is not 2-D", n.Inputs[0].Shape)
	}
	if n.DType != linalgDType(n.Inputs[0].DType) {
		return fmt.Errorf("dtype %v for an input of %v", n.DType, n.Inputs[0].DType)
	}
	return nil
}

func tileQRQ(t *tiler, n *Node) (*TiledTensor, error) {
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
	return &TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{tr.a.Chunks[0], {k}}, Keys: keys}, nil
}

func tileQRR(t *tiler, n *Node) (*TiledTensor, error) {
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
	key := t.emit(&ChunkOp{Kind: "linalg.qr.r", Inputs: []int{int(tr.root().key)}, Shape: n.Shape, DType: n.DType})
	return &TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{{k}, {tr.n}}, Keys: []uint64{key}}, nil
}

// tileSVD tiles one result of the reduced SVD; the three share the TSQR and
// the small SVD of R.
func tileSVD(t *tiler, n *Node) (*TiledTensor, error) {
	if err := checkFactorNode(n); err != nil {
		return nil, err
	}
	tr, err := t.tsqr(n)
	if err != nil {
		return nil, err
	}
	m, cols, k := tr.m, tr.n, min(tr.m, tr.n)
	v, _ := t.sharedFor("svd", n, func() (any, error) {
		return t.emit(&ChunkOp{Kind: "linalg.svd.small", Inputs: []int{int(tr.root().key)}, Shape: []int{k*k + k + k*cols}, DType: Float64}), nil
	})
	small := int(v.(uint64))
	var want []int
	switch n.Op {
	case OpSVDU:
		want = []int{m, k}
	case OpSVDS:
		want = []int{k}
	default:
		want = []int{k, cols}
	}
	if !slices.Equal(n.Shape, want) {
		return nil, fmt.Errorf("node shape %v, want %v", n.Shape, want)
	}
	switch n.Op {
	case OpSVDU:
		ur := t.emit(&ChunkOp{Kind: "linalg.svd.part", Inputs: []int{small}, Shape: []int{k, k}, DType: Float64, Args: SVDPartArgs{Part: 0, K: k}})
		keys := t.qFactor(tr, int(ur), k, n.DType)
		return &TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{tr.a.Chunks[0], {k}}, Keys: keys}, nil
	case OpSVDS:
		key := t.emit(&ChunkOp{Kind: "linalg.svd.part", Inputs: []int{small}, Shape: n.Shape, DType: n.DType, Args: SVDPartArgs{Part: 1, K: k}})
		return &TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{{k}}, Keys: []uint64{key}}, nil
	default:
		key := t.emit(&ChunkOp{Kind: "linalg.svd.part", Inputs: []int{small}, Shape: n.Shape, DType: n.DType, Args: SVDPartArgs{Part: 2, K: k}})
		return &TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{{k}, {cols}}, Keys: []uint64{key}}, nil
	}
}

// float64Copy returns a's elements as a new float64 slice.
func float64Copy(a *Array) []float64 {
	if a.DType == Float64 {
		return append([]float64(nil), a.Float64s()...)
	}
	return convertChunk(a, Float64).Float64s()
}

// fromFloat64 returns data as an array of dtype dt and the given shape; a
// float64 result aliases data, which the caller gives up.
func fromFloat64(data []float64, dt DType, shape []int) *Array {
	return convertChunk(&Array{DType: Float64, Shape: append([]int(nil), shape...), Data: float64Bytes(data)}, dt)
}

// A packed is a compact QR factor (see the top of this file).
type packed struct {
	rows, n, k int
	a          []float64 // rows x n, stride n
	tau        []float64 // k
}

func unpack(p *Array) (packed, error) {
	if p.DType != Float64 || len(p.Shape) != 2 || p.Shape[0] < 1 {
		return packed{}, fmt.Errorf("packed factor is %v%v", p.DType, p.Shape)
	}
	rows, n := p.Shape[0]-1, p.Shape[1]
	k := min(rows, n)
	d := p.Float64s()
	return packed{rows: rows, n: n, k: k, a: d[:rows*n], tau: d[rows*n : rows*n+k]}, nil
}

// upperR copies the k x n upper triangle of a packed factor into dst (row
// stride n).
func (p packed) upperR(dst []float64) {
	for i := range p.k {
		copy(dst[i*p.n+i:(i+1)*p.n], p.a[i*p.n+i:(i+1)*p.n])
	}
}

// geqrf factors the rows x n matrix held in the first rows of out, a packed
// chunk, in place.
func geqrf(out *Array) *Array {
	rows, n := out.Shape[0]-1, out.Shape[1]
	d := out.Float64s()
	k := min(rows, n)
	if k == 0 {
		return out
	}
	geqrfPanels(rows, n, d[:rows*n], d[rows*n:rows*n+k])
	return out
}

// qrPanel is the number of columns geqrfPanels factors at a time.
const qrPanel = 16

// geqrfPanels is LAPACK's blocked QR (dgeqrf) of the rows x n matrix a
// (row-major, stride n), with the blocking used whatever n is: LAPACK's
// crossover switches to the unblocked code below 128 columns, which for a
// tall-and-skinny block means every reflector is applied by a separate pass
// over the whole block. Here each panel of qrPanel columns is factored
// unblocked and applied to the rest of the block as one block reflector.
func geqrfPanels(rows, n int, a, tau []float64) {
	impl := lapackgonum.Implementation{}
	k := min(rows, n)
	work := make([]float64, qrPanel*qrPanel+max(n, 1)*qrPanel)
	i := 0
	for ; i+qrPanel < k; i += qrPanel {
		impl.Dgeqr2(rows-i, qrPanel, a[i*n+i:], n, tau[i:i+qrPanel], work)
		t := work[:qrPanel*qrPanel]
		impl.Dlarft(lapack.Forward, lapack.ColumnWise, rows-i, qrPanel, a[i*n+i:], n, tau[i:], t, qrPanel)
		impl.Dlarfb(blas.Left, blas.Trans, lapack.Forward, lapack.ColumnWise, rows-i, n-i-qrPanel, qrPanel,
			a[i*n+i:], n, t, qrPanel, a[i*n+i+qrPanel:], n, work[qrPanel*qrPanel:], qrPanel)
	}
	impl.Dgeqr2(rows-i, n-i, a[i*n+i:], n, tau[i:k], work)
}

func qrFactorKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(QRFactorArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	rows, n := op.Shape[0]-1, op.Shape[1]
	if args.Leaf {
		if len(in) != 1 || !slices.Equal(in[0].Shape, []int{rows, n}) {
			return nil, fmt.Errorf("leaf of shape %v for a factor of %d x %d", in[0].Shape, rows, n)
		}
		out := NewArray(Float64, op.Shape)
		copy(out.Float64s(), convertChunk(in[0], Float64).Float64s())
		return geqrf(out), nil
	}
	out := NewArray(Float64, op.Shape)
	stacked := out.Float64s()
	off := 0
	for _, c := range in {
		p, err := unpack(c)
		if err != nil {
			return nil, err
		}
		if p.n != n || off+p.k > rows {
			return nil, fmt.Errorf("child factor %v does not fit a stack of %d x %d", c.Shape, rows, n)
		}
		p.upperR(stacked[off*n:])
		off += p.k
	}
	if off != rows {
		return nil, fmt.Errorf("children stack %d rows, want %d", off, rows)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return geqrf(out), nil
}

// qrRKernel takes R out of the root's packed factor.
func qrRKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	p, err := unpack(in[0])
	if err != nil {
		return nil, err
	}
	if !slices.Equal(op.Shape, []int{p.k, p.n}) {
		return nil, fmt.Errorf("R of %d x %d for shape %v", p.k, p.n, op.Shape)
	}
	r := make([]float64, p.k*p.n)
	p.upperR(r)
	return fromFloat64(r, op.DType, op.Shape), nil
}

// ormqr computes c = Q c (trans false) or Qᵀ c for Q the product of p's
// reflectors; c is p.rows x cols.
func (p packed) ormqr(trans bool, c []float64, cols int) {
	if p.k == 0 || cols == 0 || p.rows == 0 {
		return
	}
	tr := blas.NoTrans
	if trans {
		tr = blas.Trans
	}
	// LAPACK's Dorm2r sets A's diagonal to 1 while it works, then puts it
	// back; p.a aliases an input chunk, which may be read-only shared
	// memory or read by another kernel at the same moment, so it works on
	// a copy.
	a := blas64.General{Rows: p.rows, Cols: p.k, Stride: p.n, Data: append([]float64(nil), p.a...)}
	cm := blas64.General{Rows: p.rows, Cols: cols, Stride: cols, Data: c}
	work := []float64{0}
	lapack64.Ormqr(blas.Left, tr, a, p.tau, cm, work, -1)
	work = make([]float64, max(int(work[0]), cols))
	lapack64.Ormqr(blas.Left, tr, a, p.tau, cm, work, len(work))
}

func qrQKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(QRQArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	p, err := unpack(in[0])
	if err != nil {
		return nil, err
	}
	cols := op.Shape[1]
	if op.Shape[0] != p.rows {
		return nil, fmt.Errorf("Q block of %d rows for a factor of %d", op.Shape[0], p.rows)
	}
	// c = [seed; 0], rows x cols, with seed k x cols.
	c := make([]float64, p.rows*cols)
	switch {
	case args.Root && len(in) == 1:
		if cols != p.k {
			return nil, fmt.Errorf("identity seed of %d columns for k = %d", cols, p.k)
		}
		for i := range p.k {
			c[i*cols+i] = 1
		}
	case len(in) == 2:
		s := in[1]
		if s.DType != Float64 || len(s.Shape) != 2 || s.Shape[1] != cols {
			return nil, fmt.Errorf("seed %v%v for %d columns", s.DType, s.Shape, cols)
		}
		off := args.Off
		if args.Root {
			off = 0
		}
		if off+p.k > s.Shape[0] {
			return nil, fmt.Errorf("rows %d..%d of a parent of %d", off, off+p.k, s.Shape[0])
		}
		copy(c[:p.k*cols], s.Float64s()[off*cols:(off+p.k)*cols])
	default:
		return nil, fmt.Errorf("%d inputs", len(in))
	}
	p.ormqr(false, c, cols)
	return fromFloat64(c, op.DType, op.Shape), nil
}

// qrQTKernel computes a node's part of Qᵀb: the first k rows of Q_nodeᵀ
// times b's block (leaf) or the children's stacked results.
func qrQTKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(QRQTArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	p, err := unpack(in[0])
	if err != nil {
		return nil, err
	}
	cols := op.Shape[1]
	c := make([]float64, 0, p.rows*cols)
	for _, b := range in[1:] {
		if args.Leaf {
			c = append(c, float64Copy(b)...)
		} else {
			c = append(c, b.Float64s()...)
		}
	}
	if len(c) != p.rows*cols {
		return nil, fmt.Errorf("right-hand side of %d elements for %d x %d", len(c), p.rows, cols)
	}
	p.ormqr(true, c, cols)
	return fromFloat64(c[:p.k*cols], Float64, op.Shape), nil
}

// svdSmallKernel computes the SVD of the root's R (k x n) and packs U_r (k
// x k), S (k) and Vᵀ (k x n) one after the other.
func svdSmallKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	p, err := unpack(in[0])
	if err != nil {
		return nil, err
	}
	k, n := p.k, p.n
	out := NewArray(Float64, op.Shape)
	d := out.Float64s()
	if len(d) != k*k+k+k*n {
		return nil, fmt.Errorf("output of %d elements for k = %d, n = %d", len(d), k, n)
	}
	if k == 0 {
		return out, nil
	}
	r := make([]float64, k*n)
	p.upperR(r)
	u, s, vt := d[:k*k], d[k*k:k*k+k], d[k*k+k:]
	ag := blas64.General{Rows: k, Cols: n, Stride: n, Data: r}
	ug := blas64.General{Rows: k, Cols: k, Stride: k, Data: u}
	vg := blas64.General{Rows: k, Cols: n, Stride: n, Data: vt}
	work := []float64{0}
	lapack64.Gesvd(lapack.SVDStore, lapack.SVDStore, ag, ug, vg, s, work, -1)
	work = make([]float64, int(work[0]))
	if !lapack64.Gesvd(lapack.SVDStore, lapack.SVDStore, ag, ug, vg, s, work, len(work)) {
		return nil, fmt.Errorf("linalg.svd: SVD did not converge")
	}
	return out, nil
}

func svdPartKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(SVDPartArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	d, k := in[0].Float64s(), args.K
	bounds := []int{0, k * k, k*k + k, len(d)}
	if args.Part < 0 || args.Part > 2 || bounds[2] > len(d) || bounds[args.Part+1]-bounds[args.Part] != NumElements(op.Shape) {
		return nil, fmt.Errorf("part %d of a small SVD of %d elements for k = %d and shape %v", args.Part, len(d), k, op.Shape)
	}
	// A copy: the result must not alias the input chunk.
	part := slices.Clone(d[bounds[args.Part]:bounds[args.Part+1]])
	return fromFloat64(part, op.DType, op.Shape), nil
}
