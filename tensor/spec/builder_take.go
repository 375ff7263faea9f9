package spec

import (
	"fmt"
	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// Take is x's slices along ax named by the integer tensor i.
func (b *Builder) Take(p syntax.SrcPos, x, i *Node, ax int, mode string) (*Node, error) {
	if !i.DType.IsInteger() {
		return nil, syntax.Errorf(p, "arrays used as indices must be of integer (or boolean) type, not %s", i.DType)
	}
	n := x.Shape[ax]
	if n == tensor.Unknown && mode != "raise" {
		return nil, syntax.Errorf(p, "take(mode='%s') from an array of shape %s, whose length depends on the data, is not supported yet", mode, ShapeString(x.Shape))
	}
	idx, err := b.Astype(p, i, tensor.Int64)
	if err != nil {
		return nil, err
	}
	switch {
	case mode == "wrap" && n > 0:
		idx, err = b.Node(p, tensor.OpMod, Attrs{}, idx, b.Scalar(syntax.PyInt(int64(n))))
	case mode == "clip":
		if n == 0 {
			return nil, syntax.Errorf(p, "cannot do a non-empty take from an empty axes.")
		}
		if idx, err = b.Node(p, tensor.OpMaximum, Attrs{}, idx, b.Scalar(syntax.PyInt(0))); err == nil {
			idx, err = b.Node(p, tensor.OpMinimum, Attrs{}, idx, b.Scalar(syntax.PyInt(int64(n-1))))
		}
	}
	if err != nil {
		return nil, err
	}
	perm := []int{ax}
	for a := range x.Shape {
		if a != ax {
			perm = append(perm, a)
		}
	}
	if x, err = b.Transpose(p, x, perm); err != nil {
		return nil, err
	}
	r, err := b.Node(p, tensor.OpTake, Attrs{}, x, idx)
	if err != nil || ax == 0 {
		return r, err
	}
	// The result's axes: i's (where ax was), then x's others in order.
	k := len(idx.Shape)
	var back []int
	for a := 0; a < ax; a++ {
		back = append(back, k+a)
	}
	for a := 0; a < k; a++ {
		back = append(back, a)
	}
	for a := ax + 1; a < len(x.Shape); a++ {
		back = append(back, k+a-1)
	}
	return b.Transpose(p, r, back)
}

// inferTake checks x[i] along x's first axis: i int64.
func inferTake(n *Node) error {
	x, i := n.Inputs[0], n.Inputs[1]
	if len(x.Shape) == 0 {
		return fmt.Errorf("take from a 0-d array")
	}
	if i.DType != tensor.Int64 {
		return fmt.Errorf("take: indices must be int64, not %s", i.DType)
	}
	n.Shape = append(CloneInts(i.Shape), x.Shape[1:]...)
	n.DType = x.DType
	return nil
}

// Common casts x and y to their result type.
func (b *Builder) Common(p syntax.SrcPos, x, y *Node) (*Node, *Node, error) {
	dt, err := ResultType(x, y)
	if err != nil {
		return nil, nil, syntax.ErrAt(p, err)
	}
	if x, err = b.Astype(p, x, dt); err != nil {
		return nil, nil, err
	}
	y, err = b.Astype(p, y, dt)
	return x, y, err
}

// Searchsorted is np.searchsorted(a, v, side): where each value of v
// goes in the sorted 1-D a, leftmost or rightmost (right).
func (b *Builder) Searchsorted(p syntax.SrcPos, a, v *Node, right bool) (*Node, error) {
	if len(a.Shape) != 1 {
		return nil, syntax.Errorf(p, "object too deep for desired array: searchsorted takes a 1-D array, not %d-D", len(a.Shape))
	}
	a, v, err := b.Common(p, a, v)
	if err != nil {
		return nil, err
	}
	return b.Node(p, tensor.OpSearchsorted, Attrs{K: BoolInt(right)}, a, v)
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
		n.Shape, n.DType = CloneInts(v.Shape), tensor.Int64
	default:
		n.Shape, n.DType = CloneInts(a.Shape), tensor.Bool
	}
	return nil
}
