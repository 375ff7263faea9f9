package lang

import (
	"slices"
	"strings"

	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/syntax"
)

// Shape functions that lower onto reshapes, transposes, slices,
// concatenations and broadcasts, as NumPy composes them: atleast_1d/2d/3d,
// dstack and block (concatenations of inputs made at least n-D), moveaxis
// (a transpose), broadcast_to (materialized, as where(True, x, x)),
// split, array_split, hsplit and vsplit (slices along an axis), meshgrid
// and indices (aranges reshaped and broadcast).

func registerShapeMore(l *library) {
	for name, nd := range map[string]int{"atleast_1d": 1, "atleast_2d": 2, "atleast_3d": 3} {
		l.register(name, []string{"*arys"}, func(c *call) (value, error) { return atLeast(c, nd) })
	}
	l.register("dstack", []string{"tup"}, func(c *call) (value, error) {
		xs, err := c.tensors(0)
		if err != nil {
			return nil, err
		}
		for i, x := range xs {
			if xs[i], err = atLeast3D(c, x); err != nil {
				return nil, err
			}
		}
		return concatChecked(c, xs, 2)
	})
	l.register("block", []string{"arrays"}, block)
	l.register("moveaxis", []string{"a", "source", "destination"}, moveaxis)
	l.register("broadcast_to", []string{"array", "shape", "subok"}, func(c *call) (value, error) {
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
		shape, err := ints(c.args[1].v, c.args[1].pos)
		if err != nil {
			return nil, err
		}
		for _, d := range shape {
			if d < 0 {
				return nil, c.errorf(1, "all elements of broadcast shape must be non-negative")
			}
		}
		if len(shape) < len(x.Shape) {
			return nil, c.errorf(1, "input operand has more dimensions than allowed by the axis remapping")
		}
		if !tensor.Broadcasts(x.Shape, shape) {
			return nil, c.errorf(1, "operands could not be broadcast together with remapped shapes [original->remapped]: %s and requested shape %s", spec.ShapeString(x.Shape), spec.ShapeString(shape))
		}
		if _, err := shapeOf(c.args[1].v, c.args[1].pos); err != nil {
			return nil, err
		}
		return c.b.BroadcastTo(c.pos, x, shape)
	})
	for _, name := range []string{"split", "array_split"} {
		l.register(name, []string{"ary", "indices_or_sections", "axis"}, func(c *call) (value, error) {
			x, err := c.tensor(0)
			if err != nil {
				return nil, err
			}
			a, err := c.int(2, 0)
			if err != nil {
				return nil, err
			}
			ax, err := spec.NormAxis(a, len(x.Shape), c.at(2))
			if err != nil {
				return nil, err
			}
			return splitAlong(c, x, ax)
		})
	}
	l.register("hsplit", []string{"ary", "indices_or_sections"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		if len(x.Shape) == 0 {
			return nil, c.errorf(0, "hsplit only works on arrays of 1 or more dimensions")
		}
		return splitAlong(c, x, min(1, len(x.Shape)-1))
	})
	l.register("vsplit", []string{"ary", "indices_or_sections"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		if len(x.Shape) < 2 {
			return nil, c.errorf(0, "vsplit only works on arrays of 2 or more dimensions")
		}
		return splitAlong(c, x, 0)
	})
	l.register("meshgrid", []string{"*xi", "copy", "sparse", "indexing"}, meshgrid)
	l.register("indices", []string{"dimensions", "dtype", "sparse"}, indices)
}

