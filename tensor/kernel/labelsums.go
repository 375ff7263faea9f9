package kernel

import (
	"context"
	"fmt"
	"math"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
	"marsfs/tensor/kernel/expr"
)

// labelElems is the product's elements in the block of rows a label.sums
// op takes at a time: the block's product and scores (64 KiB each in
// float32) stay in the L2 cache, and the per-block work around them (one
// run of the score program: an op, a machine's rebind, its constants) is
// spread over thousands of values. The block is at least 64 rows and at
// most 4096.
const labelElems = 16384

// labelBlock is the rows of a block for scores of k columns.
func labelBlock(k int) int { return min(4096, max(64, labelElems/max(k, 1))) }

// labelSumsKernel runs a "label.sums" op (chunk.LabelSumsArgs): each block
// of rows of x is multiplied by w, scored, labelled by its least (or
// greatest) score, and added to its label's sum and count. The sums are
// kept in float64 whatever the dtype and rounded once at the end, so that
// a chunk's partial loses nothing to the order of its rows.
func labelSumsKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	a, ok := op.Args.(chunk.LabelSumsArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	if len(in) < 2 {
		return nil, fmt.Errorf("%d inputs, want x and w at least", len(in))
	}
	x, w := in[0], in[1]
	if len(x.Shape) != 2 || len(w.Shape) != 2 {
		return nil, fmt.Errorf("x of shape %v and w of shape %v are not both 2-D", x.Shape, w.Shape)
	}
	if x.DType != w.DType || (x.DType != tensor.Float32 && x.DType != tensor.Float64) {
		return nil, fmt.Errorf("x of %v and w of %v: want float32 or float64, alike", x.DType, w.DType)
	}
	v := a.W
	if v.R0 < 0 || v.R1 > w.Shape[0] || v.R0 > v.R1 || v.C0 < 0 || v.C1 > w.Shape[1] || v.C0 > v.C1 {
		return nil, fmt.Errorf("view %+v outside w of shape %v", v, w.Shape)
	}
	d, k := v.Shape()[0], v.Shape()[1]
	if a.R0 < 0 || a.R0 > a.R1 || a.R1 > x.Shape[0] {
		return nil, fmt.Errorf("rows %d to %d of x of shape %v", a.R0, a.R1, x.Shape)
	}
	if d != x.Shape[1] {
		return nil, fmt.Errorf("x has %d columns, w's view %d rows", x.Shape[1], d)
	}
	if k == 0 {
		return nil, fmt.Errorf("w's view %+v has no columns: no label to choose", v)
	}
	if a.Labels < 0 || op.DType != tensor.Float32 && op.DType != tensor.Float64 ||
		!slices.Equal(op.Shape, []int{a.Labels*d + a.Labels}) {
		return nil, fmt.Errorf("op of %v%v for %d labels of %d columns", op.DType, op.Shape, a.Labels, d)
	}
	if a.Score != nil {
		if len(a.ScoreIn) == 0 || a.ScoreDType != tensor.Float32 && a.ScoreDType != tensor.Float64 {
			return nil, fmt.Errorf("score of %v reading %d inputs", a.ScoreDType, len(a.ScoreIn))
		}
		for _, i := range a.ScoreIn {
			if i < -1 || i >= len(in) {
				return nil, fmt.Errorf("score input %d of an op of %d inputs", i, len(in))
			}
		}
	}
	r := a.R1 - a.R0
	ls := &labelSums{args: &a, r: r, d: d, k: k, ins: in,
		sums: make([]float64, a.Labels*d), counts: make([]float64, a.Labels), labels: make([]int32, min(r, labelBlock(k)))}
	var err error
	if x.DType == tensor.Float32 {
		err = runLabelSums(ctx, ls, x.Float32s()[a.R0*d:a.R1*d], transposedView(w.Float32s(), w.Shape[1], v))
	} else {
		err = runLabelSums(ctx, ls, x.Float64s()[a.R0*d:a.R1*d], transposedView(w.Float64s(), w.Shape[1], v))
	}
	if err != nil {
		return nil, err
	}
	ls.poison()
	out := elem.NewOutputAll(ctx, op)
	if op.DType == tensor.Float32 {
		roundInto(out.Float32s(), ls.sums, ls.counts)
	} else {
		roundInto(out.Float64s(), ls.sums, ls.counts)
	}
	return out, nil
}

