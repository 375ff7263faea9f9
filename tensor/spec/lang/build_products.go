package lang

import (
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/syntax"
)

// inner, vdot and array_equal, lowered onto the products and the
// elementwise ops: inner sums over the last axes of both (a tensordot; a
// product when one is 0-d), vdot is the dot of both raveled, array_equal
// is all(a == b) for equal shapes and False otherwise, as NumPy's.

func registerProducts(l *library) {
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