// atLeast is atleast_1d, atleast_2d and atleast_3d: one array for one
// argument, a list of them for several.
func atLeast(c *call, nd int) (value, error) {
	if !c.has(0) {
		return seqValue{list: true}, nil
	}
	s := c.args[0].v.(seqValue)
	out := seqValue{list: true}
	for k, v := range s.elts {
		x, err := c.b.tensor(v, s.pos[k])
		if err != nil {
			return nil, err
		}
		switch nd {
		case 1:
			if len(x.Shape) == 0 {
				x, err = c.b.Reshape(c.pos, x, []int{1})
			}
		case 2:
			x, err = c.b.AtLeast2D(c.pos, x)
		default:
			x, err = atLeast3D(c, x)
		}
		if err != nil {
			return nil, err
		}
		out.elts = append(out.elts, x)
		out.pos = append(out.pos, s.pos[k])
	}
	if len(out.elts) == 1 {
		return out.elts[0], nil
	}
	return out, nil
}

// atLeast3D is NumPy's atleast_3d: () -> (1, 1, 1), (N,) -> (1, N, 1),
// (M, N) -> (M, N, 1).
func atLeast3D(c *call, x *spec.Node) (*spec.Node, error) {
	if err := c.known(x); err != nil {
		return nil, err
	}
	switch len(x.Shape) {
	case 0:
		return c.b.Reshape(c.pos, x, []int{1, 1, 1})
	case 1:
		return c.b.Reshape(c.pos, x, []int{1, x.Shape[0], 1})
	case 2:
		return c.b.Reshape(c.pos, x, []int{x.Shape[0], x.Shape[1], 1})
	}
	return x, nil
}

// concatChecked joins xs along ax with NumPy's messages for arrays of
// other dimensions or other lengths off the axis.
func concatChecked(c *call, xs []*spec.Node, ax int) (*spec.Node, error) {
	for i, x := range xs[1:] {
		if len(x.Shape) != len(xs[0].Shape) {
			return nil, c.errorf(0, "all the input array dimensions except for the concatenation axis must match exactly, but along dimension 0, the array at index 0 has %d dimension(s) and the array at index %d has %d dimension(s)", len(xs[0].Shape), i+1, len(x.Shape))
		}
		for d := range x.Shape {
			if d != ax && x.Shape[d] != xs[0].Shape[d] {
				return nil, c.errorf(0, "all the input array dimensions except for the concatenation axis must match exactly, but along dimension %d, the array at index 0 has size %d and the array at index %d has size %d", d, xs[0].Shape[d], i+1, x.Shape[d])
			}
		}
	}
	return c.b.Concat(c.pos, xs, ax)
}

// block assembles nested lists of arrays: the innermost lists join along
// the last axis, the next ones out along the one before, and so on; every
// array is first made as many dimensions as the result (ones in front).
func block(c *call) (value, error) {
	if !c.has(0) {
		return nil, c.missing(0)
	}
	v := c.args[0].v
	if s, ok := v.(seqValue); ok && !s.list {
		return nil, c.errorf(0, "arrays is a tuple. Only lists are supported as arrays")
	}
	// The lists' depth, the same along every path, and the arrays' most
	// dimensions.
	depth, nd := -1, 0
	var walk func(v value, d int, at syntax.SrcPos) error
	walk = func(v value, d int, at syntax.SrcPos) error {
		if s, ok := v.(seqValue); ok {
			if !s.list {
				return syntax.Errorf(at, "arrays is a tuple. Only lists are supported as arrays")
			}
			if len(s.elts) == 0 {
				return syntax.Errorf(at, "List at arrays%s cannot be empty", strings.Repeat("[0]", d))
			}
			for k, e := range s.elts {
				if err := walk(e, d+1, s.pos[k]); err != nil {
					return err
				}
			}
			return nil
		}
		if depth >= 0 && depth != d {
			return syntax.Errorf(at, "List depths are mismatched. First element was at depth %d, but there is an element at depth %d", depth, d)
		}
		depth = d
		x, err := c.b.tensor(v, at)
		if err != nil {
			return err
		}
		nd = max(nd, len(x.Shape))
		return nil
	}
	if err := walk(v, 0, c.at(0)); err != nil {
		return nil, err
	}
	nd = max(nd, depth)
	var build func(v value, d int, at syntax.SrcPos) (*spec.Node, error)
	build = func(v value, d int, at syntax.SrcPos) (*spec.Node, error) {
		s, ok := v.(seqValue)
		if !ok {
			x, err := c.b.tensor(v, at)
			if err != nil {
				return nil, err
			}
			if err := c.known(x); err != nil {
				return nil, err
			}
			if len(x.Shape) < nd {
				shape := slices.Repeat([]int{1}, nd-len(x.Shape))
				return c.b.Reshape(at, x, append(shape, x.Shape...))
			}
			return x, nil
		}
		parts := make([]*spec.Node, len(s.elts))
		for k, e := range s.elts {
			x, err := build(e, d+1, s.pos[k])
			if err != nil {
				return nil, err
			}
			parts[k] = x
		}
		return concatChecked(c, parts, nd-(depth-d))
	}
	return build(v, 0, c.at(0))
}

