package lang

import (
	"marsfs/tensor/spec"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// The shape functions and methods. squeeze, expand_dims, ravel and flatten
// lower onto OpReshape, swapaxes and .T onto OpTranspose, stack onto
// reshapes and OpConcat.

func registerShape(l *library) {
	l.register("reshape", []string{"a", "newshape", "order"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		if !c.has(1) {
			return nil, c.missing(1)
		}
		order, err := c.str(2)
		if err != nil {
			return nil, err
		}
		return reshapeOrder(c, x, c.args[1].v, c.args[1].pos, order)
	})
	l.registerMethod("reshape", []string{"a", "*shape", "order"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		s, _ := c.args[1].v.(seqValue)
		if len(s.elts) == 0 {
			return nil, c.missing(1)
		}
		order, err := c.str(2)
		if err != nil {
			return nil, err
		}
		if len(s.elts) == 1 {
			return reshapeOrder(c, x, s.elts[0], s.pos[0], order)
		}
		return reshapeOrder(c, x, s, s.pos[0], order)
	})
	ravel := func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		order, err := c.str(1)
		if err != nil {
			return nil, err
		}
		if order == "F" {
			return reshapeOrder(c, x, syntax.PyInt(-1), c.at(1), order)
		}
		return c.b.Reshape(c.pos, x, []int{flatLen(x.Shape)})
	}
	l.register("ravel", []string{"a", "order"}, ravel)
	l.registerMethod("ravel", []string{"a", "order"}, ravel)
	l.registerMethod("flatten", []string{"a", "order"}, ravel)

	l.register("transpose", []string{"a", "axes"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		if !c.has(1) {
			return transposeTo(c, x, nil, c.pos)
		}
		return transposeTo(c, x, c.args[1].v, c.args[1].pos)
	})
	l.registerMethod("transpose", []string{"a", "*axes"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		s, _ := c.args[1].v.(seqValue)
		switch len(s.elts) {
		case 0:
			return transposeTo(c, x, nil, c.pos)
		case 1:
			if _, none := s.elts[0].(noneValue); none {
				return transposeTo(c, x, nil, c.pos)
			}
			return transposeTo(c, x, s.elts[0], s.pos[0])
		}
		return transposeTo(c, x, s, s.pos[0])
	})
	swap := func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		perm := make([]int, len(x.Shape))
		for i := range perm {
			perm[i] = i
		}
		var ax [2]int
		for i := range ax {
			if !c.has(1 + i) {
				return nil, c.missing(1 + i)
			}
			a, err := toInt(c.args[1+i].v, c.args[1+i].pos)
			if err != nil {
				return nil, err
			}
			if ax[i], err = spec.NormAxis(a, len(x.Shape), c.args[1+i].pos); err != nil {
				return nil, err
			}
		}
		perm[ax[0]], perm[ax[1]] = perm[ax[1]], perm[ax[0]]
		return c.b.Transpose(c.pos, x, perm)
	}
	l.register("swapaxes", []string{"a", "axis1", "axis2"}, swap)
	l.registerMethod("swapaxes", []string{"a", "axis1", "axis2"}, swap)

	squeeze := func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		axes, err := c.axes(1, len(x.Shape))
		if err != nil {
			return nil, err
		}
		var shape []int
		for ax, d := range x.Shape {
			drop := d == 1
			if axes != nil {
				drop = false
				for _, a := range axes {
					if a == ax {
						if d != 1 {
							return nil, c.errorf(1, "cannot select an axis to squeeze out which has size not equal to one")
						}
						drop = true
					}
				}
			}
			if !drop {
				shape = append(shape, d)
			}
		}
		return c.b.Reshape(c.pos, x, spec.CloneInts(shape))
	}
	l.register("squeeze", []string{"a", "axis"}, squeeze)
	l.registerMethod("squeeze", []string{"a", "axis"}, squeeze)

	l.register("expand_dims", []string{"a", "axis"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		if !c.has(1) {
			return nil, c.missing(1)
		}
		raw, err := ints(c.args[1].v, c.args[1].pos)
		if err != nil {
			return nil, err
		}
		axes, err := normAxes(raw, len(x.Shape)+len(raw), c.args[1].pos)
		if err != nil {
			return nil, err
		}
		return c.b.Reshape(c.pos, x, expandShape(x.Shape, axes))
	})

	l.register("concatenate", []string{"arrays", "axis"}, func(c *call) (value, error) {
		xs, err := c.tensors(0)
		if err != nil {
			return nil, err
		}
		if c.args[1].set && !c.has(1) { // axis=None: ravel every input first
			for i, x := range xs {
				if xs[i], err = c.b.Reshape(c.pos, x, []int{flatLen(x.Shape)}); err != nil {
					return nil, err
				}
			}
			return c.b.Node(c.pos, tensor.OpConcat, spec.Attrs{Axes: []int{0}}, xs...)
		}
		a, err := c.int(1, 0)
		if err != nil {
			return nil, err
		}
		if len(xs[0].Shape) == 0 {
			return nil, syntax.Errorf(c.pos, "zero-dimensional arrays cannot be concatenated")
		}
		ax, err := spec.NormAxis(a, len(xs[0].Shape), c.at(1))
		if err != nil {
			return nil, err
		}
		if len(xs) == 1 {
			return xs[0], nil
		}
		return c.b.Node(c.pos, tensor.OpConcat, spec.Attrs{Axes: []int{ax}}, xs...)
	})
	l.register("stack", []string{"arrays", "axis"}, func(c *call) (value, error) {
		xs, err := c.tensors(0)
		if err != nil {
			return nil, err
		}
		for _, x := range xs[1:] {
			if !slices.Equal(x.Shape, xs[0].Shape) {
				return nil, syntax.Errorf(c.pos, "all input arrays must have the same shape")
			}
		}
		a, err := c.int(1, 0)
		if err != nil {
			return nil, err
		}
		ax, err := spec.NormAxis(a, len(xs[0].Shape)+1, c.at(1))
		if err != nil {
			return nil, err
		}
		shape := expandShape(xs[0].Shape, []int{ax})
		for i, x := range xs {
			if xs[i], err = c.b.Reshape(c.pos, x, shape); err != nil {
				return nil, err
			}
		}
		if len(xs) == 1 {
			return xs[0], nil
		}
		return c.b.Node(c.pos, tensor.OpConcat, spec.Attrs{Axes: []int{ax}}, xs...)
	})

	rechunk := func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		if !c.has(1) && !c.args[1].set {
			return nil, c.missing(1)
		}
		chunks, err := c.chunks(1, x.Shape)
		if err != nil {
			return nil, err
		}
		return c.b.AddAt(c.pos, &spec.Node{Op: tensor.OpRechunk, Inputs: []*spec.Node{x}, Chunks: chunks})
	}
	l.register("rechunk", []string{"a", "chunks"}, rechunk)
	l.registerMethod("rechunk", []string{"a", "chunks"}, rechunk)
}

