package kernel

import (
	"context"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/lapack/lapack64"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

// float64Copy returns a's elements as a new float64 slice.
func float64Copy(a *tensor.Array) []float64 {
	if a.DType == tensor.Float64 {
		return append([]float64(nil), a.Float64s()...)
	}
	return ConvertChunk(a, tensor.Float64).Float64s()
}

// fromFloat64 returns data as an array of dtype dt and the given shape; a
// float64 result aliases data, which the caller gives up.
func fromFloat64(data []float64, dt tensor.DType, shape []int) *tensor.Array {
	return ConvertChunk(&tensor.Array{DType: tensor.Float64, Shape: append([]int(nil), shape...), Data: elem.Float64Bytes(data)}, dt)
}

// A packed is a compact QR factor (see the top of this file).
type packed struct {
	rows, n, k int
	a          []float64 // rows x n, stride n
	tau        []float64 // k
}

func unpack(p *tensor.Array) (packed, error) {
	if p.DType != tensor.Float64 || len(p.Shape) != 2 || p.Shape[0] < 1 {
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
func geqrf(out *tensor.Array) *tensor.Array {
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

func qrFactorKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.QRFactorArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	rows, n := op.Shape[0]-1, op.Shape[1]
	if args.Leaf {
		if len(in) != 1 || !slices.Equal(in[0].Shape, []int{rows, n}) {
			return nil, fmt.Errorf("leaf of shape %v for a factor of %d x %d", in[0].Shape, rows, n)
		}
		out := tensor.NewArray(tensor.Float64, op.Shape)
		copy(out.Float64s(), ConvertChunk(in[0], tensor.Float64).Float64s())
		return geqrf(out), nil
	}
	out := tensor.NewArray(tensor.Float64, op.Shape)
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
func qrRKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
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

func qrQKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.QRQArgs)
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
		if s.DType != tensor.Float64 || len(s.Shape) != 2 || s.Shape[1] != cols {
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
func qrQTKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.QRQTArgs)
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
	return fromFloat64(c[:p.k*cols], tensor.Float64, op.Shape), nil
}

// svdSmallKernel computes the SVD of the root's R (k x n) and packs U_r (k
// x k), S (k) and Vᵀ (k x n) one after the other.
func svdSmallKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	p, err := unpack(in[0])
	if err != nil {
		return nil, err
	}
	k, n := p.k, p.n
	out := tensor.NewArray(tensor.Float64, op.Shape)
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

func svdPartKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.SVDPartArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	d, k := in[0].Float64s(), args.K
	bounds := []int{0, k * k, k*k + k, len(d)}
	if args.Part < 0 || args.Part > 2 || bounds[2] > len(d) || bounds[args.Part+1]-bounds[args.Part] != tensor.NumElements(op.Shape) {
		return nil, fmt.Errorf("part %d of a small SVD of %d elements for k = %d and shape %v", args.Part, len(d), k, op.Shape)
	}
	// A copy: the result must not alias the input chunk.
	part := slices.Clone(d[bounds[args.Part]:bounds[args.Part+1]])
	return fromFloat64(part, op.DType, op.Shape), nil
}
