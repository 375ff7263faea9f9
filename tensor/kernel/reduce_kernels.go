package kernel

import (
	"context"
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

// The typed loops of the reduction kernels.
//
// A chunk is reduced row by row: a row is a run along the last axis of the
// chunk (after merging adjacent axes that are alike, when the reduction does
// not need global indices). If that axis is reduced, the whole row folds into
// one accumulator (the "inner" case: float sums are pairwise, as NumPy's);
// otherwise the row folds element by element into a row of accumulators (the
// "outer" case, also how combine ops merge partials).

// A redLayout is a chunk's shape with the reduced axes marked.
type redLayout struct {
	shape []int
	red   []bool
}

// newRedLayout builds the layout of shape; with merge, size-1 axes are dropped
// and adjacent axes that are both reduced or both kept become one.
func newRedLayout(shape []int, reduced []bool, merge bool) redLayout {
	var l redLayout
	for ax, s := range shape {
		if merge {
			if s == 1 {
				continue
			}
			if last := len(l.shape) - 1; last >= 0 && l.red[last] == reduced[ax] {
				l.shape[last] *= s
				continue
			}
		}
		l.shape = append(l.shape, s)
		l.red = append(l.red, reduced[ax])
	}
	if len(l.shape) == 0 {
		l.shape, l.red = []int{1}, []bool{true}
	}
	return l
}

// rows calls fn for each row: the row holds elements in..in+n-1 of the
// chunk; if inner, they all reduce into accumulator out, else element j
// reduces into out+j. It stops with ctx's error once ctx is done.
func (l redLayout) rows(ctx context.Context, fn func(in, out, n int, inner bool)) error {
	nd := len(l.shape)
	if tensor.NumElements(l.shape) == 0 {
		return nil
	}
	ostr := make([]int, nd)
	s := 1
	for ax := nd - 1; ax >= 0; ax-- {
		if !l.red[ax] {
			ostr[ax] = s
			s *= l.shape[ax]
		}
	}
	rowLen, inner := l.shape[nd-1], l.red[nd-1]
	idx := make([]int, nd-1)
	done := 0
	for in := 0; ; in += rowLen {
		if done += rowLen; done >= ElemBlock {
			if err := ctx.Err(); err != nil {
				return err
			}
			done = 0
		}
		o := 0
		for ax, i := range idx {
			o += i * ostr[ax]
		}
		fn(in, o, rowLen, inner)
		ax := nd - 2
		for ; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < l.shape[ax] {
				break
			}
			idx[ax] = 0
		}
		if ax < 0 {
			return nil
		}
	}
}

// reduceWith folds a (of the monoid's dtype) into acc over the reduced axes.
func reduceWith(ctx context.Context, m elem.Monoid, acc, a *tensor.Array, reduced []bool) error {
	es := a.DType.Size()
	m.Init(acc.Data)
	return newRedLayout(a.Shape, reduced, true).rows(ctx, func(in, o, n int, inner bool) {
		row := a.Data[in*es : (in+n)*es]
		if inner {
			m.Inner(acc.Data, o, row)
		} else {
			m.Outer(acc.Data[o*es:(o+n)*es], row)
		}
	})
}

// monoidMap makes the partial of a monoid reduction.
func monoidMap(ctx context.Context, out, x *tensor.Array, reduced []bool, op string) error {
	a := x
	if op == tensor.OpSum && out.DType == tensor.Float64 && widens(x.DType) {
		sums, err := wideSums(ctx, x, reduced)
		copy(out.Float64s(), sums)
		putF64(sums)
		return err
	}
	switch op {
	case tensor.OpCountNonzero:
		a = elem.CastArray(elem.CastArray(x, tensor.Bool), tensor.Int64)
	case tensor.OpNansum:
		a = zeroNaN(elem.CastArray(x, out.DType))
	default:
		a = elem.CastArray(x, out.DType)
	}
	m, err := elem.MonoidFor(op, out.DType)
	if err != nil {
		return err
	}
	return reduceWith(ctx, m, out, a, reduced)
}

// zeroNaN returns a with its NaNs replaced by zeros (a itself if it is not a
// float array).
func zeroNaN(a *tensor.Array) *tensor.Array {
	switch a.DType {
	case tensor.Float32:
		return zeroNaNT[float32](a)
	case tensor.Float64:
		return zeroNaNT[float64](a)
	}
	return a
}

func zeroNaNT[T elem.FloatType](a *tensor.Array) *tensor.Array {
	out := tensor.NewArray(a.DType, a.Shape)
	d, s := tensor.View[T](out.Data), tensor.View[T](a.Data)
	s = s[:len(d)]
	for i, v := range s {
		if v == v {
			d[i] = v
		}
	}
	return out
}

func sumFloat64(ctx context.Context, a *tensor.Array, reduced []bool) ([]float64, error) {
	if widens(a.DType) {
		return wideSums(ctx, a, reduced)
	}
	ks, _ := elem.KeepShape(a.Shape, reduced)
	acc := tensor.NewArray(tensor.Float64, ks)
	m, _ := elem.MonoidFor(tensor.OpSum, tensor.Float64)
	err := reduceWith(ctx, m, acc, a, reduced)
	return acc.Float64s(), err
}

