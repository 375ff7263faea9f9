package lang

import (
	"marsfs/tensor/spec"
	"math"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// Statistics built from the reductions and products that exist: each
// lowers as NumPy 1.24 computes it (its source, numpy/lib/function_base.py
// and nanfunctions.py), so the dtypes and roundings agree, and tiles as
// those do (reduction trees, blocked products).

func registerStats(l *library) {
	l.register("ptp", []string{"a", "axis", "out", "keepdims"}, ptp)
	l.registerMethod("ptp", []string{"a", "axis", "out", "keepdims"}, ptp)
	l.register("average", []string{"a", "axis", "weights", "returned", "keepdims"}, average)
	l.register("cov", []string{"m", "y", "rowvar", "bias", "ddof", "fweights", "aweights", "dtype"}, func(c *call) (value, error) {
		return cov(c)
	})
	l.register("corrcoef", []string{"x", "y", "rowvar", "bias", "ddof", "dtype"}, corrcoef)
	for _, name := range []string{"nanvar", "nanstd"} {
		l.register(name, []string{"a", "axis", "dtype", "out", "ddof", "keepdims"}, nanvar)
	}
	// percentile (registered by registerCatalogue, before this) and
	// quantile refuse an empty array as NumPy does; nanpercentile, whose
	// mask may leave nothing, gives NaN there (tilePercentile).
	for _, name := range []string{"percentile", "quantile"} {
		l.register(name, []string{"a", "q", "axis", "out", "overwrite_input", "method", "keepdims", "interpolation"}, func(c *call) (value, error) {
			x, err := c.tensor(0)
			if err != nil {
				return nil, err
			}
			if !tensor.HasUnknown(x.Shape) && tensor.NumElements(x.Shape) == 0 {
				return nil, c.errorf(0, "cannot do a non-empty take from an empty axes.")
			}
			return buildPercentile(c)
		})
	}
	l.register("diff", []string{"a", "n", "axis", "prepend", "append"}, diff)
}

// axesArg returns the axes of argument i (nil for all) for x.
func (c *call) axesArg(i int, x *spec.Node) ([]int, error) {
	return c.axes(i, len(x.Shape))
}

// ptp is max - min, in the input's dtype (NumPy refuses bools, whose
// subtraction it does not define).
func ptp(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.noOut(); err != nil {
		return nil, err
	}
	axes, err := c.axesArg(1, x)
	if err != nil {
		return nil, err
	}
	kd, err := c.bool(3, false)
	if err != nil {
		return nil, err
	}
	hi, err := c.b.ReduceNode(c.pos, tensor.OpMax, x, axes, kd, 0)
	if err != nil {
		return nil, err
	}
	lo, err := c.b.ReduceNode(c.pos, tensor.OpMin, x, axes, kd, 0)
	if err != nil {
		return nil, err
	}
	return c.b.Node(c.pos, tensor.OpSubtract, spec.Attrs{}, hi, lo)
}

// average is mean without weights; with them sum(a*w)/sum(w) in
// result_type(a, w) (and at least float64 for bool and integer a), the
// weights 1-D along axis or of a's shape. NumPy's ZeroDivisionError for
// weights summing to zero depends on the data: here such an average is
// NaN or infinite.
func average(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.known(x); err != nil {
		return nil, err
	}
	axes, err := c.axesArg(1, x)
	if err != nil {
		return nil, err
	}
	returned, err := c.bool(3, false)
	if err != nil {
		return nil, err
	}
	kd, err := c.bool(4, false)
	if err != nil {
		return nil, err
	}
	b, p := c.b, c.pos
	var avg, scl *spec.Node
	if !c.has(2) {
		if avg, err = b.ReduceNode(p, tensor.OpMean, x, axes, kd, 0); err != nil {
			return nil, err
		}
		if !returned {
			return avg, nil
		}
		// scl = a.size / avg.size, in avg's dtype.
		n := tensor.NumElements(x.Shape) / max(tensor.NumElements(avg.Shape), 1)
		if scl, err = b.FullOf(p, avg.Shape, syntax.PyInt(int64(n)), avg.DType); err != nil {
			return nil, err
		}
		return c.tuple(avg, scl), nil
	}
	w, err := c.tensor(2)
	if err != nil {
		return nil, err
	}
	dt := tensor.Promote(x.DType, w.DType)
	if !x.DType.IsFloat() {
		dt = tensor.Promote(dt, tensor.Float64)
	}
	if !slices.Equal(x.Shape, w.Shape) {
		switch {
		case axes == nil:
			return nil, c.errorf(2, "Axis must be specified when shapes of a and weights differ.")
		case len(w.Shape) != 1:
			return nil, c.errorf(2, "1D weights expected when shapes of a and weights differ.")
		case len(axes) != 1:
			return nil, c.errorf(1, "average(): weights along several axes are not supported: give one axis")
		case w.Shape[0] != x.Shape[axes[0]]:
			return nil, c.errorf(2, "Length of weights not compatible with specified axis.")
		}
		shape := make([]int, len(x.Shape))
		for i := range shape {
			shape[i] = 1
		}
		shape[axes[0]] = w.Shape[0]
		if w, err = b.Reshape(p, w, shape); err != nil {
			return nil, err
		}
	}
	if x, err = b.Astype(p, x, dt); err != nil {
		return nil, err
	}
	if w, err = b.Astype(p, w, dt); err != nil {
		return nil, err
	}
	xw, err := b.Node(p, tensor.OpMultiply, spec.Attrs{}, x, w)
	if err != nil {
		return nil, err
	}
	// scl sums the weights broadcast to a's shape, as NumPy's does.
	wb, err := b.BroadcastTo(p, w, x.Shape)
	if err != nil {
		return nil, err
	}
	if scl, err = b.ReduceNode(p, tensor.OpSum, wb, axes, kd, 0); err != nil {
		return nil, err
	}
	num, err := b.ReduceNode(p, tensor.OpSum, xw, axes, kd, 0)
	if err != nil {
		return nil, err
	}
	// NumPy refuses weights summing to zero, where a division would give
	// inf or nan.
	if avg, err = b.Node(p, tensor.OpNormalize, spec.Attrs{}, num, scl); err != nil {
		return nil, err
	}
	if returned {
		return c.tuple(avg, scl), nil
	}
	return avg, nil
}

// cov is NumPy's: variables in rows (columns with rowvar=False), centered
// by their means and multiplied, X @ X.T * (1 / (N - ddof)) in float64 (or
// dtype=), then squeezed. The product tiles as blocks summed in a tree.
// With fweights or aweights, covWeighted.
func cov(c *call) (*spec.Node, error) {
	m, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.known(m); err != nil {
		return nil, err
	}
	pi := func(name string) int { return c.param(name) }
	if len(m.Shape) > 2 {
		return nil, c.errorf(0, "m has more than 2 dimensions")
	}
	var y *spec.Node
	if c.has(1) {
		if y, err = c.tensor(1); err != nil {
			return nil, err
		}
		if err := c.known(y); err != nil {
			return nil, err
		}
		if len(y.Shape) > 2 {
			return nil, c.errorf(1, "y has more than 2 dimensions")
		}
	}
	rowvar, err := c.bool(pi("rowvar"), true)
	if err != nil {
		return nil, err
	}
	bias, err := c.bool(pi("bias"), false)
	if err != nil {
		return nil, err
	}
	ddof := spec.BoolInt(!bias)
	if i := pi("ddof"); i >= 0 && c.has(i) {
		if ddof, err = c.int(i, 0); err != nil {
			return nil, err
		}
	}
	dt := tensor.Promote(m.DType, tensor.Float64)
	if y != nil {
		dt = tensor.Promote(dt, y.DType)
	}
	if i := pi("dtype"); i >= 0 && c.has(i) {
		if dt, err = c.dtype(i, 0); err != nil {
			return nil, err
		}
		if !dt.IsFloat() {
			return nil, c.errorf(i, "%s(): dtype %s is not supported (a float dtype is)", c.name, dt)
		}
	}
	b, p := c.b, c.pos
	prep := func(x *spec.Node) (*spec.Node, error) {
		x, err := b.Astype(p, x, dt)
		if err != nil {
			return nil, err
		}
		if x, err = b.AtLeast2D(p, x); err != nil {
			return nil, err
		}
		if !rowvar && x.Shape[0] != 1 {
			return b.Transpose(p, x, []int{1, 0})
		}
		return x, nil
	}
	X, err := prep(m)
	if err != nil {
		return nil, err
	}
	if y != nil {
		Y, err := prep(y)
		if err != nil {
			return nil, err
		}
		if Y.Shape[1] != X.Shape[1] {
			return nil, c.errorf(1, "all the input array dimensions except for the concatenation axis must match exactly, but along dimension 1, the array at index 0 has size %d and the array at index 1 has size %d", X.Shape[1], Y.Shape[1])
		}
		if X, err = b.Concat(p, []*spec.Node{X, Y}, 0); err != nil {
			return nil, err
		}
	}
	if X.Shape[0] == 0 || X.Shape[1] == 0 {
		return nil, c.errorf(0, "%s() of an empty array is not supported", c.name)
	}
	fw, aw, err := covWeights(c, X.Shape[1])
	if err != nil {
		return nil, err
	}
	if fw != nil || aw != nil {
		return covWeighted(c, X, fw, aw, ddof)
	}
	avg, err := b.ReduceNode(p, tensor.OpMean, X, []int{1}, true, 0)
	if err != nil {
		return nil, err
	}
	if X, err = b.Node(p, tensor.OpSubtract, spec.Attrs{}, X, avg); err != nil {
		return nil, err
	}
	XT, err := b.Transpose(p, X, []int{1, 0})
	if err != nil {
		return nil, err
	}
	prod, err := b.Matmul(p, X, XT)
	if err != nil {
		return nil, err
	}
	// NumPy warns and divides by zero's reciprocal, inf, when N <= ddof.
	fact := float64(X.Shape[1] - ddof)
	recip := math.Inf(1)
	if fact > 0 {
		recip = 1 / fact
	}
	if prod, err = b.Node(p, tensor.OpMultiply, spec.Attrs{}, prod, b.Scalar(syntax.PyFloat(recip))); err != nil {
		return nil, err
	}
	return b.Squeeze(p, prod)
}

// covWeights returns cov's fweights and aweights (nil when not given) as
// float64 arrays of n samples. NumPy's checks of their values (integer,
// not negative) depend on the data and are not made.
func covWeights(c *call, n int) (fw, aw *spec.Node, err error) {
	for k, name := range []string{"fweights", "aweights"} {
		i := c.param(name)
		if i < 0 || !c.has(i) {
			continue
		}
		w, err := c.tensor(i)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case len(w.Shape) > 1:
			return nil, nil, c.errorf(i, "cannot handle multidimensional %s", name)
		case len(w.Shape) == 0 || w.Shape[0] != n:
			return nil, nil, c.errorf(i, "incompatible numbers of samples and %s", name)
		}
		if w, err = c.b.Astype(c.pos, w, tensor.Float64); err != nil {
			return nil, nil, err
		}
		if k == 0 {
			fw = w
		} else {
			aw = w
		}
	}
	return fw, aw, nil
}

