package tensor

import (
	"context"
	"encoding/binary"
	"fmt"
)

// An exprReducer accumulates the partial of a reduction map from the
// blocks of an expr program's values.
//
// Float64 sums (sum, nansum, mean, nanmean) add each segment's pairwise
// sum (8 running sums over 128-element leaves, as the unfused kernel sums a
// row) into its accumulator; when the whole chunk reduces to one value,
// those segment sums are themselves added pairwise by a sumCascade. The
// result equals the unfused one up to this reassociation: the unfused
// kernel sums each whole row pairwise at once. var and std merge each
// segment's (count, mean, M2), taken in two passes over the segment as the
// unfused kernel takes them over a row, by Chan's formula (Welford's, one
// value at a time, when the last axis is kept): again equal up to
// rounding, and identical for a row within one block. The other reductions
// (min, max, prod, any, all, integer sums, counts) fold the values in the
// same order as the unfused kernel and give identical results.
type exprReducer struct {
	op      string
	fsum    bool        // a float64 sum
	cascade *sumCascade // a float64 sum to one value
	m       monoid
	acc     []byte    // the accumulators: out's data, or sums for mean
	counts  []float64 // nanmean: values that are not NaN, per accumulator
	es      int
	extent  int   // elements reduced into each accumulator
	strides []int // of the accumulator over the value shape's axes
	seg     int
	keep    []int // the partial's shape
	pdt     DType // and dtype
	src     DType // the values' dtype
	bytes   bool  // a mean of booleans: their bytes add into float64 sums
}

// newExprReducer checks a reduce instruction reading registers of dtypes
// src against the value shape, for a map op making partials of dtype dt.
// The machine checks the partial's shape (keep) against its op.
func newExprReducer(dt DType, ins *ExprInstr, src []DType, shape []int) (*exprReducer, error) {
	if !exprReductions[ins.Kind] {
		return nil, fmt.Errorf("unsupported reduction")
	}
	nsrc := 1
	if ins.Kind == OpNanmean {
		nsrc = 2 // the values with NaNs zeroed, and as they were
	}
	if len(src) != nsrc {
		return nil, fmt.Errorf("takes %d registers, got %d", nsrc, len(src))
	}
	reduced := make([]bool, len(shape))
	for _, ax := range ins.Axes {
		if ax < 0 || ax >= len(shape) || reduced[ax] {
			return nil, fmt.Errorf("bad axes %v for shape %v", ins.Axes, shape)
		}
		reduced[ax] = true
	}
	keep, extent := keepShape(shape, reduced)
	pdt, fields := partialSpec(ins.Kind, src[0], dt)
	accDT := dt
	mop := ins.Kind
	switch ins.Kind {
	case OpMean, OpNanmean:
		accDT, pdt, mop = Float64, Float64, OpSum
	case OpVar, OpStd:
		accDT, pdt, mop = Float64, Float64, ""
	case OpCountNonzero:
		accDT = Int64
	case OpAny, OpAll:
		accDT = Bool
	}
	if fields > 1 {
		keep = append(keep, fields)
	}
	bytes := ins.Kind == OpMean && src[0] == Bool
	for _, dt := range src {
		if dt != accDT && !bytes {
			return nil, fmt.Errorf("reduces %v values, not %v", dt, accDT)
		}
	}
	if pdt != dt {
		return nil, fmt.Errorf("%v values make a partial of %v, op says %v", src[0], pdt, dt)
	}
	nout := NumElements(keep) / fields
	if extent == 0 && nout > 0 {
		switch ins.Kind {
		case OpMin, OpMax, OpNanmin, OpNanmax:
			return nil, fmt.Errorf("zero-size array to reduction operation %s which has no identity", ins.Kind)
		}
	}
	r := &exprReducer{op: ins.Kind, es: accDT.Size(), extent: extent, keep: keep, pdt: pdt, src: src[0], bytes: bytes}
	if mop != "" {
		m, err := monoidFor(mop, accDT)
		if err != nil {
			return nil, err
		}
		r.m = m
	}
	r.strides = make([]int, len(shape))
	s := 1
	for ax := len(shape) - 1; ax >= 0; ax-- {
		if !reduced[ax] {
			r.strides[ax] = s
			s *= shape[ax]
		}
	}
	r.fsum = accDT == Float64 && (mop == OpSum || mop == OpNansum)
	if r.fsum && nout == 1 {
		r.cascade = &sumCascade{}
	}
	return r, nil
}

