package lang

import (
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/syntax"
)

// inner, vdot, cross and array_equal, lowered onto the products and the
// elementwise ops: inner sums over the last axes of both (a tensordot; a
// product when one is 0-d), vdot is the dot of both raveled, cross is
// made of the components' products, array_equal is all(a == b) for equal
// shapes and False otherwise, as NumPy's.

func registerProducts(l *library) {
	l.register("cross", []string{"a", "b"}, cross)
	l.register("inner", []string{"a", "b"}, func(c *call) (value, error) {
		x, y, err := c.pair()
		if err != nil {
			return nil, err
		}
		if len(x.Shape) == 0 || len(y.Shape) == 0 {
			return c.b.Node(c.pos, tensor.OpMultiply, spec.Attrs{}, x, y)
		}
		nx, ny := len(x.Shape), len(y.Shape)
		if x.Shape[nx-1] != y.Shape[ny-1] {
			return nil, c.errorf(1, "shapes %s and %s not aligned: %d (dim %d) != %d (dim %d)", spec.ShapeString(x.Shape), spec.ShapeString(y.Shape), x.Shape[nx-1], nx-1, y.Shape[ny-1], ny-1)
		}
		if nx == 1 && ny == 1 {
			return c.b.Dot(c.pos, x, y)
		}
		return c.b.Tensordot(c.pos, x, y, []int{nx - 1}, []int{ny - 1})
	})
	l.register("vdot", []string{"a", "b"}, func(c *call) (value, error) {
		x, y, err := c.pair()
		if err != nil {
			return nil, err
		}
		for _, t := range []*spec.Node{x, y} {
			if err := c.known(t); err != nil {
				return nil, err
			}
		}
		if flatLen(x.Shape) != flatLen(y.Shape) {
			return nil, c.errorf(1, "vdot: vectors have different lengths (%d and %d)", flatLen(x.Shape), flatLen(y.Shape))
		}
		if x, err = c.b.Reshape(c.pos, x, []int{flatLen(x.Shape)}); err != nil {
			return nil, err
		}
		if y, err = c.b.Reshape(c.pos, y, []int{flatLen(y.Shape)}); err != nil {
			return nil, err
		}
		return c.b.Dot(c.pos, x, y)
	})
	l.register("array_equal", []string{"a1", "a2", "equal_nan"}, func(c *call) (value, error) {
		x, y, err := c.pair()
		if err != nil {
			return nil, err
		}
		equalNaN, err := c.bool(2, false)
		if err != nil {
			return nil, err
		}
		for _, t := range []*spec.Node{x, y} {
			if err := c.known(t); err != nil {
				return nil, err
			}
		}
		b, p := c.b, c.pos
		if !slices.Equal(x.Shape, y.Shape) {
			return b.Constant(p, syntax.PyBool(false), tensor.Bool)
		}
		eq, err := b.Node(p, tensor.OpEqual, spec.Attrs{}, x, y)
		if err != nil {
			return nil, err
		}
		if equalNaN {
			nan := [2]*spec.Node{}
			for i, t := range []*spec.Node{x, y} {
				if nan[i], err = b.Node(p, tensor.OpIsnan, spec.Attrs{}, t); err != nil {
					return nil, err
				}
			}
			both, err := b.Node(p, tensor.OpLogicalAnd, spec.Attrs{}, nan[0], nan[1])
			if err != nil {
				return nil, err
			}
			if eq, err = b.Node(p, tensor.OpLogicalOr, spec.Attrs{}, eq, both); err != nil {
				return nil, err
			}
		}
		if len(eq.Shape) == 0 {
			return eq, nil
		}
		return b.ReduceNode(p, tensor.OpAll, eq, nil, false, 0)
	})
}

// cross is the cross product of the vectors along both last axes (of 2
// or 3 components; a missing third one is 0, and two 2-vectors give the
// third component alone, as NumPy 1.24's), the other axes broadcast.
func cross(c *call) (value, error) {
	x, y, err := c.pair()
	if err != nil {
		return nil, err
	}
	for _, t := range []*spec.Node{x, y} {
		if err := c.known(t); err != nil {
			return nil, err
		}
		if n := len(t.Shape); n == 0 || t.Shape[n-1] != 2 && t.Shape[n-1] != 3 {
			return nil, c.errorf(0, "incompatible dimensions for cross product\n(dimension must be 2 or 3)")
		}
	}
	b, p := c.b, c.pos
	// comp is component i of t along its last axis (nil past its end).
	comp := func(t *spec.Node, i int) (*spec.Node, error) {
		n := len(t.Shape)
		if i >= t.Shape[n-1] {
			return nil, nil
		}
		s, err := b.SliceAxis(p, t, n-1, tensor.Slice{Start: i, Step: 1, Len: 1})
		if err != nil {
			return nil, err
		}
		return b.Reshape(p, s, t.Shape[:n-1])
	}
	var xs, ys [3]*spec.Node
	for i := range 3 {
		if xs[i], err = comp(x, i); err != nil {
			return nil, err
		}
		if ys[i], err = comp(y, i); err != nil {
			return nil, err
		}
	}
	// u*v - s*t, a missing factor making its product 0.
	term := func(u, v, s, t *spec.Node) (*spec.Node, error) {
		var l, r *spec.Node
		var err error
		if u != nil && v != nil {
			if l, err = b.Node(p, tensor.OpMultiply, spec.Attrs{}, u, v); err != nil {
				return nil, err
			}
		}
		if s != nil && t != nil {
			if r, err = b.Node(p, tensor.OpMultiply, spec.Attrs{}, s, t); err != nil {
				return nil, err
			}
		}
		switch {
		case l != nil && r != nil:
			return b.Node(p, tensor.OpSubtract, spec.Attrs{}, l, r)
		case l != nil:
			return l, nil
		case r != nil:
			return b.Node(p, tensor.OpNegative, spec.Attrs{}, r)
		}
		return nil, nil
	}
	z, err := term(xs[0], ys[1], xs[1], ys[0])
	if err != nil {
		return nil, err
	}
	if xs[2] == nil && ys[2] == nil {
		return z, nil
	}
	cx, err := term(xs[1], ys[2], xs[2], ys[1])
	if err != nil {
		return nil, err
	}
	cy, err := term(xs[2], ys[0], xs[0], ys[2])
	if err != nil {
		return nil, err
	}
	parts := []*spec.Node{cx, cy, z}
	// The components broadcast to one shape, then a last axis of 3.
	shape := z.Shape
	for _, q := range parts {
		if len(q.Shape) > len(shape) {
			shape = q.Shape
		}
	}
	for i, q := range parts {
		if q, err = b.BroadcastTo(p, q, shape); err != nil {
			return nil, err
		}
		if parts[i], err = b.Reshape(p, q, append(spec.CloneInts(shape), 1)); err != nil {
			return nil, err
		}
	}
	dt, err := spec.ResultType(x, y)
	if err != nil {
		return nil, syntax.ErrAt(p, err)
	}
	for i, q := range parts {
		if parts[i], err = b.Astype(p, q, dt); err != nil {
			return nil, err
		}
	}
	return b.Concat(p, parts, len(shape))
}