// covWeighted is cov with weights w = fweights * aweights, as NumPy's:
// the weighted mean of each row, fact = sum(w) - ddof (less ddof times
// sum(w * aweights) / sum(w) with aweights; sum(w) for ddof 0; 0 when not
// positive), and (X - avg) @ ((X - avg) * w).T * (1 / fact).
func covWeighted(c *call, X, fw, aw *spec.Node, ddof int) (*spec.Node, error) {
	b, p := c.b, c.pos
	w := fw
	var err error
	switch {
	case w == nil:
		w = aw
	case aw != nil:
		if w, err = b.Node(p, tensor.OpMultiply, spec.Attrs{}, fw, aw); err != nil {
			return nil, err
		}
	}
	n := X.Shape[1]
	wrow, err := b.Reshape(p, w, []int{1, n})
	if err != nil {
		return nil, err
	}
	if w.DType != X.DType {
		if wrow, err = b.Astype(p, wrow, tensor.Promote(w.DType, X.DType)); err != nil {
			return nil, err
		}
	}
	wsum, err := b.ReduceNode(p, tensor.OpSum, w, nil, false, 0)
	if err != nil {
		return nil, err
	}
	xw, err := b.Node(p, tensor.OpMultiply, spec.Attrs{}, X, wrow)
	if err != nil {
		return nil, err
	}
	num, err := b.ReduceNode(p, tensor.OpSum, xw, []int{1}, true, 0)
	if err != nil {
		return nil, err
	}
	avg, err := b.Node(p, tensor.OpDivide, spec.Attrs{}, num, wsum)
	if err != nil {
		return nil, err
	}
	fact := wsum
	switch {
	case ddof == 0:
	case aw == nil:
		fact, err = b.Node(p, tensor.OpSubtract, spec.Attrs{}, wsum, b.Scalar(syntax.PyInt(int64(ddof))))
	default:
		var waw, s *spec.Node
		if waw, err = b.Node(p, tensor.OpMultiply, spec.Attrs{}, w, aw); err == nil {
			if s, err = b.ReduceNode(p, tensor.OpSum, waw, nil, false, 0); err == nil {
				if s, err = b.Node(p, tensor.OpMultiply, spec.Attrs{}, s, b.Scalar(syntax.PyInt(int64(ddof)))); err == nil {
					if s, err = b.Node(p, tensor.OpDivide, spec.Attrs{}, s, wsum); err == nil {
						fact, err = b.Node(p, tensor.OpSubtract, spec.Attrs{}, wsum, s)
					}
				}
			}
		}
	}
	if err != nil {
		return nil, err
	}
	// NumPy warns and sets fact to 0 when it is not positive.
	bad, err := b.Node(p, tensor.OpLessEq, spec.Attrs{}, fact, b.Scalar(syntax.PyInt(0)))
	if err != nil {
		return nil, err
	}
	zero, err := b.Constant(p, syntax.PyInt(0), fact.DType)
	if err != nil {
		return nil, err
	}
	if fact, err = b.Node(p, tensor.OpWhere, spec.Attrs{}, bad, zero, fact); err != nil {
		return nil, err
	}
	recip, err := b.Node(p, tensor.OpDivide, spec.Attrs{}, b.Scalar(syntax.PyInt(1)), fact)
	if err != nil {
		return nil, err
	}
	if X, err = b.Node(p, tensor.OpSubtract, spec.Attrs{}, X, avg); err != nil {
		return nil, err
	}
	xw, err = b.Node(p, tensor.OpMultiply, spec.Attrs{}, X, wrow)
	if err != nil {
		return nil, err
	}
	xwT, err := b.Transpose(p, xw, []int{1, 0})
	if err != nil {
		return nil, err
	}
	prod, err := b.Matmul(p, X, xwT)
	if err != nil {
		return nil, err
	}
	if prod, err = b.Node(p, tensor.OpMultiply, spec.Attrs{}, prod, recip); err != nil {
		return nil, err
	}
	if prod, err = b.Astype(p, prod, X.DType); err != nil {
		return nil, err
	}
	return b.Squeeze(p, prod)
}

