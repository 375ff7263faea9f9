package lang

import (
	"math"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/syntax"
)

// More of NumPy's compositions, each lowered onto existing ops as NumPy
// 1.24 writes it: rollaxis (a transpose), kron (a broadcast product
// reshaped), sinc, heaviside, float_power and modf (elementwise), trapz
// (slices, a product and a sum), unravel_index (integer division by the
// strides, each index checked by a take), ravel_multi_index (its
// inverse), and reshape and ravel in
// Fortran order (transposes around a C-order reshape).

func registerMore(l *library) {
	l.register("rollaxis", []string{"a", "axis", "start"}, rollaxis)
	l.register("kron", []string{"a", "b"}, kron)
	l.register("sinc", []string{"x"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		b, p := c.b, c.pos
		// y = pi * where(x == 0, 1.0e-20, x); sin(y) / y
		zero, err := b.Node(p, tensor.OpEqual, spec.Attrs{}, x, b.Scalar(syntax.PyInt(0)))
		if err != nil {
			return nil, err
		}
		y, err := b.Node(p, tensor.OpWhere, spec.Attrs{}, zero, b.Scalar(syntax.PyFloat(1e-20)), x)
		if err != nil {
			return nil, err
		}
		if y, err = b.Node(p, tensor.OpMultiply, spec.Attrs{}, b.Scalar(syntax.PyFloat(math.Pi)), y); err != nil {
			return nil, err
		}
		s, err := b.Node(p, tensor.OpSin, spec.Attrs{}, y)
		if err != nil {
			return nil, err
		}
		return b.Node(p, tensor.OpDivide, spec.Attrs{}, s, y)
	})
	l.register("heaviside", []string{"x1", "x2"}, heaviside)
	l.register("float_power", []string{"x1", "x2"}, func(c *call) (value, error) {
		x, y, err := c.pair()
		if err != nil {
			return nil, err
		}
		if x, err = c.b.Astype(c.pos, x, tensor.Float64); err != nil {
			return nil, err
		}
		if y, err = c.b.Astype(c.pos, y, tensor.Float64); err != nil {
			return nil, err
		}
		return c.b.Node(c.pos, tensor.OpPower, spec.Attrs{}, x, y)
	})
	l.register("modf", []string{"x"}, modf)
	l.register("reciprocal", []string{"x"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		// NumPy's integer loop divides in C, whose 1/0 is the platform's.
		if !x.DType.IsFloat() {
			return nil, c.errorf(0, "reciprocal() of %s is not supported yet: it is for floats (cast first)", x.DType)
		}
		return c.b.Node(c.pos, tensor.OpDivide, spec.Attrs{}, c.b.Scalar(syntax.PyFloat(1)), x)
	})
	l.register("trapz", []string{"y", "x", "dx", "axis"}, trapz)
	l.register("unravel_index", []string{"indices", "shape", "order"}, unravelIndex)
	l.register("ravel_multi_index", []string{"multi_index", "dims", "mode", "order"}, ravelMultiIndex)
}

// rollaxis moves axis to before start, the others keeping their order.
func rollaxis(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	n := len(x.Shape)
	a, err := c.int(1, 0)
	if err != nil {
		return nil, err
	}
	if !c.has(1) {
		return nil, c.missing(1)
	}
	ax, err := spec.NormAxis(a, n, c.at(1))
	if err != nil {
		return nil, err
	}
	start, err := c.int(2, 0)
	if err != nil {
		return nil, err
	}
	if start < 0 {
		start += n
	}
	if start < 0 || start > n {
		return nil, c.errorf(2, "'start' arg requires %d <= start < %d", -n, n+1)
	}
	if ax < start {
		start--
	}
	perm := make([]int, 0, n)
	for i := range n {
		if i != ax {
			perm = append(perm, i)
		}
	}
	perm = slices.Insert(perm, start, ax)
	return c.b.Transpose(c.pos, x, perm)
}

// kron is the Kronecker product: both made as many dimensions (ones in
// front), a's axes interleaved with b's by reshapes, multiplied, and each
// pair of axes merged.
func kron(c *call) (value, error) {
	x, y, err := c.pair()
	if err != nil {
		return nil, err
	}
	for _, t := range []*spec.Node{x, y} {
		if err := c.known(t); err != nil {
			return nil, err
		}
	}
	nd := max(len(x.Shape), len(y.Shape))
	xs := append(slices.Repeat([]int{1}, nd-len(x.Shape)), x.Shape...)
	ys := append(slices.Repeat([]int{1}, nd-len(y.Shape)), y.Shape...)
	var xi, yi, out []int
	for d := range nd {
		xi = append(xi, xs[d], 1)
		yi = append(yi, 1, ys[d])
		out = append(out, xs[d]*ys[d])
	}
	b, p := c.b, c.pos
	if x, err = b.Reshape(p, x, xi); err != nil {
		return nil, err
	}
	if y, err = b.Reshape(p, y, yi); err != nil {
		return nil, err
	}
	r, err := b.Node(p, tensor.OpMultiply, spec.Attrs{}, x, y)
	if err != nil {
		return nil, err
	}
	return b.Reshape(p, r, out)
}

