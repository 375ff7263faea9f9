package lang

import (
	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/syntax"
)

// Advanced indexing: an item of the subscript is an integer array or a
// boolean mask, beside integers, slices, one ellipsis and None. It lowers
// in three steps onto ops that exist:
//
//  1. the basic items (slices, integers, None, ...) are applied by
//     basicIndex, each array or mask standing for whole slices of its axes;
//  2. the advanced axes are transposed to the front and gathered: one mask
//     by OpMask, one integer array by OpTake, several by one OpTake at the
//     flat index Σ i_d · stride_d over the merged axes (a mask among them
//     counts as its nonzero() arrays);
//  3. NumPy's placement rule: when the advanced items (integers among
//     them) are adjacent in the subscript, the result's gathered axes go
//     back where the first of them was; otherwise they stay in front.

// advancedIndex is x[items] when an item is a tensor.
func (b *builder) advancedIndex(pos syntax.SrcPos, x *spec.Node, items []indexItem) (*spec.Node, error) {
	nd := len(x.Shape)
	consumed, ellipsis := 0, false
	for _, it := range items {
		switch v := it.v.(type) {
		case ellipsisValue:
			if ellipsis {
				return nil, syntax.Errorf(it.p, "an index can only have a single ellipsis ('...')")
			}
			ellipsis = true
		case noneValue:
		case sliceValue:
			consumed++
		case syntax.PyNum:
			if v.Dt != tensor.Int64 {
				return nil, syntax.Errorf(it.p, "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays are valid indices, not a %s", v.TypeName())
			}
			consumed++
		case *spec.Node:
			switch {
			case v.DType == tensor.Bool && len(v.Shape) == 0:
				return nil, syntax.Errorf(it.p, "a 0-d boolean index is not supported yet")
			case v.DType == tensor.Bool:
				consumed += len(v.Shape)
			case v.DType.IsInteger():
				consumed++
			default:
				return nil, syntax.Errorf(it.p, "arrays used as indices must be of integer (or boolean) type, not %s", v.DType)
			}
		default:
			return nil, syntax.Errorf(it.p, "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays are valid indices, not a %s", typeName(v))
		}
	}
	// The advanced items, integers among them, and whether they are one run.
	first, last, adjacent := -1, -1, true
	for k, it := range items {
		if !isAdvancedItem(it.v) {
			continue
		}
		if first < 0 {
			first = k
		}
		if last >= 0 && last != k-1 {
			adjacent = false
		}
		last = k
	}
	if consumed > nd {
		return nil, syntax.Errorf(items[first].p, "too many indices for array: array is %d-dimensional, but %d were indexed", nd, consumed)
	}
	whole := sliceValue{lo: noneValue{}, hi: noneValue{}, step: noneValue{}}
	var (
		basic []indexItem
		advs  []*spec.Node // the arrays and masks, in order
		at    []int        // the axis of the basic result each starts at
		lead  int          // the basic result's axes before the first advanced item
		ax2   int          // axes of the basic result so far
		ax    int          // axes of x so far
	)
	for k, it := range items {
		if k == first {
			lead = ax2
		}
		switch v := it.v.(type) {
		case *spec.Node:
			n := 1
			if v.DType == tensor.Bool {
				n = len(v.Shape)
				for d, l := range v.Shape {
					if xl := x.Shape[ax+d]; l != xl && l != tensor.Unknown && xl != tensor.Unknown {
						return nil, syntax.Errorf(it.p, "boolean index did not match indexed array along dimension %d; dimension is %d but corresponding boolean dimension is %d", ax+d, xl, l)
					}
				}
			}
			advs = append(advs, v)
			at = append(at, ax2)
			for range n {
				basic = append(basic, indexItem{whole, it.p})
			}
			ax2 += n
			ax += n
		case ellipsisValue:
			basic = append(basic, it)
			ax2 += nd - consumed
			ax += nd - consumed
		case noneValue:
			basic = append(basic, it)
			ax2++
		case sliceValue:
			basic = append(basic, it)
			ax2++
			ax++
		case syntax.PyNum:
			basic = append(basic, it)
			ax++
		}
	}
	p := items[first].p
	x2, err := b.basicIndex(pos, x, basic)
	if err != nil {
		return nil, err
	}
	// The advanced axes to the front, in the subscript's order.
	var perm []int
	front := make([]bool, len(x2.Shape))
	for j, a := range at {
		n := 1
		if advs[j].DType == tensor.Bool {
			n = len(advs[j].Shape)
		}
		for q := range n {
			perm = append(perm, a+q)
			front[a+q] = true
		}
	}
	nAdv := len(perm)
	for a := range x2.Shape {
		if !front[a] {
			perm = append(perm, a)
		}
	}
	x3, err := b.Transpose(p, x2, perm)
	if err != nil {
		return nil, err
	}
	var r *spec.Node
	switch {
	case len(advs) == 1 && advs[0].DType == tensor.Bool:
		r, err = b.Mask(p, x3, advs[0])
	case len(advs) == 1:
		r, err = b.Take(p, x3, advs[0], 0, "raise")
	default:
		var idx []*spec.Node
		for _, v := range advs {
			if v.DType != tensor.Bool {
				idx = append(idx, v)
				continue
			}
			nz, err := b.nonzero(p, v)
			if err != nil {
				return nil, err
			}
			for _, e := range nz.elts {
				idx = append(idx, e.(*spec.Node))
			}
		}
		r, err = b.gatherFlat(p, x3, idx)
	}
	if err != nil {
		return nil, err
	}
	if !adjacent || lead == 0 {
		return r, nil
	}
	// The gathered axes back where the first advanced item was.
	nb := len(r.Shape) - (len(x3.Shape) - nAdv)
	back := make([]int, 0, len(r.Shape))
	for a := nb; a < nb+lead; a++ {
		back = append(back, a)
	}
	for a := range nb {
		back = append(back, a)
	}
	for a := nb + lead; a < len(r.Shape); a++ {
		back = append(back, a)
	}
	return b.Transpose(p, r, back)
}

