package lang

import (
	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/syntax"
)

// searchsorted, digitize and isin: lookups of one array's elements in
// another (OpSearchsorted, OpIsin), both cast to their result type first,
// as NumPy compares them.

func registerLookups(l *library) {
	l.register("searchsorted", []string{"a", "v", "side", "sorter"}, searchsorted)
	l.registerMethod("searchsorted", []string{"a", "v", "side", "sorter"}, searchsorted)
	l.register("digitize", []string{"x", "bins", "right"}, digitize)
	l.register("isin", []string{"element", "test_elements", "assume_unique", "invert"}, isin)
}

func searchsorted(c *call) (value, error) {
	a, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	v, err := c.tensor(1)
	if err != nil {
		return nil, err
	}
	if c.has(3) {
		// sorter= sorts a: searchsorted of a[sorter].
		s, err := c.tensor(3)
		if err != nil {
			return nil, err
		}
		if len(a.Shape) != 1 || len(s.Shape) != 1 || s.Shape[0] != a.Shape[0] {
			return nil, c.errorf(3, "sorter.size must equal a.size")
		}
		if !s.DType.IsInteger() {
			return nil, c.errorf(3, "sorter must only contain integers")
		}
		if a, err = c.b.Take(c.at(3), a, s, 0, "raise"); err != nil {
			return nil, err
		}
	}
	side, err := c.str(2)
	if err != nil {
		return nil, err
	}
	right := false
	switch side {
	case "", "left":
	case "right":
		right = true
	default:
		return nil, c.errorf(2, "side must be 'left' or 'right' (got '%s')", side)
	}
	return c.b.Searchsorted(c.pos, a, v, right)
}

// digitize is NumPy's: searchsorted(bins, x, side='right', or 'left' with
// right=True) for increasing bins, len(bins) minus that of the reversed
// bins for decreasing ones. Which one the data says (bins[-1] >=
// bins[0]); bins that are neither are not refused, as NumPy does.
func digitize(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	bins, err := c.tensor(1)
	if err != nil {
		return nil, err
	}
	right, err := c.bool(2, false)
	if err != nil {
		return nil, err
	}
	if err := c.known(bins); err != nil {
		return nil, err
	}
	if len(bins.Shape) != 1 {
		return nil, c.errorf(1, "bins must be 1-dimensional")
	}
	b, p := c.b, c.pos
	n := bins.Shape[0]
	inc, err := b.Searchsorted(p, bins, x, !right)
	if err != nil || n == 0 {
		return inc, err
	}
	rev, err := b.Flip(p, bins, []int{0})
	if err != nil {
		return nil, err
	}
	dec, err := b.Searchsorted(p, rev, x, !right)
	if err != nil {
		return nil, err
	}
	if dec, err = b.Node(p, tensor.OpSubtract, spec.Attrs{}, b.Scalar(syntax.PyInt(int64(n))), dec); err != nil {
		return nil, err
	}
	first, err := b.SliceAxis(p, bins, 0, tensor.Slice{Start: 0, Step: 1, Len: 1})
	if err != nil {
		return nil, err
	}
	last, err := b.SliceAxis(p, bins, 0, tensor.Slice{Start: n - 1, Step: 1, Len: 1})
	if err != nil {
		return nil, err
	}
	up, err := b.Node(p, tensor.OpGreaterEq, spec.Attrs{}, last, first)
	if err != nil {
		return nil, err
	}
	if up, err = b.Reshape(p, up, []int{}); err != nil {
		return nil, err
	}
	return b.Node(p, tensor.OpWhere, spec.Attrs{}, up, inc, dec)
}

func isin(c *call) (value, error) {
	e, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	test, err := c.tensor(1)
	if err != nil {
		return nil, err
	}
	if _, err := c.bool(2, false); err != nil {
		return nil, err
	}
	invert, err := c.bool(3, false)
	if err != nil {
		return nil, err
	}
	b, p := c.b, c.pos
	if e, test, err = b.Common(p, e, test); err != nil {
		return nil, err
	}
	r, err := b.Node(p, tensor.OpIsin, spec.Attrs{}, e, test)
	if err != nil || !invert {
		return r, err
	}
	return b.Node(p, tensor.OpLogicalNot, spec.Attrs{}, r)
}