// heaviside is 0 below zero, 1 above, x2 at zero, and NaN for NaN, in
// the inputs' float (NumPy's loops are float only).
func heaviside(c *call) (value, error) {
	x, h, err := c.pair()
	if err != nil {
		return nil, err
	}
	b, p := c.b, c.pos
	dt, err := spec.ResultType(x, h)
	if err != nil {
		return nil, syntax.ErrAt(p, err)
	}
	if !dt.IsFloat() {
		dt = tensor.Promote(dt, tensor.Float16)
	}
	if x, err = b.Astype(p, x, dt); err != nil {
		return nil, err
	}
	if h, err = b.Astype(p, h, dt); err != nil {
		return nil, err
	}
	r := x // NaN stays NaN
	for _, s := range []struct {
		op string
		v  *spec.Node
	}{{tensor.OpEqual, h}, {tensor.OpGreater, b.Scalar(syntax.PyFloat(1))}, {tensor.OpLess, b.Scalar(syntax.PyFloat(0))}} {
		cond, err := b.Node(p, s.op, spec.Attrs{}, x, b.Scalar(syntax.PyInt(0)))
		if err != nil {
			return nil, err
		}
		if r, err = b.Node(p, tensor.OpWhere, spec.Attrs{}, cond, s.v, r); err != nil {
			return nil, err
		}
	}
	return b.Astype(p, r, dt)
}

// modf is the fractional and integral parts, both of x's sign (a whole
// number's fraction is a zero of its sign, an infinity's too).
func modf(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	b, p := c.b, c.pos
	if !x.DType.IsFloat() {
		if x, err = b.Astype(p, x, tensor.Promote(x.DType, tensor.Float16)); err != nil {
			return nil, err
		}
	}
	// trunc: ceil below zero, floor above (floor keeps -0.0).
	neg, err := b.Node(p, tensor.OpLess, spec.Attrs{}, x, b.Scalar(syntax.PyInt(0)))
	if err != nil {
		return nil, err
	}
	fl, err := b.Node(p, tensor.OpFloor, spec.Attrs{}, x)
	if err != nil {
		return nil, err
	}
	ce, err := b.Node(p, tensor.OpCeil, spec.Attrs{}, x)
	if err != nil {
		return nil, err
	}
	whole, err := b.Node(p, tensor.OpWhere, spec.Attrs{}, neg, ce, fl)
	if err != nil {
		return nil, err
	}
	frac, err := b.Node(p, tensor.OpSubtract, spec.Attrs{}, x, whole)
	if err != nil {
		return nil, err
	}
	inf, err := b.Node(p, tensor.OpIsinf, spec.Attrs{}, x)
	if err != nil {
		return nil, err
	}
	if frac, err = b.Node(p, tensor.OpWhere, spec.Attrs{}, inf, b.Scalar(syntax.PyFloat(0)), frac); err != nil {
		return nil, err
	}
	// x - trunc(x) of -3.0 is 0.0: the fraction takes x's sign.
	if frac, err = b.Node(p, tensor.OpCopysign, spec.Attrs{}, frac, x); err != nil {
		return nil, err
	}
	return c.tuple(frac, whole), nil
}