// labelSums is one label.sums op's state.
type labelSums struct {
	args   *chunk.LabelSumsArgs
	r, d   int // the band's rows, x's columns
	k      int // the scores' columns
	ins    []*tensor.Array
	sums   []float64 // Labels x d
	counts []float64
	labels []int32 // a block's
	// bad counts the rows not finite in each column, badOf those of
	// each label (Labels x d); nil while every row is finite.
	bad, badOf []int
}

// transposedView copies the view v of w (of cols columns) as k rows of d:
// row j is the j-th column of the d x k matrix the view is, so that each
// score is a dot product of two contiguous rows.
func transposedView[T float32 | float64](w []T, cols int, v chunk.BlockView) []T {
	sh := v.Shape()
	d, k := sh[0], sh[1]
	wt := make([]T, k*d)
	for j := range k {
		for t := range d {
			if v.Trans {
				// The block is w[R0:R1, C0:C1].T: element (t, j) is w[R0+j, C0+t].
				wt[j*d+t] = w[(v.R0+j)*cols+v.C0+t]
			} else {
				wt[j*d+t] = w[(v.R0+t)*cols+v.C0+j]
			}
		}
	}
	return wt
}

func runLabelSums[T float32 | float64](ctx context.Context, ls *labelSums, x, wt []T) error {
	a, d, k := ls.args, ls.d, ls.k
	blk := min(ls.r, labelBlock(k))
	m := tensor.NewArray(dtypeOf[T](), []int{blk, k})
	var score *labelScore
	if a.Score != nil {
		score = newLabelScore(ctx, ls, blk)
	}
	for r0 := 0; r0 < ls.r; r0 += blk {
		if r0%(64*blk) == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		n := min(blk, ls.r-r0)
		xb := x[r0*d : (r0+n)*d]
		mb := tensor.View[T](m.Data)[:n*k]
		rowProducts(mb, xb, wt, d, k)
		labels := ls.labels[:n]
		if score == nil {
			argRows(labels, mb, k, a.ArgMax)
		} else {
			s, err := score.run(m, r0, n)
			if err != nil {
				return err
			}
			if s.DType == tensor.Float32 {
				argRows(labels, s.Float32s(), k, a.ArgMax)
			} else {
				argRows(labels, s.Float64s(), k, a.ArgMax)
			}
		}
		addRows(ls, labels, xb)
	}
	return nil
}

// rowProducts sets m (n x k) to x (n x d) times wt transposed (wt: k x d),
// each a dot product in T as a matmul of T would sum it. Rows of 8 values
// (k-means of 8 features) are summed from registers: the row is loaded
// once for its k products.
func rowProducts[T float32 | float64](m, x, wt []T, d, k int) {
	if d == 0 {
		clear(m)
		return
	}
	n := len(x) / d
	if d == 8 {
		for i := range n {
			row := x[i*8 : i*8+8 : i*8+8]
			x0, x1, x2, x3, x4, x5, x6, x7 := row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7]
			out := m[i*k : i*k+k]
			for j := range out {
				w := wt[j*8 : j*8+8 : j*8+8]
				out[j] = ((x0*w[0] + x1*w[1]) + (x2*w[2] + x3*w[3])) + ((x4*w[4] + x5*w[5]) + (x6*w[6] + x7*w[7]))
			}
		}
		return
	}
	for i := range n {
		row := x[i*d : i*d+d]
		out := m[i*k : i*k+k]
		for j := range out {
			w := wt[j*d : j*d+d]
			w = w[:len(row)]
			var s0, s1, s2, s3 T
			t := 0
			for ; t+3 < len(row); t += 4 {
				s0 += row[t] * w[t]
				s1 += row[t+1] * w[t+1]
				s2 += row[t+2] * w[t+2]
				s3 += row[t+3] * w[t+3]
			}
			for ; t < len(row); t++ {
				s0 += row[t] * w[t]
			}
			out[j] = (s0 + s1) + (s2 + s3)
		}
	}
}

