package tensor

import (
	"context"
	"fmt"
	"math"
	"sync"
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
	if NumElements(l.shape) == 0 {
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
		if done += rowLen; done >= elemBlock {
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

// A monoid reduction on one dtype, over raw bytes.
type monoid struct {
	init  func(acc []byte)                    // set every accumulator to the identity
	inner func(acc []byte, o int, row []byte) // acc[o] = acc[o] op reduce(row)
	outer func(acc, row []byte)               // acc[j] = acc[j] op row[j]
}

// monoidFor returns the monoid of op (sum, prod, min, max, nanmin, nanmax,
// any, all) on dt.
func monoidFor(op string, dt DType) (monoid, error) {
	k := monoidKey{op, dt}
	monoids.RLock()
	m, ok := monoids.m[k]
	monoids.RUnlock()
	if ok {
		return m, nil
	}
	m, err := makeMonoid(op, dt)
	if err != nil {
		return monoid{}, err
	}
	monoids.Lock()
	if monoids.m == nil {
		monoids.m = make(map[monoidKey]monoid)
	}
	monoids.m[k] = m
	monoids.Unlock()
	return m, nil
}

// monoids holds the monoids made so far: their functions hold no state, and
// a graph of tiny chunks asks for one per op, where making its closures
// would cost more than the op's work.
var monoids struct {
	sync.RWMutex
	m map[monoidKey]monoid
}

type monoidKey struct {
	op string
	dt DType
}

// makeMonoid makes the monoid of op on dt.
func makeMonoid(op string, dt DType) (monoid, error) {
	var m *monoid
	switch dt {
	case Bool:
		m = monoidT[uint8](op, 0, 1)
	case Int32:
		m = monoidT[int32](op, math.MinInt32, math.MaxInt32)
	case Int64:
		m = monoidT[int64](op, math.MinInt64, math.MaxInt64)
	case Float32:
		m = monoidT(op, float32(math.Inf(-1)), float32(math.Inf(1)))
	case Float64:
		m = monoidT(op, math.Inf(-1), math.Inf(1))
	}
	if m == nil {
		return monoid{}, fmt.Errorf("%s is not defined for %v", op, dt)
	}
	return *m, nil
}

func monoidT[T elemType](op string, lowest, highest T) *monoid {
	var (
		id    T
		inner func(acc T, row []T) T
		outer func(acc, row []T)
	)
	switch op {
	case OpSum, OpCountNonzero, OpNansum:
		inner = func(acc T, row []T) T { return acc + pairwiseSum(row) }
		outer = func(acc, row []T) { addLoop(acc, acc, row) }
	case OpProd:
		id = 1
		inner = func(acc T, row []T) T {
			for _, v := range row {
				acc *= v
			}
			return acc
		}
		outer = func(acc, row []T) {
			row = row[:len(acc)]
			for j := range acc {
				acc[j] *= row[j]
			}
		}
	case OpMax, OpAny:
		// The builtin max propagates NaN, as NumPy's maximum does.
		id = lowest
		inner = func(acc T, row []T) T {
			for _, v := range row {
				acc = max(acc, v)
			}
			return acc
		}
		outer = func(acc, row []T) {
			row = row[:len(acc)]
			for j := range acc {
				acc[j] = max(acc[j], row[j])
			}
		}
	case OpMin, OpAll:
		id = highest
		inner = func(acc T, row []T) T {
			for _, v := range row {
				acc = min(acc, v)
			}
			return acc
		}
		outer = func(acc, row []T) {
			row = row[:len(acc)]
			for j := range acc {
				acc[j] = min(acc[j], row[j])
			}
		}
	case OpNanmax, OpNanmin:
		isMax := op == OpNanmax
		// Floats start at NaN ("nothing seen") and skip NaN values; for
		// integers this is plain max/min.
		id = highest
		if isMax {
			id = lowest
		}
		if isFloatT[T]() {
			id = T(math.NaN())
		}
		better := func(v, acc T) bool {
			if v != v {
				return false
			}
			if acc != acc {
				return true
			}
			if isMax {
				return v > acc
			}
			return v < acc
		}
		inner = func(acc T, row []T) T {
			for _, v := range row {
				if better(v, acc) {
					acc = v
				}
			}
			return acc
		}
		outer = func(acc, row []T) {
			row = row[:len(acc)]
			for j := range acc {
				if better(row[j], acc[j]) {
					acc[j] = row[j]
				}
			}
		}
	default:
		return nil
	}
	return &monoid{
		init:  func(acc []byte) { fillSlice(view[T](acc), id) },
		inner: func(acc []byte, o int, row []byte) { a := view[T](acc); a[o] = inner(a[o], view[T](row)) },
		outer: func(acc, row []byte) { outer(view[T](acc), view[T](row)) },
	}
}

func isFloatT[T elemType]() bool {
	var z T
	switch any(z).(type) {
	case float32, float64:
		return true
	}
	return false
}

// pairwiseSum returns the sum of x by pairwise summation over blocks of 128
// elements with eight running sums each, as NumPy sums contiguous data, so
// that float error grows with log(n), not n.
func pairwiseSum[T elemType](x []T) T {
	n := len(x)
	if n < 8 {
		var s T
		for _, v := range x {
			s += v
		}
		return s
	}
	if n <= 128 {
		r0, r1, r2, r3, r4, r5, r6, r7 := x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
		i := 8
		for ; i+8 <= n; i += 8 {
			b := x[i : i+8 : i+8]
			r0 += b[0]
			r1 += b[1]
			r2 += b[2]
			r3 += b[3]
			r4 += b[4]
			r5 += b[5]
			r6 += b[6]
			r7 += b[7]
		}
		s := ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
		for ; i < n; i++ {
			s += x[i]
		}
		return s
	}
	n2 := n / 2
	n2 -= n2 % 8
	return pairwiseSum(x[:n2]) + pairwiseSum(x[n2:])
}

// reduceWith folds a (of the monoid's dtype) into acc over the reduced axes.
func reduceWith(ctx context.Context, m monoid, acc, a *Array, reduced []bool) error {
	es := a.DType.Size()
	m.init(acc.Data)
	return newRedLayout(a.Shape, reduced, true).rows(ctx, func(in, o, n int, inner bool) {
		row := a.Data[in*es : (in+n)*es]
		if inner {
			m.inner(acc.Data, o, row)
		} else {
			m.outer(acc.Data[o*es:(o+n)*es], row)
		}
	})
}

// monoidMap makes the partial of a monoid reduction.
func monoidMap(ctx context.Context, out, x *Array, reduced []bool, op string) error {
	a := x
	switch op {
	case OpCountNonzero:
		a = castArray(castArray(x, Bool), Int64)
	case OpNansum:
		a = zeroNaN(castArray(x, out.DType))
	default:
		a = castArray(x, out.DType)
	}
	m, err := monoidFor(op, out.DType)
	if err != nil {
		return err
	}
	return reduceWith(ctx, m, out, a, reduced)
}

// zeroNaN returns a with its NaNs replaced by zeros (a itself if it is not a
// float array).
func zeroNaN(a *Array) *Array {
	switch a.DType {
	case Float32:
		return zeroNaNT[float32](a)
	case Float64:
		return zeroNaNT[float64](a)
	}
	return a
}

func zeroNaNT[T floatType](a *Array) *Array {
	out := NewArray(a.DType, a.Shape)
	d, s := view[T](out.Data), view[T](a.Data)
	s = s[:len(d)]
	for i, v := range s {
		if v == v {
			d[i] = v
		}
	}
	return out
}

// keepShape is a's shape with the reduced axes set to 1.
func keepShape(shape []int, reduced []bool) ([]int, int) {
	ks := make([]int, len(shape))
	extent := 1
	for ax, s := range shape {
		ks[ax] = s
		if reduced[ax] {
			ks[ax] = 1
			extent *= s
		}
	}
	return ks, extent
}

func sumFloat64(ctx context.Context, a *Array, reduced []bool) ([]float64, error) {
	ks, _ := keepShape(a.Shape, reduced)
	acc := NewArray(Float64, ks)
	m, _ := monoidFor(OpSum, Float64)
	err := reduceWith(ctx, m, acc, a, reduced)
	return acc.Float64s(), err
}

// meanMap makes (sum, count) partials; with skipNaN, NaNs count as absent.
func meanMap(ctx context.Context, out, x *Array, reduced []bool, skipNaN bool) error {
	a := castArray(x, Float64)
	_, extent := keepShape(a.Shape, reduced)
	var counts []float64
	if skipNaN {
		ind := NewArray(Float64, a.Shape)
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
	}
	sums, err := sumFloat64(ctx, a, reduced)
	if err != nil {
		return err
	}
	p := out.Float64s()
	for i, s := range sums {
		p[2*i] = s
		if skipNaN {
			p[2*i+1] = counts[i]
		} else {
			p[2*i+1] = float64(extent)
		}
	}
	return nil
}

// varMap makes (count, mean, M2) partials with two passes over the chunk:
// the mean, then the sum of squared deviations from it.
func varMap(ctx context.Context, out, x *Array, reduced []bool) error {
	a := castArray(x, Float64)
	_, extent := keepShape(a.Shape, reduced)
	mean, err := sumFloat64(ctx, a, reduced)
	if err != nil {
		return err
	}
	if extent > 0 {
		for i := range mean {
			mean[i] /= float64(extent)
		}
	}
	m2 := make([]float64, len(mean))
	v := a.Float64s()
	err = newRedLayout(a.Shape, reduced, true).rows(ctx, func(in, o, n int, inner bool) {
		row := v[in : in+n]
		if inner {
			mu, s := mean[o], 0.0
			for _, x := range row {
				d := x - mu
				s += d * d
			}
			m2[o] += s
			return
		}
		mu, acc := mean[o:o+n], m2[o:o+n]
		for j, x := range row {
			d := x - mu[j]
			acc[j] += d * d
		}
	})
	if err != nil {
		return err
	}
	p := out.Float64s()
	for i := range mean {
		p[3*i], p[3*i+1], p[3*i+2] = float64(extent), mean[i], m2[i]
	}
	return nil
}

// chanCombine merges (count, mean, M2) partials b into a by Chan et al.'s
// parallel formula.
func chanCombine(a, b []float64) {
	b = b[:len(a)]
	for i := 0; i+2 < len(a); i += 3 {
		na, nb := a[i], b[i]
		n := na + nb
		if nb == 0 {
			continue
		}
		if na == 0 {
			copy(a[i:i+3], b[i:i+3])
			continue
		}
		delta := b[i+1] - a[i+1]
		a[i] = n
		a[i+1] += delta * nb / n
		a[i+2] += b[i+2] + delta*delta*na*nb/n
	}
}

// varianceOf is M2 / max(n-ddof, 0), or its square root for std.
func varianceOf(n, m2 float64, ddof int, std bool) float64 {
	d := max(n-float64(ddof), 0)
	v := m2 / d
	if std {
		return math.Sqrt(v)
	}
	return v
}

// argMap makes (value, index) partials of argmin/argmax with global indices.
func argMap(ctx context.Context, out, x *Array, reduced []bool, args ReduceArgs) error {
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
	lstr, gstr := byteStrides(x.Shape, 1), byteStrides(args.Global, 1)
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
	isMax := args.Op == OpArgmax
	if out.DType == Float64 {
		return argMapT(ctx, out.Float64s(), castArray(x, Float64).Float64s(), l, first, isMax)
	}
	return argMapT(ctx, out.Int64s(), castArray(x, Int64).Int64s(), l, first, isMax)
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
func argCombine(a, b *Array, isMax bool) {
	if a.DType == Float64 {
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