func (r *exprReducer) start(out *Array) error {
	switch r.op {
	case OpMean, OpNanmean:
		r.acc = make([]byte, out.Len()/2*8)
		if r.op == OpNanmean {
			r.counts = make([]float64, out.Len()/2)
		}
	case OpVar, OpStd:
		r.acc = out.Data
		clear(r.acc) // (count, mean, M2) of nothing
		return nil
	default:
		r.acc = out.Data
	}
	r.m.init(r.acc)
	return nil
}

// add folds a block of values into the accumulators, segment by segment:
// a segment runs along the layout's last axis, which is either reduced
// (the segment folds into one accumulator) or kept (it folds element by
// element into a run of accumulators). orig holds nanmean's values with
// their NaNs.
func (r *exprReducer) add(l *segLayout, vals, orig []byte) {
	if r.bytes {
		r.addBytes(l, vals)
		return
	}
	es := r.es
	step := l.step(r.seg)
	for s := 0; s < l.nseg; s++ {
		pos, cnt, o := l.pos[s], l.cnt[s], l.val[r.seg][s]
		row := vals[pos*es : (pos+cnt)*es]
		if r.counts != nil {
			countNumbers(r.counts, o, step, view[float64](orig)[pos:pos+cnt])
		}
		switch {
		case r.op == OpVar || r.op == OpStd:
			r.addMoments(o, step, view[float64](row))
		case step == 0 && r.cascade != nil:
			r.cascade.push(pairwiseSumF64(view[float64](row)))
		case step == 0 && r.fsum:
			view[float64](r.acc)[o] += pairwiseSumF64(view[float64](row))
		case step == 0:
			r.m.inner(r.acc, o, row)
		case step == 1 && r.fsum:
			// The monoid's loop, packed: the same additions.
			acc := view[float64](r.acc[o*es : (o+cnt)*es])
			addF64(acc, acc, view[float64](row))
		case step == 1:
			r.m.outer(r.acc[o*es:(o+cnt)*es], row)
		default:
			for j := range cnt {
				k := o + j*step
				r.m.outer(r.acc[k*es:(k+1)*es], row[j*es:(j+1)*es])
			}
		}
	}
}

// addBytes folds a block of booleans into float64 sums. The sum of a
// segment's bytes is an integer below 2^53, which float64 holds exactly:
// the float64 additions of the values cast would give it too, so the
// partials are those of the cast values bit for bit.
func (r *exprReducer) addBytes(l *segLayout, vals []byte) {
	acc := view[float64](r.acc)
	step := l.step(r.seg)
	for s := 0; s < l.nseg; s++ {
		pos, cnt, o := l.pos[s], l.cnt[s], l.val[r.seg][s]
		row := vals[pos : pos+cnt]
		switch {
		case step == 0 && r.cascade != nil:
			r.cascade.push(float64(sumBytes(row)))
		case step == 0:
			acc[o] += float64(sumBytes(row))
		default:
			for j, v := range row {
				acc[o+j*step] += float64(v)
			}
		}
	}
}

