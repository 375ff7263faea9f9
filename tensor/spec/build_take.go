package spec

import (
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// Integer-array indexing: x[i] (i an integer tensor, the other indices
// whole slices) and take(a, indices, axis=, mode=). Both make one OpTake
// along the first axis of x (others transposed there and back), its
// indices int64: negative ones count from the end and any out of range
// fails the graph with NumPy's IndexError (mode 'raise', in the kernels,
// which know the length even when the spec does not: v[inverse] of
// unique's values), or are wrapped or clipped first (modes 'wrap',
// 'clip', which need the length in the spec).

func registerTake(l *library) {
	l.register("take", []string{"a", "indices", "axis", "out", "mode"}, takeFn)
	l.registerMethod("take", []string{"a", "indices", "axis", "out", "mode"}, takeFn)
}

// intIndex builds x[i] for the integer tensor i, the index's item after
// the values prior, the others whole slices or an ellipsis (x[:, i] is
// take along axis 1), or all integers and integer arrays (multiIndex).
func (b *builder) intIndex(e *syntax.IndexExpr, x, i *Node, prior []value) (value, error) {
	at := len(prior)
	ax, err := advancedAxis(e, at, len(x.Shape), 1, "an integer array")
	if err != nil {
		if r, ok, merr := b.multiIndex(e, x, i, prior); ok {
			return r, merr
		}
		return nil, err
	}
	if ax >= len(x.Shape) {
		return nil, syntax.Errorf(e.Idx[at].At(), "too many indices for array: array is %d-dimensional, but %d were indexed", len(x.Shape), ax+1)
	}
	return b.take(e.Idx[at].At(), x, i, ax, "raise")
}

func takeFn(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if !c.has(1) {
		return nil, c.missing(1)
	}
	i, err := c.tensor(1)
	if err != nil {
		return nil, err
	}
	if err := c.noOut(); err != nil {
		return nil, err
	}
	mode, err := c.str(4)
	if err != nil {
		return nil, err
	}
	switch mode {
	case "":
		mode = "raise"
	case "raise", "wrap", "clip":
	default:
		return nil, c.errorf(4, "clipmode must be one of 'clip', 'raise', or 'wrap' (got '%s')", mode)
	}
	ax := 0
	if c.has(2) {
		a, err := c.int(2, 0)
		if err != nil {
			return nil, err
		}
		if ax, err = normAxis(a, len(x.Shape), c.at(2)); err != nil {
			return nil, err
		}
	} else if x, err = c.b.reshape(c.pos, x, []int{flatLen(x.Shape)}); err != nil {
		return nil, err
	}
	return c.b.take(c.pos, x, i, ax, mode)
}

// take is x's slices along ax named by the integer tensor i.
func (b *builder) take(p syntax.SrcPos, x, i *Node, ax int, mode string) (*Node, error) {
	if !i.DType.IsInteger() {
		return nil, syntax.Errorf(p, "arrays used as indices must be of integer (or boolean) type, not %s", i.DType)
	}
	n := x.Shape[ax]
	if n == tensor.Unknown && mode != "raise" {
		return nil, syntax.Errorf(p, "take(mode='%s') from an array of shape %s, whose length depends on the data, is not supported yet", mode, ShapeString(x.Shape))
	}
	idx, err := b.astype(p, i, tensor.Int64)
	if err != nil {
		return nil, err
	}
	switch {
	case mode == "wrap" && n > 0:
		idx, err = b.node(p, tensor.OpMod, Attrs{}, idx, b.scalar(syntax.PyInt(int64(n))))
	case mode == "clip":
		if n == 0 {
			return nil, syntax.Errorf(p, "cannot do a non-empty take from an empty axes.")
		}
		if idx, err = b.node(p, tensor.OpMaximum, Attrs{}, idx, b.scalar(syntax.PyInt(0))); err == nil {
			idx, err = b.node(p, tensor.OpMinimum, Attrs{}, idx, b.scalar(syntax.PyInt(int64(n-1))))
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
	if x, err = b.transpose(p, x, perm); err != nil {
		return nil, err
	}
	r, err := b.node(p, tensor.OpTake, Attrs{}, x, idx)
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
	return b.transpose(p, r, back)
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
	n.Shape = append(cloneInts(i.Shape), x.Shape[1:]...)
	n.DType = x.DType
	return nil
}

// multiIndex builds x[i, j, ...] for integer arrays and integers, one an
// axis from the first (NumPy's advanced indexing, the arrays broadcast
// against each other): each index is made an int64 in range by taking it
// from an arange of its axis (so that an index out of its axis fails with
// NumPy's message, not wrapping into the next row), and x, its indexed
// axes merged into one, is taken at the flat index Σ i_d · stride_d. It
// reports false when the index is not of that kind (slices among arrays).
func (b *builder) multiIndex(e *syntax.IndexExpr, x, cur *Node, prior []value) (*Node, bool, error) {
	vals := append(append([]value(nil), prior...), cur)
	for _, ie := range e.Idx[len(prior)+1:] {
		if _, ok := ie.(*syntax.SliceExpr); ok {
			return nil, false, nil
		}
		v, err := b.eval(ie)
		if err != nil {
			return nil, true, err
		}
		vals = append(vals, v)
	}
	p := e.Idx[len(prior)].At()
	idx := make([]*Node, len(vals))
	for d, v := range vals {
		switch v := v.(type) {
		case syntax.PyNum:
			if v.IsFloat() || v.Dt == tensor.Bool {
				return nil, false, nil
			}
			idx[d] = b.scalar(v)
		case *Node:
			if !v.DType.IsInteger() {
				return nil, false, nil
			}
			idx[d] = v
		case seqValue:
			a, err := b.arrayLiteral(e.Idx[d].At(), v, -1, nil)
			if err != nil || !a.DType.IsInteger() {
				return nil, false, nil
			}
			idx[d] = a
		default:
			return nil, false, nil
		}
	}
	k := len(idx)
	if k > len(x.Shape) {
		return nil, true, syntax.Errorf(p, "too many indices for array: array is %d-dimensional, but %d were indexed", len(x.Shape), k)
	}
	if tensor.HasUnknown(x.Shape[:k]) {
		return nil, true, syntax.Errorf(p, "several index arrays into an array whose length depends on the data are not supported yet")
	}
	var flat *Node
	stride := 1
	for d := k - 1; d >= 0; d-- {
		n := x.Shape[d]
		chunks, err := defaultChunksAt([]int{n}, p)
		if err != nil {
			return nil, true, err
		}
		ar, err := b.addAt(p, &Node{Op: tensor.OpArange, Shape: []int{n}, DType: tensor.Int64, Chunks: chunks, Attrs: Attrs{Start: 0, Step: 1}})
		if err != nil {
			return nil, true, err
		}
		// The index along d, checked against its axis and made positive.
		i, err := b.take(p, ar, idx[d], 0, "raise")
		if err != nil {
			return nil, true, err
		}
		if stride != 1 {
			if i, err = b.node(p, tensor.OpMultiply, Attrs{}, i, b.scalar(syntax.PyInt(int64(stride)))); err != nil {
				return nil, true, err
			}
		}
		if flat == nil {
			flat = i
		} else if flat, err = b.node(p, tensor.OpAdd, Attrs{}, flat, i); err != nil {
			return nil, true, err
		}
		stride *= n
	}
	merged, err := b.reshape(p, x, append([]int{stride}, x.Shape[k:]...))
	if err != nil {
		return nil, true, err
	}
	r, err := b.take(p, merged, flat, 0, "raise")
	return r, true, err
}
