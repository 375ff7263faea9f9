package spec

import (
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// Boolean masks and the functions NumPy builds on them. x[m] is one
// OpMask node, whose length the data decides (tiled in two stages, see
// tile/mask.go); nonzero, flatnonzero, argwhere, one-argument where,
// compress and extract are masks of index grids (aranges broadcast to the
// mask's shape) or of the raveled array, and nanmedian and nanpercentile
// of the flattened array are percentiles of the numbers a mask keeps.

func registerMasks(l *library) {
	l.register("nonzero", []string{"a"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		return c.b.nonzero(c.pos, x)
	})
	l.registerMethod("nonzero", []string{"a"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		return c.b.nonzero(c.pos, x)
	})
	l.register("flatnonzero", []string{"a"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		flat, err := c.b.reshape(c.pos, x, []int{flatLen(x.Shape)})
		if err != nil {
			return nil, err
		}
		v, err := c.b.nonzero(c.pos, flat)
		if err != nil {
			return nil, err
		}
		return v.elts[0], nil
	})
	l.register("argwhere", []string{"a"}, argwhere)
	l.register("compress", []string{"condition", "a", "axis", "out"}, compress)
	l.register("extract", []string{"condition", "arr"}, extract)
	for _, name := range []string{"nanpercentile", "nanquantile"} {
		l.register(name, []string{"a", "q", "axis", "out", "overwrite_input", "method", "keepdims", "interpolation"}, nanPercentile)
	}
	l.register("nanmedian", []string{"a", "axis", "out", "overwrite_input", "keepdims"}, nanPercentile)
}

// maskIndex builds x[m] for the bool tensor m, the index's item at
// position at: the other items must be whole slices (x[m, :], x[:, m]) or
// an ellipsis (x[..., m]). A mask on later axes is a mask of x with those
// axes moved first, its result's axis moved back.
func (b *builder) maskIndex(e *syntax.IndexExpr, x, m *Node, at int) (value, error) {
	ax, err := advancedAxis(e, at, len(x.Shape), len(m.Shape), "a boolean mask")
	if err != nil {
		return nil, err
	}
	p := e.Idx[at].At()
	if ax == 0 {
		return b.mask(p, x, m)
	}
	k, nd := len(m.Shape), len(x.Shape)
	if ax+k > nd {
		return nil, syntax.Errorf(p, "too many indices for array: array is %d-dimensional, but %d were indexed", nd, ax+k)
	}
	var perm []int
	for a := ax; a < ax+k; a++ {
		perm = append(perm, a)
	}
	for a := range nd {
		if a < ax || a >= ax+k {
			perm = append(perm, a)
		}
	}
	x, err = b.transpose(p, x, perm)
	if err != nil {
		return nil, err
	}
	r, err := b.mask(p, x, m)
	if err != nil {
		return nil, err
	}
	back := []int{}
	for a := 1; a <= ax; a++ {
		back = append(back, a)
	}
	back = append(back, 0)
	for a := ax + 1; a < len(r.Shape); a++ {
		back = append(back, a)
	}
	return b.transpose(p, r, back)
}

// advancedAxis returns the axis an array index (a mask of k axes, or an
// integer array, k = 1) at item position at applies to, when the other
// items select everything: whole slices, or one ellipsis.
func advancedAxis(e *syntax.IndexExpr, at, nd, k int, what string) (int, error) {
	ax, ellipsis := 0, false
	for j, ie := range e.Idx {
		if j == at {
			continue
		}
		if c, ok := ie.(*syntax.ConstExpr); ok && c.Tok == "..." {
			if j < at {
				ellipsis = true
			}
			continue
		}
		s, ok := ie.(*syntax.SliceExpr)
		if !ok || s.Lo != nil || s.Hi != nil || s.Step != nil {
			return 0, syntax.Errorf(ie.At(), "%s with other indices than whole slices (:) is not supported", what)
		}
		if j < at {
			ax++
		}
	}
	if ellipsis {
		// The items after the array index count from the end.
		after := 0
		for j := at + 1; j < len(e.Idx); j++ {
			if _, ok := e.Idx[j].(*syntax.SliceExpr); ok {
				after++
			}
		}
		ax = nd - k - after
		if ax < 0 {
			return 0, syntax.Errorf(e.Idx[at].At(), "too many indices for array: array is %d-dimensional, but %d were indexed", nd, k+after)
		}
	}
	return ax, nil
}

// mask is x[m].
func (b *builder) mask(p syntax.SrcPos, x, m *Node) (*Node, error) {
	return b.node(p, tensor.OpMask, Attrs{}, x, m)
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

// truth is x != 0 as a bool array (x itself when bool).
func (b *builder) truth(p syntax.SrcPos, x *Node) (*Node, error) {
	return b.astype(p, x, tensor.Bool)
}

// indexAlong is the int64 index along axis ax of an array of shape,
// broadcast to that shape.
func (b *builder) indexAlong(p syntax.SrcPos, shape []int, ax int) (*Node, error) {
	chunks, err := defaultChunksAt([]int{shape[ax]}, p)
	if err != nil {
		return nil, err
	}
	a, err := b.addAt(p, &Node{Op: tensor.OpArange, Shape: []int{shape[ax]}, DType: tensor.Int64, Chunks: chunks, Attrs: Attrs{Start: 0, Step: 1}})
	if err != nil {
		return nil, err
	}
	in := make([]int, len(shape))
	for i := range in {
		in[i] = 1
	}
	in[ax] = shape[ax]
	if a, err = b.reshape(p, a, in); err != nil {
		return nil, err
	}
	return b.broadcastTo(p, a, shape)
}

// nonzero is a tuple of the indices of x's nonzero elements along each
// axis: each the mask of that axis' index grid. A 0-d x is refused, as
// NumPy 1.24 deprecates it.
func (b *builder) nonzero(p syntax.SrcPos, x *Node) (seqValue, error) {
	if tensor.HasUnknown(x.Shape) {
		return seqValue{}, syntax.Errorf(p, "nonzero of an array of shape %s: its length depends on the data", ShapeString(x.Shape))
	}
	if len(x.Shape) == 0 {
		return seqValue{}, syntax.Errorf(p, "nonzero of a 0-d array is not supported (NumPy deprecates it): use atleast_1d")
	}
	m, err := b.truth(p, x)
	if err != nil {
		return seqValue{}, err
	}
	var s seqValue
	for ax := range x.Shape {
		idx, err := b.indexAlong(p, x.Shape, ax)
		if err != nil {
			return seqValue{}, err
		}
		v, err := b.mask(p, idx, m)
		if err != nil {
			return seqValue{}, err
		}
		s.elts = append(s.elts, v)
		s.pos = append(s.pos, p)
	}
	return s, nil
}

// argwhere is the (count, ndim) matrix of the indices of x's nonzero
// elements: a row mask of the matrix of every element's index.
func argwhere(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.known(x); err != nil {
		return nil, err
	}
	b, p := c.b, c.pos
	if len(x.Shape) == 0 {
		return nil, c.errorf(0, "argwhere of a 0-d array is not supported")
	}
	n := flatLen(x.Shape)
	cols := make([]*Node, len(x.Shape))
	for ax := range x.Shape {
		idx, err := b.indexAlong(p, x.Shape, ax)
		if err != nil {
			return nil, err
		}
		if cols[ax], err = b.reshape(p, idx, []int{n, 1}); err != nil {
			return nil, err
		}
	}
	grid, err := b.concat(p, cols, 1)
	if err != nil {
		return nil, err
	}
	m, err := b.truth(p, x)
	if err != nil {
		return nil, err
	}
	if m, err = b.reshape(p, m, []int{n}); err != nil {
		return nil, err
	}
	return b.mask(p, grid, m)
}

// compress keeps the slices of a along axis (of the raveled a for None)
// where condition, 1-D, is true; a shorter condition drops the rest of
// the axis, as NumPy's does.
func compress(c *call) (value, error) {
	cond, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	x, err := c.tensor(1)
	if err != nil {
		return nil, err
	}
	if err := c.noOut(); err != nil {
		return nil, err
	}
	for _, t := range []*Node{cond, x} {
		if err := c.known(t); err != nil {
			return nil, err
		}
	}
	if len(cond.Shape) != 1 {
		return nil, c.errorf(0, "condition must be a 1-d array")
	}
	b, p := c.b, c.pos
	ax := 0
	if c.has(2) {
		a, err := c.int(2, 0)
		if err != nil {
			return nil, err
		}
		if ax, err = normAxis(a, len(x.Shape), c.at(2)); err != nil {
			return nil, err
		}
	} else if x, err = b.reshape(p, x, []int{flatLen(x.Shape)}); err != nil {
		return nil, err
	}
	l := cond.Shape[0]
	if l > x.Shape[ax] {
		return nil, c.errorf(0, "compress(): a condition longer than the axis (%d > %d) is not supported", l, x.Shape[ax])
	}
	if x, err = b.sliceAxis(p, x, ax, tensor.Slice{Start: 0, Step: 1, Len: l}); err != nil {
		return nil, err
	}
	m, err := b.truth(p, cond)
	if err != nil {
		return nil, err
	}
	perm := []int{ax}
	for i := range x.Shape {
		if i != ax {
			perm = append(perm, i)
		}
	}
	if x, err = b.transpose(p, x, perm); err != nil {
		return nil, err
	}
	r, err := b.mask(p, x, m)
	if err != nil {
		return nil, err
	}
	inv := make([]int, len(perm))
	for i, a := range perm {
		inv[a] = i
	}
	return b.transpose(p, r, inv)
}

// extract is the raveled arr where the raveled condition is nonzero.
func extract(c *call) (value, error) {
	cond, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	x, err := c.tensor(1)
	if err != nil {
		return nil, err
	}
	for _, t := range []*Node{cond, x} {
		if err := c.known(t); err != nil {
			return nil, err
		}
	}
	b, p := c.b, c.pos
	n := flatLen(x.Shape)
	if flatLen(cond.Shape) != n {
		return nil, c.errorf(0, "extract(): condition has %d elements, arr %d: they must have as many", flatLen(cond.Shape), n)
	}
	if x, err = b.reshape(p, x, []int{n}); err != nil {
		return nil, err
	}
	m, err := b.truth(p, cond)
	if err != nil {
		return nil, err
	}
	if m, err = b.reshape(p, m, []int{n}); err != nil {
		return nil, err
	}
	return b.mask(p, x, m)
}

// nanPercentile is nanmedian, nanpercentile and nanquantile. Of the
// flattened array it is the percentile of the numbers isnan leaves, a
// mask whose count the data decides. Along an axis the rows keep
// different counts, which one mask cannot express: there the percentile
// op skips the NaNs itself (Attrs.SkipNaN), each row's op reading the
// whole sorted row. Integers have no NaN: theirs is the plain one.
func nanPercentile(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	plain := map[string]string{"nanmedian": "median", "nanpercentile": "percentile", "nanquantile": "quantile"}[c.name]
	if c.has(c.param("axis")) {
		return buildPercentile(c)
	}
	if x.DType.IsFloat() {
		if err := c.known(x); err != nil {
			return nil, err
		}
		n := flatLen(x.Shape)
		if x, err = c.b.reshape(c.pos, x, []int{n}); err != nil {
			return nil, err
		}
		nan, err := c.b.node(c.pos, tensor.OpIsnan, Attrs{}, x)
		if err != nil {
			return nil, err
		}
		keep, err := c.b.node(c.pos, tensor.OpLogicalNot, Attrs{}, nan)
		if err != nil {
			return nil, err
		}
		if x, err = c.b.mask(c.pos, x, keep); err != nil {
			return nil, err
		}
		c.args[0].v = x
	}
	c.name = plain
	return buildPercentile(c)
}

// reduceMask rewrites a reduction of a mask's result over all its axes,
// or over its first when the mask is 1-D, onto the masked array itself:
// x[m].sum() is where(m, x, 0).sum(), one fused pass over x with no stage
// whose length the data decides (the mask node is then left unread and
// pruned). sum, nansum and prod fill with their identity; count_nonzero,
// any and all reduce m & (x != 0) or ~m | (x != 0); mean is the sum over
// the count, cast to mean's dtype as NumPy's does. Other reductions
// (max, min, var, ...) and other axes keep the mask. The sums' order
// differs from NumPy's over the compressed array: float results agree to
// rounding.
func (b *builder) reduceMask(p syntax.SrcPos, op string, x *Node, attrs Attrs) (*Node, bool, error) {
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
	mshape := cloneInts(m.Shape)
	for range len(src.Shape) - k {
		mshape = append(mshape, 1)
	}
	mb, err := b.reshape(p, m, mshape)
	if err != nil {
		return nil, true, err
	}
	full := func(v int64) (*Node, error) { return b.constant(p, syntax.PyInt(v), src.DType) }
	var r *Node
	switch op {
	case tensor.OpMax, tensor.OpMin:
		// The values of m, the others the reduction's worst; an empty
		// mask fails as NumPy's reduction without identity does.
		fill, err := b.extremeFill(p, src.DType, op == tensor.OpMax)
		if err != nil {
			return nil, true, err
		}
		w, err := b.node(p, tensor.OpWhere, Attrs{}, mb, src, fill)
		if err != nil {
			return nil, true, err
		}
		if r, err = b.node(p, op, Attrs{}, w); err != nil {
			return nil, true, err
		}
		tm, err := b.twin(p, m)
		if err != nil {
			return nil, true, err
		}
		cnt, err := b.node(p, tensor.OpCountNonzero, Attrs{}, tm)
		if err != nil {
			return nil, true, err
		}
		name := map[string]string{tensor.OpMax: "maximum", tensor.OpMin: "minimum"}[op]
		r, err = b.node(p, tensor.OpNonEmpty, Attrs{Name: name}, r, cnt)
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
		w, err := b.node(p, tensor.OpWhere, Attrs{}, mb, src, fill)
		if err != nil {
			return nil, true, err
		}
		red := op
		if op == tensor.OpMean {
			red = tensor.OpSum
		}
		if r, err = b.node(p, red, Attrs{}, w); err != nil || op != tensor.OpMean {
			return r, true, err
		}
		// mean: the sum over the count of the selected elements.
		tm, err := b.twin(p, m)
		if err != nil {
			return nil, true, err
		}
		cnt, err := b.node(p, tensor.OpCountNonzero, Attrs{}, tm)
		if err != nil {
			return nil, true, err
		}
		if per := tensor.NumElements(src.Shape[k:]); per != 1 {
			if cnt, err = b.node(p, tensor.OpMultiply, Attrs{}, cnt, b.scalar(syntax.PyInt(int64(per)))); err != nil {
				return nil, true, err
			}
		}
		if r, err = b.node(p, tensor.OpDivide, Attrs{}, r, cnt); err != nil {
			return nil, true, err
		}
		r, err = b.astype(p, r, reduceType(tensor.OpMean, src.DType))
		return r, true, err
	default:
		nz, err := b.truth(p, src)
		if err != nil {
			return nil, true, err
		}
		var v *Node
		if op == tensor.OpAll {
			not, err := b.node(p, tensor.OpLogicalNot, Attrs{}, mb)
			if err != nil {
				return nil, true, err
			}
			v, err = b.node(p, tensor.OpLogicalOr, Attrs{}, not, nz)
			if err != nil {
				return nil, true, err
			}
		} else if v, err = b.node(p, tensor.OpLogicalAnd, Attrs{}, mb, nz); err != nil {
			return nil, true, err
		}
		r, err = b.node(p, op, Attrs{}, v)
		return r, true, err
	}
}

// extremeFill is the 0-d array of dt that max (low) or min (not low)
// passes over: -inf or +inf, the integers' bounds, false or true.
func (b *builder) extremeFill(p syntax.SrcPos, dt tensor.DType, low bool) (*Node, error) {
	switch {
	case dt.IsFloat():
		v := posInf
		if low {
			v = -posInf
		}
		return b.constant(p, syntax.PyFloat(v), dt)
	case dt == tensor.Bool:
		return b.constant(p, syntax.PyInt(int64(boolInt(!low))), dt)
	}
	lo, hi := dt.IntRange()
	if low {
		return b.constant(p, syntax.PyInt(lo), dt)
	}
	return b.constant(p, syntax.PyInt(hi), dt)
}

// twin returns a copy of mask m for a second reduction of it (the count
// that max, min and mean of a mask take besides the masked values): when m
// is one elementwise op of other nodes (x > 0.5, isnan(x)), it is made
// again over the same inputs, so that each reduction fuses it into its own
// pass over them (a drawn x is drawn again in each: three readers) and no
// chunk of the mask, read by two, is stored. A mask of several ops, e.g.
// (x > a) & (x < b), stays shared: a copy would make x's readers too many
// to draw it again in each (fuse's maxRedraws), and x, eight times the
// mask's bytes, would be stored instead.
func (b *builder) twin(p syntax.SrcPos, m *Node) (*Node, error) {
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
	return b.addAt(p, &c)
}