// sumBytes is the sum of b's bytes, eight at a time: the even and the odd
// bytes of each word add into 16-bit lanes, which 128 words cannot fill.
func sumBytes(b []byte) int {
	const even = 0x00FF00FF00FF00FF
	total := 0
	for len(b) >= 8 {
		n := min(len(b)/8, 128)
		var lanes uint64
		for i := range n {
			w := binary.LittleEndian.Uint64(b[8*i:])
			lanes += w&even + w>>8&even
		}
		total += int(lanes&0xFFFF + lanes>>16&0xFFFF + lanes>>32&0xFFFF + lanes>>48)
		b = b[8*n:]
	}
	for _, v := range b {
		total += int(v)
	}
	return total
}

// countNumbers adds to counts the values of row that are not NaN: all into
// counts[o] when step is 0, else value j into counts[o+j*step].
func countNumbers(counts []float64, o, step int, row []float64) {
	if step == 0 {
		n := 0
		for _, v := range row {
			if v == v {
				n++
			}
		}
		counts[o] += float64(n)
		return
	}
	for j, v := range row {
		if v == v {
			counts[o+j*step]++
		}
	}
}

// addMoments merges row into the (count, mean, M2) partials.
func (r *exprReducer) addMoments(o, step int, row []float64) {
	p := view[float64](r.acc)
	if step == 0 {
		if len(row) == 0 {
			return
		}
		n := float64(len(row))
		mean := (0 + pairwiseSumF64(row)) / n // as varMap: the monoid starts at 0
		m2 := 0.0
		for _, x := range row {
			d := x - mean
			m2 += d * d
		}
		b := [3]float64{n, mean, m2}
		chanCombine(p[3*o:3*o+3], b[:])
		return
	}
	for j, x := range row {
		a := p[3*(o+j*step) : 3*(o+j*step)+3]
		if a[0] == 0 {
			a[0], a[1], a[2] = 1, x, 0
			continue
		}
		// chanCombine with (1, x, 0)
		n := a[0] + 1
		delta := x - a[1]
		a[1] += delta / n
		a[2] += delta * delta * a[0] / n
		a[0] = n
	}
}

func (r *exprReducer) finish(out *Array) {
	if r.cascade != nil {
		view[float64](r.acc)[0] += r.cascade.total()
	}
	if r.op != OpMean && r.op != OpNanmean {
		return
	}
	p, sums := out.Float64s(), view[float64](r.acc)
	for i, s := range sums {
		p[2*i], p[2*i+1] = s, float64(r.extent)
		if r.counts != nil {
			p[2*i+1] = r.counts[i]
		}
	}
}

// PartArgs are the arguments of an "expr.part" op: its chunk is the
// elements of its input from Offset on, as many as its shape holds, of its
// dtype. It cuts a sibling reduction's partial out of the packed output of
// the expr op that made them all.
type PartArgs struct {
	Offset int
}

// exprPart is the kind of the ops that cut a partial out of a packed one.
const exprPart = "expr.part"

// partOp is op key: it cuts sibling root op's partial, at element offset
// off, out of the output of expr op in.
func partOp(op *ChunkOp, key, in, off int) *ChunkOp {
	return &ChunkOp{Key: key, Kind: exprPart, Inputs: []int{in}, Shape: op.Shape, DType: op.DType,
		Args: PartArgs{Offset: off}, Node: op.Node}
}

func partKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(PartArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	if err := checkOp(op); err != nil {
		return nil, err
	}
	if len(in) != 1 || in[0] == nil {
		return nil, fmt.Errorf("takes 1 input, got %d", len(in))
	}
	src := in[0]
	if err := src.Check(); err != nil {
		return nil, fmt.Errorf("input 0: %w", err)
	}
	n := NumElements(op.Shape)
	if src.DType != op.DType || args.Offset < 0 || args.Offset > src.Len() || n > src.Len()-args.Offset {
		return nil, fmt.Errorf("%d elements at %d of an input of %v%v, want %v", n, args.Offset, src.DType, src.Shape, op.DType)
	}
	out := NewArray(op.DType, op.Shape)
	es := op.DType.Size()
	copy(out.Data, src.Data[args.Offset*es:(args.Offset+n)*es])
	return out, nil
}