// trapz integrates y along axis by the trapezoidal rule, with sample
// points x (1-D, or y's shape) or spacing dx.
func trapz(c *call) (value, error) {
	y, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.known(y); err != nil {
		return nil, err
	}
	b, p := c.b, c.pos
	nd := len(y.Shape)
	if nd == 0 {
		return nil, c.errorf(0, "trapz(): y must have at least one axis")
	}
	a, err := c.int(3, -1)
	if err != nil {
		return nil, err
	}
	ax, err := spec.NormAxis(a, nd, c.at(3))
	if err != nil {
		return nil, err
	}
	n := y.Shape[ax]
	var d *spec.Node
	if c.has(1) {
		x, err := c.tensor(1)
		if err != nil {
			return nil, err
		}
		if err := c.known(x); err != nil {
			return nil, err
		}
		xa := ax
		if len(x.Shape) == 1 {
			xa = 0
		} else if !slices.Equal(x.Shape, y.Shape) {
			return nil, c.errorf(1, "trapz(): x must be 1-D or of y's shape")
		}
		m := x.Shape[xa]
		hi, err := b.SliceAxis(p, x, xa, tensor.Slice{Start: min(1, m), Step: 1, Len: max(m-1, 0)})
		if err != nil {
			return nil, err
		}
		lo, err := b.SliceAxis(p, x, xa, tensor.Slice{Start: 0, Step: 1, Len: max(m-1, 0)})
		if err != nil {
			return nil, err
		}
		if d, err = b.Node(p, tensor.OpSubtract, spec.Attrs{}, hi, lo); err != nil {
			return nil, err
		}
		if len(x.Shape) == 1 && nd > 1 {
			shape := slices.Repeat([]int{1}, nd)
			shape[ax] = max(m-1, 0)
			if d, err = b.Reshape(p, d, shape); err != nil {
				return nil, err
			}
		}
	} else {
		dx, err := c.num(2, syntax.PyFloat(1))
		if err != nil {
			return nil, err
		}
		d = b.Scalar(dx)
	}
	hi, err := b.SliceAxis(p, y, ax, tensor.Slice{Start: min(1, n), Step: 1, Len: max(n-1, 0)})
	if err != nil {
		return nil, err
	}
	lo, err := b.SliceAxis(p, y, ax, tensor.Slice{Start: 0, Step: 1, Len: max(n-1, 0)})
	if err != nil {
		return nil, err
	}
	// (d * (y[1:] + y[:-1]) / 2.0).sum(axis), NumPy's order.
	s, err := b.Node(p, tensor.OpAdd, spec.Attrs{}, hi, lo)
	if err != nil {
		return nil, err
	}
	if s, err = b.Node(p, tensor.OpMultiply, spec.Attrs{}, d, s); err != nil {
		return nil, err
	}
	if s, err = b.Node(p, tensor.OpDivide, spec.Attrs{}, s, b.Scalar(syntax.PyFloat(2))); err != nil {
		return nil, err
	}
	return b.ReduceNode(p, tensor.OpSum, s, []int{ax}, false, 0)
}

// unravelIndex turns flat indices into a tuple of index arrays over shape
// (C order, or F): each index is checked against the size by a take from
// an arange (a negative one made out of range first, as NumPy refuses
// it), then divided by each axis' stride and taken modulo its length.
func unravelIndex(c *call) (value, error) {
	idx, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if !idx.DType.IsInteger() {
		return nil, c.errorf(0, "only int indices permitted")
	}
	dims, err := c.shape(1)
	if err != nil {
		return nil, err
	}
	order, err := c.str(2)
	if err != nil {
		return nil, err
	}
	if order != "" && order != "C" && order != "F" {
		return nil, c.errorf(2, "only 'C' or 'F' order is permitted")
	}
	b, p := c.b, c.pos
	size := tensor.NumElements(dims)
	if idx, err = b.Astype(p, idx, tensor.Int64); err != nil {
		return nil, err
	}
	neg, err := b.Node(p, tensor.OpLess, spec.Attrs{}, idx, b.Scalar(syntax.PyInt(0)))
	if err != nil {
		return nil, err
	}
	checked, err := b.Node(p, tensor.OpWhere, spec.Attrs{}, neg, b.Scalar(syntax.PyInt(int64(size))), idx)
	if err != nil {
		return nil, err
	}
	ar, err := b.IndexAlong(p, []int{size}, 0)
	if err != nil {
		return nil, err
	}
	flat, err := b.Reshape(p, checked, []int{flatLen(checked.Shape)})
	if err != nil {
		return nil, err
	}
	if flat, err = b.Take(p, ar, flat, 0, "raise"); err != nil {
		return nil, err
	}
	if flat, err = b.Reshape(p, flat, idx.Shape); err != nil {
		return nil, err
	}
	strides := make([]int, len(dims))
	s := 1
	for k := range dims {
		d := len(dims) - 1 - k
		if order == "F" {
			d = k
		}
		strides[d] = s
		s *= dims[d]
	}
	out := seqValue{}
	for d, n := range dims {
		q, err := b.Node(p, tensor.OpFloorDiv, spec.Attrs{}, flat, b.Scalar(syntax.PyInt(int64(strides[d]))))
		if err != nil {
			return nil, err
		}
		if q, err = b.Node(p, tensor.OpMod, spec.Attrs{}, q, b.Scalar(syntax.PyInt(int64(max(n, 1))))); err != nil {
			return nil, err
		}
		out.elts = append(out.elts, q)
		out.pos = append(out.pos, p)
	}
	return out, nil
}

