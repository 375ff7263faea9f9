package lang

import (
	"marsfs/tensor/spec"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// Functions that move elements without computing: each lowers onto index
// mappings over chunks that exist (slices, also with negative steps;
// concatenations; reshapes; broadcasts) or onto where over an index mask
// made of aranges, which fuses with its input. Only diagonal is an op of
// its own (OpDiagonal): one op a diagonal block, reading that block alone.

func registerLayout(l *library) {
	l.register("flip", []string{"m", "axis"}, flip)
	l.register("fliplr", []string{"m"}, func(c *call) (value, error) { return flipAxes(c, []int{1}, 2) })
	l.register("flipud", []string{"m"}, func(c *call) (value, error) { return flipAxes(c, []int{0}, 1) })
	l.register("roll", []string{"a", "shift", "axis"}, roll)
	l.register("vstack", []string{"tup"}, func(c *call) (value, error) { return stackLike(c, "vstack") })
	l.register("hstack", []string{"tup"}, func(c *call) (value, error) { return stackLike(c, "hstack") })
	l.register("column_stack", []string{"tup"}, func(c *call) (value, error) { return stackLike(c, "column_stack") })
	l.register("triu", []string{"m", "k"}, triangle)
	l.register("tril", []string{"m", "k"}, triangle)
	l.register("diag", []string{"v", "k"}, diag)
	l.register("diagonal", []string{"a", "offset", "axis1", "axis2"}, diagonalFn)
	l.registerMethod("diagonal", []string{"a", "offset", "axis1", "axis2"}, diagonalFn)
	l.register("trace", []string{"a", "offset", "axis1", "axis2", "dtype", "out"}, trace)
	l.registerMethod("trace", []string{"a", "offset", "axis1", "axis2", "dtype", "out"}, trace)
	l.register("repeat", []string{"a", "repeats", "axis"}, repeat)
	l.registerMethod("repeat", []string{"a", "repeats", "axis"}, repeat)
	l.register("tile", []string{"A", "reps"}, tileFn)
}

// flip reverses the order of elements along the axes (all for None): a
// slice of step -1, whose tile rule maps each output chunk to one input
// chunk read backwards.
func flip(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.known(x); err != nil {
		return nil, err
	}
	var axes []int
	if c.has(1) {
		if axes, err = c.axes(1, len(x.Shape)); err != nil {
			return nil, err
		}
	} else {
		for ax := range x.Shape {
			axes = append(axes, ax)
		}
	}
	return c.b.Flip(c.pos, x, axes)
}

func flipAxes(c *call, axes []int, nd int) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.known(x); err != nil {
		return nil, err
	}
	if len(x.Shape) < nd {
		return nil, c.errorf(0, "Input must be >= %d-d.", nd)
	}
	return c.b.Flip(c.pos, x, axes)
}