// corrcoef divides cov by the outer product of the standard deviations
// (by each in turn, as NumPy does) and clips to [-1, 1].
func corrcoef(c *call) (value, error) {
	if i := c.param("ddof"); c.has(i) {
		return nil, c.errorf(i, "corrcoef(): ddof has no effect and is deprecated: leave it out")
	}
	if i := c.param("bias"); c.has(i) {
		return nil, c.errorf(i, "corrcoef(): bias has no effect and is deprecated: leave it out")
	}
	cv, err := cov(c)
	if err != nil {
		return nil, err
	}
	b, p := c.b, c.pos
	if len(cv.Shape) == 0 {
		return b.Node(p, tensor.OpDivide, spec.Attrs{}, cv, cv)
	}
	d, err := b.Diagonal(p, cv, 0)
	if err != nil {
		return nil, err
	}
	sd, err := b.Node(p, tensor.OpSqrt, spec.Attrs{}, d)
	if err != nil {
		return nil, err
	}
	n := sd.Shape[0]
	col, err := b.Reshape(p, sd, []int{n, 1})
	if err != nil {
		return nil, err
	}
	row, err := b.Reshape(p, sd, []int{1, n})
	if err != nil {
		return nil, err
	}
	if cv, err = b.Node(p, tensor.OpDivide, spec.Attrs{}, cv, col); err != nil {
		return nil, err
	}
	if cv, err = b.Node(p, tensor.OpDivide, spec.Attrs{}, cv, row); err != nil {
		return nil, err
	}
	if cv, err = b.Node(p, tensor.OpMaximum, spec.Attrs{}, cv, b.Scalar(syntax.PyInt(-1))); err != nil {
		return nil, err
	}
	return b.Node(p, tensor.OpMinimum, spec.Attrs{}, cv, b.Scalar(syntax.PyInt(1)))
}

