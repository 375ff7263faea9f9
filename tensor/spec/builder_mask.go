package spec

import (
	"fmt"
	"math"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// Mask is x[m].
func (b *Builder) Mask(p syntax.SrcPos, x, m *Node) (*Node, error) {
	return b.Node(p, tensor.OpMask, Attrs{}, x, m)
}

// inferMask checks that m is a bool array indexing the first axes of x.
func inferMask(n *Node) error {
	x, m := n.Inputs[0], n.Inputs[1]
	if m.DType != tensor.Bool {
		return fmt.Errorf("a mask must be bool, not %s", m.DType)
	}
	k := len(m.Shape)
	if k == 0 {
		return fmt.Errorf("a 0-d boolean index is not supported")
	}
	if k > len(x.Shape) {
		return fmt.Errorf("too many indices for array: array is %d-dimensional, but %d were indexed", len(x.Shape), k)
	}
	for ax, d := range m.Shape {
		if xd := x.Shape[ax]; d != xd && d != tensor.Unknown && xd != tensor.Unknown {
			return fmt.Errorf("boolean index did not match indexed array along dimension %d; dimension is %d but corresponding boolean dimension is %d", ax, xd, d)
		}
	}
	n.Shape = append([]int{tensor.Unknown}, x.Shape[k:]...)
	n.DType = x.DType
	return nil
}

// Truth is x != 0 as a bool array (x itself when bool).
func (b *Builder) Truth(p syntax.SrcPos, x *Node) (*Node, error) {
	return b.Astype(p, x, tensor.Bool)
}

// IndexAlong is the int64 index along axis ax of an array of shape,
// broadcast to that shape.
func (b *Builder) IndexAlong(p syntax.SrcPos, shape []int, ax int) (*Node, error) {
	chunks, err := DefaultChunksAt([]int{shape[ax]}, p)
	if err != nil {
		return nil, err
	}
	a, err := b.AddAt(p, &Node{Op: tensor.OpArange, Shape: []int{shape[ax]}, DType: tensor.Int64, Chunks: chunks, Attrs: Attrs{Start: 0, Step: 1}})
	if err != nil {
		return nil, err
	}
	in := make([]int, len(shape))
	for i := range in {
		in[i] = 1
	}
	in[ax] = shape[ax]
	if a, err = b.Reshape(p, a, in); err != nil {
		return nil, err
	}
	return b.BroadcastTo(p, a, shape)
}

// ReduceMask rewrites a reduction of a mask's result over all its axes,
// or over its first when the mask is 1-D, onto the masked array itself:
// x[m].sum() is where(m, x, 0).sum(), one fused pass over x with no stage
// whose length the data decides (the mask node is then left unread and
// pruned). sum, nansum and prod fill with their identity; count_nonzero,
// any and all reduce m & (x != 0) or ~m | (x != 0); mean is the sum over
// the count, cast to mean's dtype as NumPy's does. Other reductions
// (max, min, var, ...) and other axes keep the mask. The sums' order
// differs from NumPy's over the compressed array: float results agree to
// rounding.
func (b *Builder) ReduceMask(p syntax.SrcPos, op string, x *Node, attrs Attrs) (*Node, bool, error) {
	if x.Op != tensor.OpMask || attrs.Keepdims {
		return nil, false, nil
	}
	src, m := x.Inputs[0], x.Inputs[1]
	k := len(m.Shape)
	all := attrs.Axes == nil || len(x.Shape) == 1 && len(attrs.Axes) == 1 && attrs.Axes[0] == 0
	if !all || tensor.HasUnknown(src.Shape) {
		return nil, false, nil
	}
	switch op {
	case tensor.OpSum, tensor.OpNansum, tensor.OpProd, tensor.OpMean, tensor.OpCountNonzero, tensor.OpAny, tensor.OpAll:
	case tensor.OpMax, tensor.OpMin:
		if src.DType == tensor.Uint64 && op == tensor.OpMin {
			return nil, false, nil // its fill, 2⁶⁴-1, is no Python int here
		}
	default:
		return nil, false, nil
	}
	// m broadcast against x: its axes first, ones for the others.
	mshape := CloneInts(m.Shape)
	for range len(src.Shape) - k {
		mshape = append(mshape, 1)
	}
	mb, err := b.Reshape(p, m, mshape)
	if err != nil {
		return nil, true, err
	}
	full := func(v int64) (*Node, error) { return b.Constant(p, syntax.PyInt(v), src.DType) }
	var r *Node
	switch op {
	case tensor.OpMax, tensor.OpMin:
		// The values of m, the others the reduction's worst; an empty
		// mask fails as NumPy's reduction without identity does.
		fill, err := b.ExtremeFill(p, src.DType, op == tensor.OpMax)
		if err != nil {
			return nil, true, err
		}
		w, err := b.Node(p, tensor.OpWhere, Attrs{}, mb, src, fill)
		if err != nil {
			return nil, true, err
		}
		if r, err = b.Node(p, op, Attrs{}, w); err != nil {
			return nil, true, err
		}
		tm, err := b.Twin(p, m)
		if err != nil {
			return nil, true, err
		}
		cnt, err := b.Node(p, tensor.OpCountNonzero, Attrs{}, tm)
		if err != nil {
			return nil, true, err
		}
		name := map[string]string{tensor.OpMax: "maximum", tensor.OpMin: "minimum"}[op]
		r, err = b.Node(p, tensor.OpNonEmpty, Attrs{Name: name}, r, cnt)
		return r, true, err
	case tensor.OpSum, tensor.OpNansum, tensor.OpProd, tensor.OpMean:
		id := int64(0)
		if op == tensor.OpProd {
			id = 1
		}
		fill, err := full(id)
		if err != nil {
			return nil, true, err
		}
		w, err := b.Node(p, tensor.OpWhere, Attrs{}, mb, src, fill)
		if err != nil {
			return nil, true, err
		}
		red := op
		if op == tensor.OpMean {
			red = tensor.OpSum
		}
		if r, err = b.Node(p, red, Attrs{}, w); err != nil || op != tensor.OpMean {
			return r, true, err
		}
		// mean: the sum over the count of the selected elements.
		tm, err := b.Twin(p, m)
		if err != nil {
			return nil, true, err
		}
		cnt, err := b.Node(p, tensor.OpCountNonzero, Attrs{}, tm)
		if err != nil {
			return nil, true, err
		}
		if per := tensor.NumElements(src.Shape[k:]); per != 1 {
			if cnt, err = b.Node(p, tensor.OpMultiply, Attrs{}, cnt, b.Scalar(syntax.PyInt(int64(per)))); err != nil {
				return nil, true, err
			}
		}
		if r, err = b.Node(p, tensor.OpDivide, Attrs{}, r, cnt); err != nil {
			return nil, true, err
		}
		r, err = b.Astype(p, r, ReduceType(tensor.OpMean, src.DType))
		return r, true, err
	default:
		nz, err := b.Truth(p, src)
		if err != nil {
			return nil, true, err
		}
		var v *Node
		if op == tensor.OpAll {
			not, err := b.Node(p, tensor.OpLogicalNot, Attrs{}, mb)
			if err != nil {
				return nil, true, err
			}
			v, err = b.Node(p, tensor.OpLogicalOr, Attrs{}, not, nz)
			if err != nil {
				return nil, true, err
			}
		} else if v, err = b.Node(p, tensor.OpLogicalAnd, Attrs{}, mb, nz); err != nil {
			return nil, true, err
		}
		r, err = b.Node(p, op, Attrs{}, v)
		return r, true, err
	}
}

// ExtremeFill is the 0-d array of dt that max (low) or min (not low)
// passes over: -inf or +inf, the integers' bounds, false or true.
func (b *Builder) ExtremeFill(p syntax.SrcPos, dt tensor.DType, low bool) (*Node, error) {
	switch {
	case dt.IsFloat():
		v := math.Inf(1)
		if low {
			v = -math.Inf(1)
		}
		return b.Constant(p, syntax.PyFloat(v), dt)
	case dt == tensor.Bool:
		return b.Constant(p, syntax.PyInt(int64(BoolInt(!low))), dt)
	}
	lo, hi := dt.IntRange()
	if low {
		return b.Constant(p, syntax.PyInt(lo), dt)
	}
	return b.Constant(p, syntax.PyInt(hi), dt)
}

// Twin returns a copy of mask m for a second reduction of it (the count
// that max, min and mean of a mask take besides the masked values): when m
// is one elementwise op of other nodes (x > 0.5, isnan(x)), it is made
// again over the same inputs, so that each reduction fuses it into its own
// pass over them (a drawn x is drawn again in each: three readers) and no
// chunk of the mask, read by two, is stored. A mask of several ops, e.g.
// (x > a) & (x < b), stays shared: a copy would make x's readers too many
// to draw it again in each (fuse's maxRedraws), and x, eight times the
// mask's bytes, would be stored instead.
func (b *Builder) Twin(p syntax.SrcPos, m *Node) (*Node, error) {
	if !tensor.ElemKinds[m.Op] {
		return m, nil
	}
	for _, in := range m.Inputs {
		if tensor.ElemKinds[in.Op] {
			return m, nil
		}
	}
	c := *m
	c.Inputs = slices.Clone(m.Inputs)
	return b.AddAt(p, &c)
}