// roll shifts elements along axes (the flattened array for None): the
// two slices of each axis, concatenated the other way round.
func roll(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.known(x); err != nil {
		return nil, err
	}
	if !c.has(1) {
		return nil, c.missing(1)
	}
	shifts, err := ints(c.args[1].v, c.args[1].pos)
	if err != nil {
		return nil, err
	}
	b, p := c.b, c.pos
	if !c.has(2) {
		if len(shifts) != 1 {
			return nil, c.errorf(1, "roll(): a tuple of shifts needs a tuple of axes")
		}
		flat, err := b.Reshape(p, x, []int{flatLen(x.Shape)})
		if err != nil {
			return nil, err
		}
		r, err := b.RollAxis(p, flat, 0, shifts[0])
		if err != nil {
			return nil, err
		}
		return b.Reshape(p, r, x.Shape)
	}
	raw, err := ints(c.args[2].v, c.args[2].pos)
	if err != nil {
		return nil, err
	}
	switch {
	case len(shifts) == 1 && len(raw) > 1:
		shifts = slices.Repeat(shifts, len(raw))
	case len(raw) == 1 && len(shifts) > 1:
		raw = slices.Repeat(raw, len(shifts))
	case len(raw) != len(shifts):
		return nil, c.errorf(1, "'shift' and 'axis' should be scalars or 1D sequences")
	}
	// Shifts of one axis add up, as in NumPy.
	total := make([]int, len(x.Shape))
	for i, a := range raw {
		ax, err := spec.NormAxis(a, len(x.Shape), c.at(2))
		if err != nil {
			return nil, err
		}
		total[ax] += shifts[i]
	}
	for ax, s := range total {
		if x, err = b.RollAxis(p, x, ax, s); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// stackLike implements vstack, hstack and column_stack as concatenations
// of their inputs made at least 2-D (vstack), 1-D (hstack) or columns
// (column_stack).
func stackLike(c *call, kind string) (value, error) {
	xs, err := c.tensors(0)
	if err != nil {
		return nil, err
	}
	b, p := c.b, c.pos
	ax := 0
	for i, x := range xs {
		if err := c.known(x); err != nil {
			return nil, err
		}
		switch kind {
		case "vstack":
			xs[i], err = b.AtLeast2D(p, x)
		case "hstack":
			if len(x.Shape) == 0 {
				xs[i], err = b.Reshape(p, x, []int{1})
			}
			if len(xs[0].Shape) > 1 {
				ax = 1
			}
		case "column_stack":
			if len(x.Shape) < 2 {
				xs[i], err = b.Reshape(p, x, []int{flatLen(x.Shape), 1})
			}
			ax = 1
		}
		if err != nil {
			return nil, err
		}
	}
	for i, x := range xs[1:] {
		if len(x.Shape) != len(xs[0].Shape) {
			return nil, c.errorf(0, "all the input array dimensions except for the concatenation axis must match exactly, but along dimension 0, the array at index 0 has %d dimension(s) and the array at index %d has %d dimension(s)", len(xs[0].Shape), i+1, len(x.Shape))
		}
	}
	return b.Concat(p, xs, ax)
}

// triangle is triu (j - i >= k kept) and tril (j - i <= k kept) over the
// last two axes, zeros of the input's dtype elsewhere: where over an
// index mask, elementwise and fused.
func triangle(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.known(x); err != nil {
		return nil, err
	}
	k, err := c.int(1, 0)
	if err != nil {
		return nil, err
	}
	nd := len(x.Shape)
	if nd == 0 {
		return nil, c.errorf(0, "%s() of a 0-d array: it needs at least one axis", c.name)
	}
	m := x.Shape[nd-1]
	n := m
	if nd >= 2 {
		n = x.Shape[nd-2]
	}
	op := tensor.OpGreaterEq
	if c.name == "tril" {
		op = tensor.OpLessEq
	}
	b, p := c.b, c.pos
	mask, err := b.OffsetMask(p, n, m, op, k)
	if err != nil {
		return nil, err
	}
	zero, err := b.Constant(p, syntax.PyInt(0), x.DType)
	if err != nil {
		return nil, err
	}
	return b.Node(p, tensor.OpWhere, spec.Attrs{}, mask, x, zero)
}

// diag extracts the k-th diagonal of a 2-D array (diagonal) or makes the
// matrix with a 1-D array on its k-th diagonal: where over an index mask
// of the array broadcast along rows (k < 0) or columns, padded with zeros
// to the matrix's size.
func diag(c *call) (value, error) {
	v, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.known(v); err != nil {
		return nil, err
	}
	k, err := c.int(1, 0)
	if err != nil {
		return nil, err
	}
	b, p := c.b, c.pos
	switch len(v.Shape) {
	case 2:
		return b.Diagonal(p, v, k)
	case 1:
	default:
		return nil, c.errorf(0, "Input must be 1- or 2-d.")
	}
	l := v.Shape[0]
	n := l + max(k, -k)
	if n == 0 {
		return b.FullOf(p, []int{0, 0}, syntax.PyInt(0), v.DType)
	}
	zero, err := b.Constant(p, syntax.PyInt(0), v.DType)
	if err != nil {
		return nil, err
	}
	if pad := n - l; pad > 0 {
		z, err := b.FullOf(p, []int{pad}, syntax.PyInt(0), v.DType)
		if err != nil {
			return nil, err
		}
		if v, err = b.Concat(p, []*spec.Node{v, z}, 0); err != nil {
			return nil, err
		}
	}
	// k >= 0: out[i, i+k] = v[i], v along rows; k < 0: out[j-k, j] = v[j].
	shape := []int{n, 1}
	if k < 0 {
		shape = []int{1, n}
	}
	if v, err = b.Reshape(p, v, shape); err != nil {
		return nil, err
	}
	mask, err := b.OffsetMask(p, n, n, tensor.OpEqual, k)
	if err != nil {
		return nil, err
	}
	return b.Node(p, tensor.OpWhere, spec.Attrs{}, mask, v, zero)
}

// diagonalAxes checks the offset and axes of diagonal and trace: of a 2-D
// array, axes (0, 1) or (1, 0), the latter a transpose first.
func diagonalAxes(c *call, x *spec.Node) (*spec.Node, int, error) {
	if err := c.known(x); err != nil {
		return nil, 0, err
	}
	k, err := c.int(1, 0)
	if err != nil {
		return nil, 0, err
	}
	if len(x.Shape) < 2 {
		return nil, 0, c.errorf(0, "diag requires an array of at least two dimensions")
	}
	if len(x.Shape) > 2 {
		return nil, 0, c.errorf(0, "%s() of a %d-D array is not supported yet (2-D is)", c.name, len(x.Shape))
	}
	var ax [2]int
	for i, def := range []int{0, 1} {
		a, err := c.int(2+i, def)
		if err != nil {
			return nil, 0, err
		}
		if ax[i], err = spec.NormAxis(a, 2, c.at(2+i)); err != nil {
			return nil, 0, err
		}
	}
	if ax[0] == ax[1] {
		return nil, 0, c.errorf(3, "axis1 and axis2 cannot be the same")
	}
	if ax[0] == 1 {
		if x, err = c.b.Transpose(c.pos, x, []int{1, 0}); err != nil {
			return nil, 0, err
		}
	}
	return x, k, nil
}

func diagonalFn(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if len(x.Shape) > 2 {
		return diagonalND(c, x)
	}
	x, k, err := diagonalAxes(c, x)
	if err != nil {
		return nil, err
	}
	return c.b.Diagonal(c.pos, x, k)
}

// trace is the sum of the diagonal, in sum's dtype (or dtype=).
func trace(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.noOut(); err != nil {
		return nil, err
	}
	var d *spec.Node
	var axes []int // the diagonal's axis: the last of a 3-D or larger one
	if len(x.Shape) > 2 {
		if d, err = diagonalND(c, x); err != nil {
			return nil, err
		}
		axes = []int{len(d.Shape) - 1}
	} else {
		x, k, err := diagonalAxes(c, x)
		if err != nil {
			return nil, err
		}
		if d, err = c.b.Diagonal(c.pos, x, k); err != nil {
			return nil, err
		}
	}
	if c.has(4) {
		dt, err := c.dtype(4, 0)
		if err != nil {
			return nil, err
		}
		if d, err = c.b.Astype(c.pos, d, dt); err != nil {
			return nil, err
		}
		s, err := c.b.ReduceNode(c.pos, tensor.OpSum, d, axes, false, 0)
		if err != nil {
			return nil, err
		}
		return c.b.Astype(c.pos, s, dt)
	}
	return c.b.ReduceNode(c.pos, tensor.OpSum, d, axes, false, 0)
}

// repeat repeats each element r times along axis (of the flattened array
// for None): the array with a new axis after axis, broadcast to r there,
// and reshaped to merge the two.
func repeat(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.known(x); err != nil {
		return nil, err
	}
	if !c.has(1) {
		return nil, c.missing(1)
	}
	reps, err := ints(c.args[1].v, c.args[1].pos)
	if err != nil {
		return nil, err
	}
	b, p := c.b, c.pos
	ax := 0
	if c.has(2) {
		a, err := c.int(2, 0)
		if err != nil {
			return nil, err
		}
		if ax, err = spec.NormAxis(a, len(x.Shape), c.at(2)); err != nil {
			return nil, err
		}
	} else if x, err = b.Reshape(p, x, []int{flatLen(x.Shape)}); err != nil {
		return nil, err
	}
	for _, r := range reps {
		if r < 0 {
			return nil, c.errorf(1, "negative dimensions are not allowed")
		}
	}
	if len(reps) != 1 && slices.ContainsFunc(reps, func(r int) bool { return r != reps[0] }) {
		if len(reps) != x.Shape[ax] {
			return nil, c.errorf(1, "operands could not be broadcast together with shape (%d,) (%d,)", x.Shape[ax], len(reps))
		}
		return b.repeatEach(p, x, reps, ax)
	}
	r := reps[0]
	if r == 1 {
		return x, nil
	}
	in := slices.Insert(slices.Clone(x.Shape), ax+1, 1)
	if x, err = b.Reshape(p, x, in); err != nil {
		return nil, err
	}
	wide := slices.Clone(in)
	wide[ax+1] = r
	if x, err = b.BroadcastTo(p, x, wide); err != nil {
		return nil, err
	}
	out := slices.Delete(slices.Clone(wide), ax+1, ax+2)
	out[ax] *= r
	return b.Reshape(p, x, out)
}

// repeatEach repeats element i of x along ax reps[i] times: x taken at
// searchsorted(cumsum(reps), arange(total), side='right'), the element
// each place of the result comes from.
func (b *builder) repeatEach(p syntax.SrcPos, x *spec.Node, reps []int, ax int) (*spec.Node, error) {
	cum := seqValue{}
	total := 0
	for _, r := range reps {
		total += r
		cum.elts = append(cum.elts, syntax.PyInt(int64(total)))
		cum.pos = append(cum.pos, p)
	}
	edges, err := b.arrayLiteral(p, cum, -1, nil)
	if err != nil {
		return nil, err
	}
	chunks, err := spec.DefaultChunksAt([]int{total}, p)
	if err != nil {
		return nil, err
	}
	at, err := b.AddAt(p, &spec.Node{Op: tensor.OpArange, Shape: []int{total}, DType: tensor.Int64, Chunks: chunks, Attrs: spec.Attrs{Start: 0, Step: 1}})
	if err != nil {
		return nil, err
	}
	idx, err := b.Searchsorted(p, edges, at, true)
	if err != nil {
		return nil, err
	}
	return b.Take(p, x, idx, ax, "raise")
}

// tileFn is np.tile: the array with an axis of length 1 before each of its
// own, broadcast to the repetitions there, and reshaped to merge the pairs.
func tileFn(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.known(x); err != nil {
		return nil, err
	}
	if !c.has(1) {
		return nil, c.missing(1)
	}
	reps, err := ints(c.args[1].v, c.args[1].pos)
	if err != nil {
		return nil, err
	}
	for _, r := range reps {
		if r < 0 {
			return nil, c.errorf(1, "negative dimensions are not allowed")
		}
	}
	b, p := c.b, c.pos
	shape := slices.Clone(x.Shape)
	for len(shape) < len(reps) {
		shape = append([]int{1}, shape...)
	}
	for len(reps) < len(shape) {
		reps = append([]int{1}, reps...)
	}
	if x, err = b.Reshape(p, x, shape); err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(reps, func(r int) bool { return r != 1 }) {
		return x, nil
	}
	var in, wide, out []int
	for i, d := range shape {
		in = append(in, 1, d)
		wide = append(wide, reps[i], d)
		out = append(out, reps[i]*d)
	}
	if x, err = b.Reshape(p, x, in); err != nil {
		return nil, err
	}
	if x, err = b.BroadcastTo(p, x, wide); err != nil {
		return nil, err
	}
	return b.Reshape(p, x, out)
}
