package lang

import (
	"marsfs/tensor"
	"marsfs/tensor/spec"
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
func (b *builder) intIndex(e *syntax.IndexExpr, x, i *spec.Node, prior []value) (value, error) {
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
	return b.Take(e.Idx[at].At(), x, i, ax, "raise")
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
		if ax, err = spec.NormAxis(a, len(x.Shape), c.at(2)); err != nil {
			return nil, err
		}
	} else if x, err = c.b.Reshape(c.pos, x, []int{flatLen(x.Shape)}); err != nil {
		return nil, err
	}
	return c.b.Take(c.pos, x, i, ax, mode)
}

// multiIndex builds x[i, j, ...] for integer arrays and integers, one an
// axis from the first (NumPy's advanced indexing, the arrays broadcast
// against each other): each index is made an int64 in range by taking it
// from an arange of its axis (so that an index out of its axis fails with
// NumPy's message, not wrapping into the next row), and x, its indexed
// axes merged into one, is taken at the flat index Σ i_d · stride_d. It
// reports false when the index is not of that kind (slices among arrays).
func (b *builder) multiIndex(e *syntax.IndexExpr, x, cur *spec.Node, prior []value) (*spec.Node, bool, error) {
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
	idx := make([]*spec.Node, len(vals))
	for d, v := range vals {
		switch v := v.(type) {
		case syntax.PyNum:
			if v.IsFloat() || v.Dt == tensor.Bool {
				return nil, false, nil
			}
			idx[d] = b.Scalar(v)
		case *spec.Node:
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
	var flat *spec.Node
	stride := 1
	for d := k - 1; d >= 0; d-- {
		n := x.Shape[d]
		chunks, err := spec.DefaultChunksAt([]int{n}, p)
		if err != nil {
			return nil, true, err
		}
		ar, err := b.AddAt(p, &spec.Node{Op: tensor.OpArange, Shape: []int{n}, DType: tensor.Int64, Chunks: chunks, Attrs: spec.Attrs{Start: 0, Step: 1}})
		if err != nil {
			return nil, true, err
		}
		// The index along d, checked against its axis and made positive.
		i, err := b.Take(p, ar, idx[d], 0, "raise")
		if err != nil {
			return nil, true, err
		}
		if stride != 1 {
			if i, err = b.Node(p, tensor.OpMultiply, spec.Attrs{}, i, b.Scalar(syntax.PyInt(int64(stride)))); err != nil {
				return nil, true, err
			}
		}
		if flat == nil {
			flat = i
		} else if flat, err = b.Node(p, tensor.OpAdd, spec.Attrs{}, flat, i); err != nil {
			return nil, true, err
		}
		stride *= n
	}
	merged, err := b.Reshape(p, x, append([]int{stride}, x.Shape[k:]...))
	if err != nil {
		return nil, true, err
	}
	r, err := b.Take(p, merged, flat, 0, "raise")
	return r, true, err
}