// nanvar and nanstd follow nanfunctions.py: NaNs replaced by 0, counted
// out, the mean sum/count, the deviations of the numbers squared and
// summed, divided by count - ddof (NaN where that is not positive). For
// integers and bools they are var and std.
func nanvar(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.noOut(); err != nil {
		return nil, err
	}
	axes, err := c.axesArg(1, x)
	if err != nil {
		return nil, err
	}
	if c.has(2) {
		return nil, c.errorf(2, "%s(): dtype= is not supported", c.name)
	}
	ddof, err := c.int(4, 0)
	if err != nil {
		return nil, err
	}
	kd, err := c.bool(5, false)
	if err != nil {
		return nil, err
	}
	std := c.name == "nanstd"
	b, p := c.b, c.pos
	if !x.DType.IsFloat() {
		if ddof < 0 {
			return nil, c.errorf(4, "ddof must not be negative")
		}
		op := tensor.OpVar
		if std {
			op = tensor.OpStd
		}
		return b.ReduceNode(p, op, x, axes, kd, ddof)
	}
	dt := x.DType
	mask, err := b.Node(p, tensor.OpIsnan, spec.Attrs{}, x)
	if err != nil {
		return nil, err
	}
	zero, err := b.Constant(p, syntax.PyInt(0), dt)
	if err != nil {
		return nil, err
	}
	arr, err := b.Node(p, tensor.OpWhere, spec.Attrs{}, mask, zero, x)
	if err != nil {
		return nil, err
	}
	notNaN, err := b.Node(p, tensor.OpLogicalNot, spec.Attrs{}, mask)
	if err != nil {
		return nil, err
	}
	cnt, err := b.ReduceNode(p, tensor.OpCountNonzero, notNaN, axes, true, 0)
	if err != nil {
		return nil, err
	}
	sum, err := b.ReduceNode(p, tensor.OpSum, arr, axes, true, 0)
	if err != nil {
		return nil, err
	}
	avg, err := b.Node(p, tensor.OpDivide, spec.Attrs{}, sum, cnt)
	if err != nil {
		return nil, err
	}
	if avg, err = b.Astype(p, avg, dt); err != nil {
		return nil, err
	}
	dev, err := b.Node(p, tensor.OpSubtract, spec.Attrs{}, arr, avg)
	if err != nil {
		return nil, err
	}
	if dev, err = b.Node(p, tensor.OpWhere, spec.Attrs{}, mask, zero, dev); err != nil {
		return nil, err
	}
	sq, err := b.Node(p, tensor.OpMultiply, spec.Attrs{}, dev, dev)
	if err != nil {
		return nil, err
	}
	v, err := b.ReduceNode(p, tensor.OpSum, sq, axes, kd, 0)
	if err != nil {
		return nil, err
	}
	if !kd {
		if cnt, err = b.Reshape(p, cnt, v.Shape); err != nil {
			return nil, err
		}
	}
	dof, err := b.Node(p, tensor.OpSubtract, spec.Attrs{}, cnt, b.Scalar(syntax.PyInt(int64(ddof))))
	if err != nil {
		return nil, err
	}
	if v, err = b.Node(p, tensor.OpDivide, spec.Attrs{}, v, dof); err != nil {
		return nil, err
	}
	if v, err = b.Astype(p, v, dt); err != nil {
		return nil, err
	}
	bad, err := b.Node(p, tensor.OpLessEq, spec.Attrs{}, dof, b.Scalar(syntax.PyInt(0)))
	if err != nil {
		return nil, err
	}
	nan, err := b.Constant(p, syntax.PyFloat(math.NaN()), dt)
	if err != nil {
		return nil, err
	}
	if v, err = b.Node(p, tensor.OpWhere, spec.Attrs{}, bad, nan, v); err != nil {
		return nil, err
	}
	if std {
		return b.Node(p, tensor.OpSqrt, spec.Attrs{}, v)
	}
	return v, nil
}

