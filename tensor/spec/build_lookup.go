package spec

import (
	"fmt"

	"marsfs/tensor"
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

// common casts x and y to their result type.
func (b *builder) common(p syntax.SrcPos, x, y *Node) (*Node, *Node, error) {
	dt, err := ResultType(x, y)
	if err != nil {
		return nil, nil, syntax.ErrAt(p, err)
	}
	if x, err = b.astype(p, x, dt); err != nil {
		return nil, nil, err
	}
	y, err = b.astype(p, y, dt)
	return x, y, err
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
	if err := c.unsupported(3, ""); err != nil {
		return nil, err
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
	return c.b.searchsorted(c.pos, a, v, right)
}

func (b *builder) searchsorted(p syntax.SrcPos, a, v *Node, right bool) (*Node, error) {
	if len(a.Shape) != 1 {
		return nil, syntax.Errorf(p, "object too deep for desired array: searchsorted takes a 1-D array, not %d-D", len(a.Shape))
	}
	a, v, err := b.common(p, a, v)
	if err != nil {
		return nil, err
	}
	return b.node(p, tensor.OpSearchsorted, Attrs{K: boolInt(right)}, a, v)
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
	inc, err := b.searchsorted(p, bins, x, !right)
	if err != nil || n == 0 {
		return inc, err
	}
	rev, err := b.flip(p, bins, []int{0})
	if err != nil {
		return nil, err
	}
	dec, err := b.searchsorted(p, rev, x, !right)
	if err != nil {
		return nil, err
	}
	if dec, err = b.node(p, tensor.OpSubtract, Attrs{}, b.scalar(syntax.PyInt(int64(n))), dec); err != nil {
		return nil, err
	}
	first, err := b.sliceAxis(p, bins, 0, tensor.Slice{Start: 0, Step: 1, Len: 1})
	if err != nil {
		return nil, err
	}
	last, err := b.sliceAxis(p, bins, 0, tensor.Slice{Start: n - 1, Step: 1, Len: 1})
	if err != nil {
		return nil, err
	}
	up, err := b.node(p, tensor.OpGreaterEq, Attrs{}, last, first)
	if err != nil {
		return nil, err
	}
	if up, err = b.reshape(p, up, []int{}); err != nil {
		return nil, err
	}
	return b.node(p, tensor.OpWhere, Attrs{}, up, inc, dec)
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
	if e, test, err = b.common(p, e, test); err != nil {
		return nil, err
	}
	r, err := b.node(p, tensor.OpIsin, Attrs{}, e, test)
	if err != nil || !invert {
		return r, err
	}
	return b.node(p, tensor.OpLogicalNot, Attrs{}, r)
}

// inferLookup sets the shape and dtype of searchsorted (v's, int64) and
// isin (the elements', bool).
func inferLookup(n *Node) error {
	a, v := n.Inputs[0], n.Inputs[1]
	if a.DType != v.DType {
		return fmt.Errorf("%s of %s in %s: cast them to one dtype first", n.Op, v.DType, a.DType)
	}
	switch n.Op {
	case tensor.OpSearchsorted:
		if len(a.Shape) != 1 {
			return fmt.Errorf("searchsorted takes a 1-D array, not %d-D", len(a.Shape))
		}
		if n.Attrs.K != 0 && n.Attrs.K != 1 {
			return fmt.Errorf("searchsorted: K must be 0 (left) or 1 (right)")
		}
		n.Shape, n.DType = cloneInts(v.Shape), tensor.Int64
	default:
		n.Shape, n.DType = cloneInts(a.Shape), tensor.Bool
	}
	return nil
}