// moveaxis moves the source axes to the destination places, the others
// keeping their order: a transpose.
func moveaxis(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	nd := len(x.Shape)
	var axes [2][]int
	for k, name := range []string{"source", "destination"} {
		i := k + 1
		if !c.has(i) {
			return nil, c.missing(i)
		}
		raw, err := ints(c.args[i].v, c.args[i].pos)
		if err != nil {
			return nil, err
		}
		for _, a := range raw {
			ax, err := spec.NormAxis(a, nd, c.at(i))
			if err != nil {
				return nil, err
			}
			if slices.Contains(axes[k], ax) {
				return nil, c.errorf(i, "repeated axis in `%s` argument", name)
			}
			axes[k] = append(axes[k], ax)
		}
	}
	src, dst := axes[0], axes[1]
	if len(src) != len(dst) {
		return nil, c.errorf(1, "`source` and `destination` arguments must have the same number of elements")
	}
	var order []int
	for a := range nd {
		if !slices.Contains(src, a) {
			order = append(order, a)
		}
	}
	// Insert the sources at their destinations, smallest destination first.
	idx := make([]int, len(dst))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return dst[a] - dst[b] })
	for _, i := range idx {
		order = slices.Insert(order, dst[i], src[i])
	}
	return c.b.Transpose(c.pos, x, order)
}

// splitAlong is split, array_split, hsplit and vsplit of x along ax into
// sections (a number: equal ones, or for array_split the first ones one
// longer) or at indices (a list: Python slices between them).
func splitAlong(c *call, x *spec.Node, ax int) (value, error) {
	if err := c.known(x); err != nil {
		return nil, err
	}
	if !c.has(1) {
		return nil, c.missing(1)
	}
	n := x.Shape[ax]
	var bounds [][2]int
	switch v := c.args[1].v.(type) {
	case syntax.PyNum:
		k, err := toInt(v, c.args[1].pos)
		if err != nil {
			return nil, err
		}
		if k <= 0 {
			return nil, c.errorf(1, "number sections must be larger than 0.")
		}
		if n%k != 0 && c.name != "array_split" {
			return nil, c.errorf(1, "array split does not result in an equal division")
		}
		each, extra := n/k, n%k
		lo := 0
		for i := range k {
			l := each
			if i < extra {
				l++
			}
			bounds = append(bounds, [2]int{lo, lo + l})
			lo += l
		}
	default:
		idx, err := ints(v, c.args[1].pos)
		if err != nil {
			return nil, err
		}
		prev, hasPrev := 0, true
		for i := 0; i <= len(idx); i++ {
			hi, hasHi := 0, false
			if i < len(idx) {
				hi, hasHi = idx[i], true
			}
			s := spec.SliceIndices(prev, hi, 1, hasPrev, hasHi, false, n)
			bounds = append(bounds, [2]int{s.Start, s.Start + s.Len})
			prev = hi
		}
	}
	out := seqValue{list: true}
	for _, bd := range bounds {
		part, err := c.b.SliceAxis(c.pos, x, ax, tensor.Slice{Start: bd[0], Step: 1, Len: bd[1] - bd[0]})
		if err != nil {
			return nil, err
		}
		out.elts = append(out.elts, part)
		out.pos = append(out.pos, c.pos)
	}
	return out, nil
}

