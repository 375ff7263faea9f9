package lang

import (
	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/syntax"
)

// sort, argsort, percentile, median, diagonal and trace of arrays of 3
// or more dimensions, lowered onto their 1-D and 2-D forms: the axis they
// work along is moved last and the others merged into one axis of rows
// (a transpose and a reshape, undone after), and the diagonal of two axes
// is a take from their merged axis at i·(m+1) + offset.

// toRows moves axis ax of the known x last and merges the others: the
// 2-D array of rows, and the other axes' lengths, in order.
func toRows(c *call, x *spec.Node, ax int) (*spec.Node, []int, error) {
	if err := c.known(x); err != nil {
		return nil, nil, err
	}
	var perm, others []int
	rows := 1
	for a, n := range x.Shape {
		if a != ax {
			perm = append(perm, a)
			others = append(others, n)
			rows *= n
		}
	}
	perm = append(perm, ax)
	t, err := c.b.Transpose(c.pos, x, perm)
	if err != nil {
		return nil, nil, err
	}
	r, err := c.b.Reshape(c.pos, t, []int{rows, x.Shape[ax]})
	return r, others, err
}

// sortND sorts (argsorts) x of 3 or more dimensions along ax.
func sortND(c *call, op string, x *spec.Node, ax int) (value, error) {
	rows, others, err := toRows(c, x, ax)
	if err != nil {
		return nil, err
	}
	s, err := c.b.Node(c.pos, op, spec.Attrs{}, rows)
	if err != nil {
		return nil, err
	}
	if s, err = c.b.Reshape(c.pos, s, append(others, x.Shape[ax])); err != nil {
		return nil, err
	}
	// The sorted axis back in its place.
	nd := len(x.Shape)
	back := make([]int, 0, nd)
	for a := range nd - 1 {
		if a == ax {
			back = append(back, nd-1)
		}
		back = append(back, a)
	}
	if ax == nd-1 {
		back = append(back, nd-1)
	}
	return c.b.Transpose(c.pos, s, back)
}

// diagonalND is diagonal(x, offset, axis1, axis2) of x of 3 or more
// dimensions: x's other axes, then the diagonal.
func diagonalND(c *call, x *spec.Node) (*spec.Node, error) {
	if err := c.known(x); err != nil {
		return nil, err
	}
	k, err := c.int(1, 0)
	if err != nil {
		return nil, err
	}
	nd := len(x.Shape)
	var ax [2]int
	for i, def := range []int{0, 1} {
		a, err := c.int(2+i, def)
		if err != nil {
			return nil, err
		}
		if ax[i], err = spec.NormAxis(a, nd, c.at(2+i)); err != nil {
			return nil, err
		}
	}
	if ax[0] == ax[1] {
		return nil, c.errorf(3, "axis1 and axis2 cannot be the same")
	}
	var perm, shape []int
	for a := range nd {
		if a != ax[0] && a != ax[1] {
			perm = append(perm, a)
			shape = append(shape, x.Shape[a])
		}
	}
	n, m := x.Shape[ax[0]], x.Shape[ax[1]]
	perm = append(perm, ax[0], ax[1])
	b, p := c.b, c.pos
	t, err := b.Transpose(p, x, perm)
	if err != nil {
		return nil, err
	}
	if t, err = b.Reshape(p, t, append(shape, n*m)); err != nil {
		return nil, err
	}
	// Element (i, i + k) of the n x m block, or (i - k, i) below.
	l, start := min(n, m-k), k
	if k < 0 {
		l, start = min(n+k, m), -k*m
	}
	l = max(l, 0)
	idx, err := b.IndexAlong(p, []int{l}, 0)
	if err != nil {
		return nil, err
	}
	if idx, err = b.Node(p, tensor.OpMultiply, spec.Attrs{}, idx, b.Scalar(syntax.PyInt(int64(m+1)))); err != nil {
		return nil, err
	}
	if idx, err = b.Node(p, tensor.OpAdd, spec.Attrs{}, idx, b.Scalar(syntax.PyInt(int64(start)))); err != nil {
		return nil, err
	}
	return b.Take(p, t, idx, len(shape), "raise")
}