// meanMap makes a mean's partial, its sums; with skipNaN (nanmean), (sum,
// count) pairs, NaNs counting as absent.
func meanMap(ctx context.Context, out, x *tensor.Array, reduced []bool, skipNaN bool, share *sharedSums) error {
	a := x
	if !widens(x.DType) || skipNaN {
		a = elem.CastArray(x, tensor.Float64)
	}
	var counts []float64
	if skipNaN {
		ind := tensor.NewArray(tensor.Float64, a.Shape)
		d := ind.Float64s()
		for i, v := range a.Float64s() {
			if v == v {
				d[i] = 1
			}
		}
		var err error
		if counts, err = sumFloat64(ctx, ind, reduced); err != nil {
			return err
		}
		a = zeroNaN(a)
		share = nil // the sums of other values
	}
	sums, err := share.sum(ctx, a, reduced)
	if err != nil {
		return err
	}
	p := out.Float64s()
	if !skipNaN {
		copy(p, sums) // a mean's partial: its sums (chunk.PartialSpec)
		return nil
	}
	for i, s := range sums {
		p[2*i], p[2*i+1] = s, counts[i]
	}
	return nil
}

// varMap makes (count, mean, M2) partials with two passes over the chunk:
// the mean, then the sum of squared deviations from it.
func varMap(ctx context.Context, out, x *tensor.Array, reduced []bool, share *sharedSums) error {
	a := x
	if !widens(x.DType) {
		a = elem.CastArray(x, tensor.Float64)
	}
	_, extent := elem.KeepShape(a.Shape, reduced)
	sums, err := share.sum(ctx, a, reduced)
	if err != nil {
		return err
	}
	mean := sums
	if share != nil {
		mean = append(takeF64(len(sums))[:0], sums...) // the sums stay the others'
		defer putF64(mean)
	}
	if extent > 0 {
		for i := range mean {
			mean[i] /= float64(extent)
		}
	}
	m2 := takeF64(len(mean))
	clear(m2)
	defer putF64(m2)
	if err := wideM2(ctx, m2, mean, a, reduced); err != nil {
		return err
	}
	p := out.Float64s()
	for i := range mean {
		p[3*i], p[3*i+1], p[3*i+2] = float64(extent), mean[i], m2[i]
	}
	return nil
}

// argMap makes (value, index) partials of argmin/argmax with global indices.
func argMap(ctx context.Context, out, x *tensor.Array, reduced []bool, args chunk.ReduceArgs) error {
	if len(args.Offset) != len(x.Shape) || len(args.Global) != len(x.Shape) {
		return fmt.Errorf("offset %v and shape %v do not fit chunk %v", args.Offset, args.Global, x.Shape)
	}
	axis := -1
	if !args.Flat {
		if len(args.Axes) != 1 {
			return fmt.Errorf("%s takes one axis, got %v", args.Op, args.Axes)
		}
		axis = args.Axes[0]
	}
	nd := len(x.Shape)
	l := newRedLayout(x.Shape, reduced, false)
	// first returns the global index of element in (flat index of the
	// chunk) and the index step along its row, without allocating: it runs
	// once a row.
	lstr, gstr := tensor.ByteStrides(x.Shape, 1), tensor.ByteStrides(args.Global, 1)
	first := func(in int) (int64, int64) {
		if nd == 0 {
			return 0, 1
		}
		if axis < 0 {
			g := 0
			for ax, s := range lstr {
				g += ((in/s)%x.Shape[ax] + args.Offset[ax]) * gstr[ax]
			}
			return int64(g), 1
		}
		step := int64(0)
		if axis == nd-1 {
			step = 1
		}
		return int64((in/lstr[axis])%x.Shape[axis] + args.Offset[axis]), step
	}
	isMax := args.Op == tensor.OpArgmax
	if out.DType == tensor.Float64 {
		return argMapT(ctx, out.Float64s(), elem.CastArray(x, tensor.Float64).Float64s(), l, first, isMax)
	}
	if x.DType == tensor.Uint64 {
		// The partials hold int64 values: flipping the top bit keeps
		// the order of uint64 ones (only the order matters).
		v := make([]int64, x.Len())
		for i, u := range x.Uint64s() {
			v[i] = int64(u ^ 1<<63)
		}
		return argMapT(ctx, out.Int64s(), v, l, first, isMax)
	}
	return argMapT(ctx, out.Int64s(), elem.CastArray(x, tensor.Int64).Int64s(), l, first, isMax)
}

func argMapT[V int64 | float64](ctx context.Context, p, v []V, l redLayout, first func(int) (int64, int64), isMax bool) error {
	seen := make([]bool, len(p)/2)
	return l.rows(ctx, func(in, o, n int, inner bool) {
		g, step := first(in)
		row := v[in : in+n]
		for j, x := range row {
			k := o
			if !inner {
				k = o + j
			}
			if !seen[k] || argBetter(x, p[2*k], isMax) {
				seen[k] = true
				p[2*k], p[2*k+1] = x, V(g+int64(j)*step)
			}
		}
	})
}

// argBetter reports whether v beats the best so far: NaN beats every
// number, and a tie keeps the first occurrence.
func argBetter[V int64 | float64](v, best V, isMax bool) bool {
	if v != v {
		return best == best
	}
	if isMax {
		return v > best
	}
	return v < best
}

// argCombine merges (value, index) partials b into a: the better value wins,
// and among equal values the smaller index.
func argCombine(a, b *tensor.Array, isMax bool) {
	if a.DType == tensor.Float64 {
		argCombineT(a.Float64s(), b.Float64s(), isMax)
	} else {
		argCombineT(a.Int64s(), b.Int64s(), isMax)
	}
}

func argCombineT[V int64 | float64](a, b []V, isMax bool) {
	b = b[:len(a)]
	for i := 0; i+1 < len(a); i += 2 {
		same := a[i] == b[i] || (a[i] != a[i] && b[i] != b[i])
		if argBetter(b[i], a[i], isMax) || (same && b[i+1] < a[i+1]) {
			a[i], a[i+1] = b[i], b[i+1]
		}
	}
}