// argRows sets labels[i] to the column of row i of s (rows of k) holding
// its least value (greatest with max), NumPy's way: the first of equals,
// and the first NaN if the row has one.
//
// Scores near each other make the comparisons' branches unpredictable
// (half of them mispredicted on points between two centres), so the pass
// compares integer keys that order as the values do and selects with
// masks, which the compiler makes conditional moves. It takes no care of
// NaN; it sums the row on the side, and a row whose sum is NaN (it holds a
// NaN, or infinities of both signs) is looked at again.
func argRows[T float32 | float64](labels []int32, s []T, k int, max bool) {
	var flip int64 // argmax: the keys' order reversed
	if max {
		flip = -1
	}
	for i := range labels {
		row := s[i*k : i*k+k]
		sum := row[0]
		bk, best := orderKey(row[0])^flip, int64(0)
		for j := 1; j < len(row); j++ {
			v := row[j]
			sum += v
			key := orderKey(v) ^ flip
			var m int64
			if key < bk {
				m = -1
			}
			bk ^= (bk ^ key) & m
			best ^= (best ^ int64(j)) & m
		}
		if sum != sum {
			for j, v := range row {
				if v != v {
					best = int64(j)
					break
				}
			}
		}
		labels[i] = int32(best)
	}
}

// orderKey maps v to an integer ordered as the values are (but NaN), -0
// and +0 to the same key. Flipping every bit of a key reverses the order.
func orderKey[T float32 | float64](v T) int64 {
	v += 0 // -0 + 0 is +0
	var b int64
	if f, ok := any(v).(float32); ok {
		b = int64(int32(math.Float32bits(f)))
		return b ^ (b >> 63 & 0x7fffffff)
	}
	b = int64(math.Float64bits(float64(v)))
	return b ^ (b >> 63 & 0x7fffffffffffffff)
}

// addRows adds each row of x (rows of d) to its label's sum and one to its
// count; a label past the sums' rows (no column of the one-hot matches
// it) adds nothing. A row holding a NaN or an infinity is noted (see
// poison).
func addRows[T float32 | float64](ls *labelSums, labels []int32, x []T) {
	d, sums, counts := ls.d, ls.sums, ls.counts
	L := int32(len(counts))
	for i, l := range labels {
		row := x[i*d : i*d+d]
		var z T
		for _, v := range row {
			z += 0 * v
		}
		if z != 0 {
			noteNonFinite(ls, l, row)
		}
		if l >= L {
			continue
		}
		counts[l]++
		s := sums[int(l)*d : int(l)*d+d]
		for t, v := range row {
			s[t] += float64(v)
		}
	}
}

// noteNonFinite notes the columns where row, of label l, holds a NaN or
// an infinity.
func noteNonFinite[T float32 | float64](ls *labelSums, l int32, row []T) {
	if ls.bad == nil {
		ls.bad = make([]int, len(row))
		ls.badOf = make([]int, len(ls.sums))
	}
	for t, v := range row {
		if v-v != 0 {
			ls.bad[t]++
			if int(l) < len(ls.counts) {
				ls.badOf[int(l)*ls.d+t]++
			}
		}
	}
}

// poison makes NaN each sum that a product oh.T @ x makes NaN: in it, a
// row adds 0 times its values to every label but its own, and 0 times a
// NaN or an infinity is NaN. So a label's sum is NaN in each column where
// a row of another label (or of none) is not finite.
func (ls *labelSums) poison() {
	if ls.bad == nil {
		return
	}
	for j := range ls.counts {
		for t, n := range ls.bad {
			if n > ls.badOf[j*ls.d+t] {
				ls.sums[j*ls.d+t] = math.NaN()
			}
		}
	}
}

// roundInto writes the sums, then the counts, into out in its dtype.
func roundInto[T float32 | float64](out []T, sums, counts []float64) {
	for i, v := range sums {
		out[i] = T(v)
	}
	for i, v := range counts {
		out[len(sums)+i] = T(v)
	}
}

func dtypeOf[T float32 | float64]() tensor.DType {
	var z T
	if _, ok := any(z).(float32); ok {
		return tensor.Float32
	}
	return tensor.Float64
}

// labelScore runs a label.sums op's score program over blocks of rows: an
// expr op of the block's shape, whose inputs are the product's block, the
// blocks of rows of the inputs that have the chunk's rows, and the others
// whole, writing into one scratch array.
type labelScore struct {
	ctx  context.Context
	ls   *labelSums
	op   chunk.Op
	args chunk.ExprArgs
	ins  []*tensor.Array
	rows []bool          // ScoreIn[i] is read a block of rows at a time
	wide []*tensor.Array // ScoreIn[i] widened to the block's shape, or nil
	out  *tensor.Array
	cur  *tensor.Array // out cut to the block
}

