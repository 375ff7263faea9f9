package expr

import (
	"encoding/binary"
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
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
	m       elem.Monoid
	acc     []byte    // the accumulators: out's data, or sums for mean
	counts  []float64 // nanmean: values that are not NaN, per accumulator
	es      int
	extent  int   // elements reduced into each accumulator
	strides []int // of the accumulator over the value shape's axes
	seg     int
	keep    []int        // the partial's shape
	pdt     tensor.DType // and dtype
	src     tensor.DType // the values' dtype
	bytes   bool         // a mean of booleans: their bytes add into float64 sums
}

// newExprReducer checks a reduce instruction reading registers of dtypes
// src against the value shape, for a map op making partials of dtype dt.
// The machine checks the partial's shape (keep) against its op.
func newExprReducer(dt tensor.DType, ins *chunk.ExprInstr, src []tensor.DType, shape []int) (*exprReducer, error) {
	if !chunk.ExprReductions[ins.Kind] {
		return nil, fmt.Errorf("unsupported reduction")
	}
	nsrc := 1
	if ins.Kind == tensor.OpNanmean {
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
	keep, extent := elem.KeepShape(shape, reduced)
	pdt, fields := chunk.PartialSpec(ins.Kind, src[0], dt)
	accDT := dt
	mop := ins.Kind
	switch ins.Kind {
	case tensor.OpMean, tensor.OpNanmean:
		accDT, pdt, mop = tensor.Float64, tensor.Float64, tensor.OpSum
	case tensor.OpVar, tensor.OpStd:
		accDT, pdt, mop = tensor.Float64, tensor.Float64, ""
	case tensor.OpCountNonzero:
		accDT = tensor.Int64
	case tensor.OpAny, tensor.OpAll:
		accDT = tensor.Bool
	}
	if fields > 1 {
		keep = append(keep, fields)
	}
	bytes := ins.Kind == tensor.OpMean && src[0] == tensor.Bool
	for _, dt := range src {
		if dt != accDT && !bytes {
			return nil, fmt.Errorf("reduces %v values, not %v", dt, accDT)
		}
	}
	if pdt != dt {
		return nil, fmt.Errorf("%v values make a partial of %v, op says %v", src[0], pdt, dt)
	}
	nout := tensor.NumElements(keep) / fields
	if extent == 0 && nout > 0 {
		switch ins.Kind {
		case tensor.OpMin, tensor.OpMax, tensor.OpNanmin, tensor.OpNanmax:
			return nil, fmt.Errorf("zero-size array to reduction operation %s which has no identity", ins.Kind)
		}
	}
	r := &exprReducer{op: ins.Kind, es: accDT.Size(), extent: extent, keep: keep, pdt: pdt, src: src[0], bytes: bytes}
	if mop != "" {
		m, err := elem.MonoidFor(mop, accDT)
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
	r.fsum = accDT == tensor.Float64 && (mop == tensor.OpSum || mop == tensor.OpNansum)
	if r.fsum && nout == 1 {
		r.cascade = &sumCascade{}
	}
	return r, nil
}

func (r *exprReducer) start(out *tensor.Array) error {
	switch r.op {
	case tensor.OpNanmean:
		r.acc = make([]byte, out.Len()/2*8)
		r.counts = make([]float64, out.Len()/2)
	case tensor.OpVar, tensor.OpStd:
		r.acc = out.Data
		clear(r.acc) // (count, mean, M2) of nothing
		return nil
	default:
		r.acc = out.Data
	}
	r.m.Init(r.acc)
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
			countNumbers(r.counts, o, step, tensor.View[float64](orig)[pos:pos+cnt])
		}
		switch {
		case r.op == tensor.OpVar || r.op == tensor.OpStd:
			r.addMoments(o, step, tensor.View[float64](row))
		case step == 0 && r.cascade != nil:
			r.cascade.push(pairwiseSumF64(tensor.View[float64](row)))
		case step == 0 && r.fsum:
			tensor.View[float64](r.acc)[o] += pairwiseSumF64(tensor.View[float64](row))
		case step == 0:
			r.m.Inner(r.acc, o, row)
		case step == 1 && r.fsum:
			// The monoid's loop, packed: the same additions.
			acc := tensor.View[float64](r.acc[o*es : (o+cnt)*es])
			addF64(acc, acc, tensor.View[float64](row))
		case step == 1:
			r.m.Outer(r.acc[o*es:(o+cnt)*es], row)
		default:
			for j := range cnt {
				k := o + j*step
				r.m.Outer(r.acc[k*es:(k+1)*es], row[j*es:(j+1)*es])
			}
		}
	}
}

// addBytes folds a block of booleans into float64 sums. The sum of a
// segment's bytes is an integer below 2^53, which float64 holds exactly:
// the float64 additions of the values cast would give it too, so the
// partials are those of the cast values bit for bit.
func (r *exprReducer) addBytes(l *segLayout, vals []byte) {
	acc := tensor.View[float64](r.acc)
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
	p := tensor.View[float64](r.acc)
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
		elem.ChanCombine(p[3*o:3*o+3], b[:])
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

func (r *exprReducer) finish(out *tensor.Array) {
	if r.cascade != nil {
		tensor.View[float64](r.acc)[0] += r.cascade.total()
	}
	if r.op != tensor.OpNanmean {
		return // a mean's partial is its sums, made in place
	}
	p, sums := out.Float64s(), tensor.View[float64](r.acc)
	for i, s := range sums {
		p[2*i], p[2*i+1] = s, r.counts[i]
	}
}