// expandShape inserts axes of length one at the given sorted axes of the
// result.
func expandShape(shape, axes []int) []int {
	nd := len(shape) + len(axes)
	out := make([]int, 0, nd)
	j := 0
	for i := 0; i < nd; i++ {
		if len(axes) > 0 && axes[0] == i {
			out = append(out, 1)
			axes = axes[1:]
			continue
		}
		out = append(out, shape[j])
		j++
	}
	return out
}

// reshapeTo reshapes x to a shape argument, which may hold one -1.
func reshapeTo(c *call, x *spec.Node, v value, p syntax.SrcPos) (value, error) {
	shape, err := ints(v, p)
	if err != nil {
		return nil, err
	}
	unknown, known := -1, 1
	for i, d := range shape {
		switch {
		case d == -1 && unknown >= 0:
			return nil, syntax.Errorf(p, "can only specify one unknown dimension")
		case d == -1:
			unknown = i
		case d < 0:
			return nil, syntax.Errorf(p, "negative dimensions are not allowed")
		default:
			if d > 0 && known > spec.MaxInt/d {
				return nil, syntax.Errorf(p, "shape %s is too large", spec.ShapeString(shape))
			}
			known *= d
		}
	}
	if tensor.HasUnknown(x.Shape) {
		// The size is not known yet: the -1 axis, or the one axis the
		// reshape leaves whole, takes its length when it is.
		if unknown < 0 {
			return nil, syntax.Errorf(p, "cannot reshape an array of shape %s, whose length depends on the data, without a -1", spec.ShapeString(x.Shape))
		}
		return c.b.Reshape(c.pos, x, shape)
	}
	size := tensor.NumElements(x.Shape)
	if unknown >= 0 {
		if known == 0 || size%known != 0 {
			return nil, syntax.Errorf(p, "cannot reshape array of size %d into shape %s", size, spec.ShapeString(shape))
		}
		shape[unknown] = size / known
	}
	if tensor.NumElements(shape) != size {
		return nil, syntax.Errorf(p, "cannot reshape array of size %d into shape %s", size, spec.ShapeString(shape))
	}
	return c.b.Reshape(c.pos, x, shape)
}

// transposeTo permutes x's axes by an axes argument (nil reverses them).
func transposeTo(c *call, x *spec.Node, v value, p syntax.SrcPos) (value, error) {
	nd := len(x.Shape)
	perm := make([]int, nd)
	if v == nil {
		for i := range perm {
			perm[i] = nd - 1 - i
		}
		return c.b.Transpose(c.pos, x, perm)
	}
	raw, err := ints(v, p)
	if err != nil {
		return nil, err
	}
	if len(raw) != nd {
		return nil, syntax.Errorf(p, "axes don't match array")
	}
	seen := make([]bool, nd)
	for i, a := range raw {
		ax, err := spec.NormAxis(a, nd, p)
		if err != nil {
			return nil, err
		}
		if seen[ax] {
			return nil, syntax.Errorf(p, "repeated axis in transpose")
		}
		seen[ax] = true
		perm[i] = ax
	}
	return c.b.Transpose(c.pos, x, perm)
}