// reshapeOrder reshapes x to the shape v in order ("C", or "F": the
// transposes of a C-order reshape of the transpose).
func reshapeOrder(c *call, x *spec.Node, v value, p syntax.SrcPos, order string) (value, error) {
	switch order {
	case "", "C", "A":
		return reshapeTo(c, x, v, p)
	case "F":
	default:
		return nil, syntax.Errorf(p, "order must be one of 'C', 'F', 'A', or 'K' (got '%s')", order)
	}
	if err := c.known(x); err != nil {
		return nil, err
	}
	shape, err := ints(v, p)
	if err != nil {
		return nil, err
	}
	rev := func(n int) []int {
		perm := make([]int, n)
		for i := range perm {
			perm[i] = n - 1 - i
		}
		return perm
	}
	xt, err := c.b.Transpose(c.pos, x, rev(len(x.Shape)))
	if err != nil {
		return nil, err
	}
	var sv seqValue
	for i := len(shape) - 1; i >= 0; i-- {
		sv.elts = append(sv.elts, syntax.PyInt(int64(shape[i])))
		sv.pos = append(sv.pos, p)
	}
	r, err := reshapeTo(c, xt, sv, p)
	if err != nil {
		return nil, err
	}
	rn := r.(*spec.Node)
	return c.b.Transpose(c.pos, rn, rev(len(rn.Shape)))
}

// ravelMultiIndex is the flat index Σ i_d · stride_d of a tuple of index
// arrays over dims (C or F order), each index checked against its axis by
// a take from an arange (a negative one made out of range first, as mode
// 'raise' refuses it), or wrapped or clipped first (modes 'wrap', 'clip').
func ravelMultiIndex(c *call) (value, error) {
	if !c.has(0) {
		return nil, c.missing(0)
	}
	s, ok := c.args[0].v.(seqValue)
	if !ok {
		return nil, c.errorf(0, "ravel_multi_index(): multi_index must be a tuple of index arrays")
	}
	dims, err := c.shape(1)
	if err != nil {
		return nil, err
	}
	if len(s.elts) != len(dims) {
		return nil, c.errorf(0, "parameter multi_index must be a sequence of length %d", len(dims))
	}
	mode, err := c.str(2)
	if err != nil {
		return nil, err
	}
	switch mode {
	case "":
		mode = "raise"
	case "raise", "wrap", "clip":
	default:
		return nil, c.errorf(2, "clipmode must be one of 'clip', 'raise', or 'wrap' (got '%s')", mode)
	}
	order, err := c.str(3)
	if err != nil {
		return nil, err
	}
	if order != "" && order != "C" && order != "F" {
		return nil, c.errorf(3, "only 'C' or 'F' order is permitted")
	}
	b, p := c.b, c.pos
	var flat *spec.Node
	stride := 1
	for k := range dims {
		d := len(dims) - 1 - k
		if order == "F" {
			d = k
		}
		idx, err := b.tensor(s.elts[d], s.pos[d])
		if err != nil {
			return nil, err
		}
		if !idx.DType.IsInteger() {
			return nil, syntax.Errorf(s.pos[d], "only int indices permitted")
		}
		if idx, err = b.Astype(p, idx, tensor.Int64); err != nil {
			return nil, err
		}
		n := dims[d]
		if mode == "raise" {
			neg, err := b.Node(p, tensor.OpLess, spec.Attrs{}, idx, b.Scalar(syntax.PyInt(0)))
			if err != nil {
				return nil, err
			}
			if idx, err = b.Node(p, tensor.OpWhere, spec.Attrs{}, neg, b.Scalar(syntax.PyInt(int64(n))), idx); err != nil {
				return nil, err
			}
		}
		if err := c.known(idx); err != nil {
			return nil, err
		}
		shape := idx.Shape
		ar, err := b.IndexAlong(p, []int{n}, 0)
		if err != nil {
			return nil, err
		}
		one, err := b.Reshape(p, idx, []int{flatLen(shape)})
		if err != nil {
			return nil, err
		}
		if one, err = b.Take(p, ar, one, 0, mode); err != nil {
			return nil, err
		}
		if one, err = b.Reshape(p, one, shape); err != nil {
			return nil, err
		}
		if stride != 1 {
			if one, err = b.Node(p, tensor.OpMultiply, spec.Attrs{}, one, b.Scalar(syntax.PyInt(int64(stride)))); err != nil {
				return nil, err
			}
		}
		if flat == nil {
			flat = one
		} else if flat, err = b.Node(p, tensor.OpAdd, spec.Attrs{}, flat, one); err != nil {
			return nil, err
		}
		stride *= n
	}
	if flat == nil {
		return nil, c.errorf(1, "ravel_multi_index(): dims must not be empty")
	}
	return flat, nil
}