func newLabelScore(ctx context.Context, ls *labelSums, blk int) *labelScore {
	a := ls.args
	s := &labelScore{ls: ls, args: *a.Score, ins: make([]*tensor.Array, len(a.ScoreIn)), rows: make([]bool, len(a.ScoreIn))}
	s.out = tensor.NewArray(a.ScoreDType, []int{blk, ls.k})
	s.ctx = tensor.WithAlloc(ctx, func(dt tensor.DType, shape []int, zero bool) *tensor.Array {
		if dt != s.cur.DType || !slices.Equal(shape, s.cur.Shape) {
			return nil
		}
		if zero {
			clear(s.cur.Data)
		}
		return s.cur
	})
	s.wide = make([]*tensor.Array, len(a.ScoreIn))
	for i, j := range a.ScoreIn {
		if j < 0 {
			continue
		}
		in := ls.ins[j]
		s.rows[i] = len(in.Shape) == 2 && in.Shape[0] == ls.r && ls.r > 1
		// An input the program broadcasts along the rows or the columns
		// (a vector of k, a column of the band's rows) is widened to the
		// block's shape here: broadcast, it would cut the program's pass
		// into runs of one row, each paying the machine's work per run.
		if in.Len() > 1 && ls.k > 1 && !(len(in.Shape) == 2 && in.Shape[1] == ls.k && s.rows[i]) {
			s.wide[i] = tensor.NewArray(in.DType, []int{blk, ls.k})
			if !s.rows[i] {
				fillRows(s.wide[i].Data, in.Data)
			}
		}
	}
	return s
}

// fillRows repeats row over dst.
func fillRows(dst, row []byte) {
	for o := 0; o < len(dst); o += len(row) {
		copy(dst[o:], row)
	}
}

// widenColumn sets dst (n rows of k) to col (n values of size es), each
// value repeated along its row.
func widenColumn(dst, col []byte, n, k, es int) {
	for i := range n {
		v := col[i*es : (i+1)*es]
		row := dst[i*k*es : (i+1)*k*es]
		for o := 0; o < len(row); o += es {
			copy(row[o:o+es], v)
		}
	}
}

// run scores rows [r0, r0+n) whose product is in m's first n rows.
func (s *labelScore) run(m *tensor.Array, r0, n int) (*tensor.Array, error) {
	k := s.ls.k
	shape := []int{n, k}
	s.args.Shape = shape
	s.op = chunk.Op{Kind: "expr", Shape: shape, DType: s.ls.args.ScoreDType, Args: s.args}
	msz := m.DType.Size()
	for i, j := range s.ls.args.ScoreIn {
		switch {
		case j < 0:
			s.ins[i] = &tensor.Array{DType: m.DType, Shape: shape, Data: m.Data[:n*k*msz]}
		case s.rows[i]:
			in := s.ls.ins[j]
			es := in.DType.Size()
			row := in.Shape[1] * es
			// Its chunk is the band's rows, tiled as the scores are.
			part := in.Data[r0*row : (r0+n)*row]
			if w := s.wide[i]; w != nil {
				widenColumn(w.Data, part, n, k, es)
				part = w.Data[:n*k*es]
			}
			s.ins[i] = &tensor.Array{DType: in.DType, Shape: shape, Data: part}
			if s.wide[i] == nil {
				s.ins[i].Shape = []int{n, in.Shape[1]}
			}
		case s.wide[i] != nil:
			w := s.wide[i]
			s.ins[i] = &tensor.Array{DType: w.DType, Shape: shape, Data: w.Data[:n*k*w.DType.Size()]}
		default:
			s.ins[i] = s.ls.ins[j]
		}
	}
	s.cur = &tensor.Array{DType: s.out.DType, Shape: shape, Data: s.out.Data[:n*k*s.out.DType.Size()]}
	res, err := expr.ExprKernel(s.ctx, &s.op, s.ins)
	if err != nil {
		return nil, fmt.Errorf("score of rows %d to %d: %w", r0, r0+n, err)
	}
	return res, nil
}