// meshgrid broadcasts each raveled input along its own axis of the grid:
// with indexing='xy' (the default) the first two axes are swapped; sparse
// leaves the other axes of length 1.
func meshgrid(c *call) (value, error) {
	sparse, err := c.bool(2, false)
	if err != nil {
		return nil, err
	}
	if _, err := c.bool(1, true); err != nil {
		return nil, err
	}
	indexing, err := c.str(3)
	if err != nil {
		return nil, err
	}
	switch indexing {
	case "":
		indexing = "xy"
	case "xy", "ij":
	default:
		return nil, c.errorf(3, "Valid values for `indexing` are 'xy' and 'ij'.")
	}
	var xs []*spec.Node
	if c.has(0) {
		s := c.args[0].v.(seqValue)
		for k, v := range s.elts {
			x, err := c.b.tensor(v, s.pos[k])
			if err != nil {
				return nil, err
			}
			if err := c.known(x); err != nil {
				return nil, err
			}
			if x, err = c.b.Reshape(c.pos, x, []int{flatLen(x.Shape)}); err != nil {
				return nil, err
			}
			xs = append(xs, x)
		}
	}
	nd := len(xs)
	full := make([]int, nd)
	for i, x := range xs {
		full[i] = x.Shape[0]
	}
	place := func(i int) int { return i }
	if indexing == "xy" && nd > 1 {
		full[0], full[1] = full[1], full[0]
		place = func(i int) int {
			switch i {
			case 0:
				return 1
			case 1:
				return 0
			}
			return i
		}
	}
	out := seqValue{list: true}
	for i, x := range xs {
		shape := slices.Repeat([]int{1}, nd)
		shape[place(i)] = x.Shape[0]
		g, err := c.b.Reshape(c.pos, x, shape)
		if err != nil {
			return nil, err
		}
		if !sparse {
			if g, err = c.b.BroadcastTo(c.pos, g, full); err != nil {
				return nil, err
			}
		}
		out.elts = append(out.elts, g)
		out.pos = append(out.pos, c.pos)
	}
	return out, nil
}

// indices is the grid of each axis' index over dimensions, stacked on a
// first axis (sparse: a tuple of aranges with ones for the other axes).
func indices(c *call) (value, error) {
	dims, err := c.shape(0)
	if err != nil {
		return nil, err
	}
	dt, err := c.dtype(1, tensor.Int64)
	if err != nil {
		return nil, err
	}
	sparse, err := c.bool(2, false)
	if err != nil {
		return nil, err
	}
	b, p := c.b, c.pos
	var grids []*spec.Node
	out := seqValue{}
	for ax, n := range dims {
		g, err := b.IndexAlong(p, []int{n}, 0)
		if err != nil {
			return nil, err
		}
		if g, err = b.Astype(p, g, dt); err != nil {
			return nil, err
		}
		shape := slices.Repeat([]int{1}, len(dims))
		shape[ax] = n
		if g, err = b.Reshape(p, g, shape); err != nil {
			return nil, err
		}
		if sparse {
			out.elts = append(out.elts, g)
			out.pos = append(out.pos, p)
			continue
		}
		if g, err = b.BroadcastTo(p, g, dims); err != nil {
			return nil, err
		}
		if g, err = b.Reshape(p, g, append([]int{1}, dims...)); err != nil {
			return nil, err
		}
		grids = append(grids, g)
	}
	if sparse {
		return out, nil
	}
	if len(grids) == 0 {
		return b.FullOf(p, []int{0}, syntax.PyInt(0), dt)
	}
	return b.Concat(p, grids, 0)
}
