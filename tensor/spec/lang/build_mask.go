package lang

import (
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/spec"
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
		flat, err := c.b.Reshape(c.pos, x, []int{flatLen(x.Shape)})
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

// nonzero is a tuple of the indices of x's nonzero elements along each
// axis: each the mask of that axis' index grid. A 0-d x is refused, as
// NumPy 1.24 deprecates it.
func (b *builder) nonzero(p syntax.SrcPos, x *spec.Node) (seqValue, error) {
	if tensor.HasUnknown(x.Shape) {
		return seqValue{}, syntax.Errorf(p, "nonzero of an array of shape %s: its length depends on the data", spec.ShapeString(x.Shape))
	}
	if len(x.Shape) == 0 {
		return seqValue{}, syntax.Errorf(p, "nonzero of a 0-d array is not supported (NumPy deprecates it): use atleast_1d")
	}
	m, err := b.Truth(p, x)
	if err != nil {
		return seqValue{}, err
	}
	var s seqValue
	for ax := range x.Shape {
		idx, err := b.IndexAlong(p, x.Shape, ax)
		if err != nil {
			return seqValue{}, err
		}
		v, err := b.Mask(p, idx, m)
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
	cols := make([]*spec.Node, len(x.Shape))
	for ax := range x.Shape {
		idx, err := b.IndexAlong(p, x.Shape, ax)
		if err != nil {
			return nil, err
		}
		if cols[ax], err = b.Reshape(p, idx, []int{n, 1}); err != nil {
			return nil, err
		}
	}
	grid, err := b.Concat(p, cols, 1)
	if err != nil {
		return nil, err
	}
	m, err := b.Truth(p, x)
	if err != nil {
		return nil, err
	}
	if m, err = b.Reshape(p, m, []int{n}); err != nil {
		return nil, err
	}
	return b.Mask(p, grid, m)
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
	for _, t := range []*spec.Node{cond, x} {
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
		if ax, err = spec.NormAxis(a, len(x.Shape), c.at(2)); err != nil {
			return nil, err
		}
	} else if x, err = b.Reshape(p, x, []int{flatLen(x.Shape)}); err != nil {
		return nil, err
	}
	l := cond.Shape[0]
	if l > x.Shape[ax] {
		return nil, c.errorf(0, "compress(): a condition longer than the axis (%d > %d) is not supported", l, x.Shape[ax])
	}
	if x, err = b.SliceAxis(p, x, ax, tensor.Slice{Start: 0, Step: 1, Len: l}); err != nil {
		return nil, err
	}
	m, err := b.Truth(p, cond)
	if err != nil {
		return nil, err
	}
	perm := []int{ax}
	for i := range x.Shape {
		if i != ax {
			perm = append(perm, i)
		}
	}
	if x, err = b.Transpose(p, x, perm); err != nil {
		return nil, err
	}
	r, err := b.Mask(p, x, m)
	if err != nil {
		return nil, err
	}
	inv := make([]int, len(perm))
	for i, a := range perm {
		inv[a] = i
	}
	return b.Transpose(p, r, inv)
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
	for _, t := range []*spec.Node{cond, x} {
		if err := c.known(t); err != nil {
			return nil, err
		}
	}
	b, p := c.b, c.pos
	n := flatLen(x.Shape)
	if flatLen(cond.Shape) != n {
		return nil, c.errorf(0, "extract(): condition has %d elements, arr %d: they must have as many", flatLen(cond.Shape), n)
	}
	if x, err = b.Reshape(p, x, []int{n}); err != nil {
		return nil, err
	}
	m, err := b.Truth(p, cond)
	if err != nil {
		return nil, err
	}
	if m, err = b.Reshape(p, m, []int{n}); err != nil {
		return nil, err
	}
	return b.Mask(p, x, m)
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
		// keepdims= of the flattened array: (1, ..., 1) after the q axis.
		kd := c.param("keepdims")
		keepdims, err := c.bool(kd, false)
		if err != nil {
			return nil, err
		}
		c.args[kd] = arg{}
		nd := len(x.Shape)
		n := flatLen(x.Shape)
		if x, err = c.b.Reshape(c.pos, x, []int{n}); err != nil {
			return nil, err
		}
		nan, err := c.b.Node(c.pos, tensor.OpIsnan, spec.Attrs{}, x)
		if err != nil {
			return nil, err
		}
		keep, err := c.b.Node(c.pos, tensor.OpLogicalNot, spec.Attrs{}, nan)
		if err != nil {
			return nil, err
		}
		if x, err = c.b.Mask(c.pos, x, keep); err != nil {
			return nil, err
		}
		c.args[0].v = x
		c.name = plain
		r, err := buildPercentile(c)
		if err != nil || !keepdims {
			return r, err
		}
		p := r.(*spec.Node)
		shape := slices.Clone(p.Shape)
		for range nd {
			shape = append(shape, 1)
		}
		return c.b.Reshape(c.pos, p, shape)
	}
	c.name = plain
	return buildPercentile(c)
}