// isAdvancedItem reports whether a subscript item is an advanced index in
// NumPy's placement rule: an array, a mask, or an integer beside them.
func isAdvancedItem(v value) bool {
	switch v.(type) {
	case *spec.Node, syntax.PyNum:
		return true
	}
	return false
}

// gatherFlat is x[i_0, i_1, ..., i_{k-1}] over x's first k axes for
// integer arrays that broadcast together: each index is made an int64 in
// range by taking it from an arange of its axis (so that an index out of
// its axis fails with NumPy's message, not wrapping into the next row),
// and x, its indexed axes merged into one, is taken at the flat index
// Σ i_d · stride_d.
func (b *builder) gatherFlat(p syntax.SrcPos, x *spec.Node, idx []*spec.Node) (*spec.Node, error) {
	k := len(idx)
	if k > len(x.Shape) {
		return nil, syntax.Errorf(p, "too many indices for array: array is %d-dimensional, but %d were indexed", len(x.Shape), k)
	}
	if tensor.HasUnknown(x.Shape[:k]) {
		return nil, syntax.Errorf(p, "several index arrays into an array whose length depends on the data are not supported yet")
	}
	if err := broadcastIndices(p, idx); err != nil {
		return nil, err
	}
	var flat *spec.Node
	stride := 1
	for d := k - 1; d >= 0; d-- {
		n := x.Shape[d]
		chunks, err := spec.DefaultChunksAt([]int{n}, p)
		if err != nil {
			return nil, err
		}
		ar, err := b.AddAt(p, &spec.Node{Op: tensor.OpArange, Shape: []int{n}, DType: tensor.Int64, Chunks: chunks, Attrs: spec.Attrs{Start: 0, Step: 1}})
		if err != nil {
			return nil, err
		}
		// The index along d, checked against its axis and made positive.
		i, err := b.Take(p, ar, idx[d], 0, "raise")
		if err != nil {
			return nil, err
		}
		if stride != 1 {
			if i, err = b.Node(p, tensor.OpMultiply, spec.Attrs{}, i, b.Scalar(syntax.PyInt(int64(stride)))); err != nil {
				return nil, err
			}
		}
		if flat == nil {
			flat = i
		} else if flat, err = b.Node(p, tensor.OpAdd, spec.Attrs{}, flat, i); err != nil {
			return nil, err
		}
		stride *= n
	}
	merged, err := b.Reshape(p, x, append([]int{stride}, x.Shape[k:]...))
	if err != nil {
		return nil, err
	}
	return b.Take(p, merged, flat, 0, "raise")
}

// broadcastIndices refuses index arrays that do not broadcast together,
// with NumPy's message (lengths the data decides are checked when known).
func broadcastIndices(p syntax.SrcPos, idx []*spec.Node) error {
	nd := 0
	for _, i := range idx {
		nd = max(nd, len(i.Shape))
	}
	for d := 1; d <= nd; d++ {
		l := 1
		for _, i := range idx {
			if d > len(i.Shape) {
				continue
			}
			switch n := i.Shape[len(i.Shape)-d]; {
			case n == 1 || n == l || n == tensor.Unknown:
			case l == 1 || l == tensor.Unknown:
				l = n
			default:
				msg := "shape mismatch: indexing arrays could not be broadcast together with shapes"
				for _, j := range idx {
					msg += " " + spec.ShapeString(j.Shape)
				}
				return syntax.Errorf(p, "%s", msg)
			}
		}
	}
	return nil
}