// diff takes n differences along axis, each x[1:] - x[:-1] (not_equal
// for bools): slices of the chunks, one subtraction.
func diff(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.known(x); err != nil {
		return nil, err
	}
	n, err := c.int(1, 1)
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, c.errorf(1, "order must be non-negative but got %d", n)
	}
	if n == 0 {
		return x, nil
	}
	if len(x.Shape) == 0 {
		return nil, c.errorf(0, "diff requires input that is at least one dimensional")
	}
	a, err := c.int(2, -1)
	if err != nil {
		return nil, err
	}
	ax, err := spec.NormAxis(a, len(x.Shape), c.at(2))
	if err != nil {
		return nil, err
	}
	// prepend= and append= join x along the axis first; a number is
	// broadcast to one slice, in its own dtype (np.asanyarray's).
	parts := []*spec.Node{x}
	for _, i := range []int{3, 4} {
		if !c.has(i) {
			continue
		}
		var v *spec.Node
		switch arg := c.args[i].v.(type) {
		case syntax.PyNum:
			shape := slices.Clone(x.Shape)
			shape[ax] = 1
			if v, err = c.b.FullOf(c.at(i), shape, arg, arg.Dt); err != nil {
				return nil, err
			}
		default:
			if v, err = c.tensor(i); err != nil {
				return nil, err
			}
			if len(v.Shape) == 0 {
				shape := slices.Clone(x.Shape)
				shape[ax] = 1
				if v, err = c.b.BroadcastTo(c.at(i), v, shape); err != nil {
					return nil, err
				}
			}
		}
		if i == 3 {
			parts = append([]*spec.Node{v}, parts...)
		} else {
			parts = append(parts, v)
		}
	}
	if len(parts) > 1 {
		if x, err = c.b.Concat(c.pos, parts, ax); err != nil {
			return nil, err
		}
	}
	op := tensor.OpSubtract
	if x.DType == tensor.Bool {
		op = tensor.OpNotEqual
	}
	for range n {
		l := max(x.Shape[ax]-1, 0)
		hi, err := c.b.SliceAxis(c.pos, x, ax, tensor.Slice{Start: 1, Step: 1, Len: l})
		if err != nil {
			return nil, err
		}
		lo, err := c.b.SliceAxis(c.pos, x, ax, tensor.Slice{Start: 0, Step: 1, Len: l})
		if err != nil {
			return nil, err
		}
		if x, err = c.b.Node(c.pos, op, spec.Attrs{}, hi, lo); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// scaleQuantiles checks the q of percentile (in [0, 100]) or quantile (in
// [0, 1], then scaled to percentiles: the kernel divides by 100 again, so
// a result may differ from NumPy's quantile in the last bit).
func scaleQuantiles(c *call, q []float64) error {
	i := c.param("q")
	if c.name != "quantile" && c.name != "nanquantile" {
		for _, v := range q {
			if !(v >= 0 && v <= 100) {
				return c.errorf(i, "Percentiles must be in the range [0, 100]")
			}
		}
		return nil
	}
	for k, v := range q {
		if !(v >= 0 && v <= 1) {
			return c.errorf(i, "Quantiles must be in the range [0, 1]")
		}
		q[k] = v * 100
	}
	return nil
}
