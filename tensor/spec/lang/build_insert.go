package lang

import (
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/syntax"
)

// insert and delete along an axis (of the raveled array for axis=None).
// Indices written in the spec (a number or a list) are known as it is
// read, so the result is a concatenation of slices of the array and of
// the values, as NumPy places them. delete also takes a boolean mask
// tensor (the kept elements, a mask whose length the data decides) and an
// integer tensor (a mask of the axis' aranges not among the indices).

func registerInsertDelete(l *library) {
	l.register("delete", []string{"arr", "obj", "axis"}, deleteFn)
	l.register("insert", []string{"arr", "obj", "values", "axis"}, insertFn)
}

// editAxis returns the array to edit and its axis: arr raveled for
// axis=None (argument i).
func editAxis(c *call, i int) (*spec.Node, int, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, 0, err
	}
	if err := c.known(x); err != nil {
		return nil, 0, err
	}
	if !c.has(i) {
		x, err = c.b.Reshape(c.pos, x, []int{flatLen(x.Shape)})
		return x, 0, err
	}
	a, err := c.int(i, 0)
	if err != nil {
		return nil, 0, err
	}
	if len(x.Shape) == 0 {
		return nil, 0, c.errorf(i, "axis %d is out of bounds for array of dimension 0", a)
	}
	ax, err := spec.NormAxis(a, len(x.Shape), c.at(i))
	return x, ax, err
}

// staticIndices returns argument i when the spec wrote numbers: the
// integers, whether it was one number (not a list), and whether they are
// bools.
func staticIndices(c *call, i int) (idx []int, scalar, mask, ok bool, err error) {
	switch v := c.args[i].v.(type) {
	case syntax.PyNum:
		if v.IsFloat() {
			return nil, false, false, true, c.errorf(i, "arrays used as indices must be of integer (or boolean) type")
		}
		return []int{int(max(min(v.I, spec.MaxInt), -spec.MaxInt))}, true, v.Dt == tensor.Bool, true, nil
	case seqValue:
		nums := 0
		bools := 0
		for k, e := range v.elts {
			n, isNum := e.(syntax.PyNum)
			if !isNum {
				return nil, false, false, false, nil
			}
			if n.IsFloat() {
				return nil, false, false, true, syntax.Errorf(v.pos[k], "arrays used as indices must be of integer (or boolean) type")
			}
			if n.Dt == tensor.Bool {
				bools++
			}
			nums++
			idx = append(idx, int(max(min(n.I, spec.MaxInt), -spec.MaxInt)))
		}
		return idx, false, nums > 0 && bools == nums, true, nil
	}
	return nil, false, false, false, nil
}

// runs joins the slices of x along ax at the runs of keep that are true.
func runs(c *call, x *spec.Node, ax int, keep []bool) (*spec.Node, error) {
	var parts []*spec.Node
	for lo := 0; lo < len(keep); {
		if !keep[lo] {
			lo++
			continue
		}
		hi := lo
		for hi < len(keep) && keep[hi] {
			hi++
		}
		part, err := c.b.SliceAxis(c.pos, x, ax, tensor.Slice{Start: lo, Step: 1, Len: hi - lo})
		if err != nil {
			return nil, err
		}
		parts = append(parts, part)
		lo = hi
	}
	if len(parts) == 0 {
		return c.b.SliceAxis(c.pos, x, ax, tensor.Slice{Start: 0, Step: 1, Len: 0})
	}
	return c.b.Concat(c.pos, parts, ax)
}

func deleteFn(c *call) (value, error) {
	x, ax, err := editAxis(c, 2)
	if err != nil {
		return nil, err
	}
	if !c.has(1) {
		return nil, c.missing(1)
	}
	n := x.Shape[ax]
	idx, scalar, isMask, ok, err := staticIndices(c, 1)
	if err != nil {
		return nil, err
	}
	if !ok {
		return deleteTensor(c, x, ax)
	}
	keep := slices.Repeat([]bool{true}, n)
	if isMask {
		if scalar || len(idx) != n {
			return nil, c.errorf(1, "boolean array argument obj to delete must be one dimensional and match the axis length of %d", n)
		}
		for k, v := range idx {
			keep[k] = v == 0
		}
		return runs(c, x, ax, keep)
	}
	for _, i := range idx {
		if i < -n || i >= n {
			return nil, c.errorf(1, "index %d is out of bounds for axis %d with size %d", i, ax, n)
		}
		if i < 0 {
			i += n
		}
		keep[i] = false
	}
	return runs(c, x, ax, keep)
}

// deleteTensor deletes the elements a tensor names: a bool mask of the
// axis' length (kept where false), or integer indices (kept where the
// axis' arange is not among them, each index checked against the axis).
func deleteTensor(c *call, x *spec.Node, ax int) (value, error) {
	obj, err := c.tensor(1)
	if err != nil {
		return nil, err
	}
	b, p := c.b, c.pos
	n := x.Shape[ax]
	var keep *spec.Node
	switch {
	case obj.DType == tensor.Bool:
		if len(obj.Shape) != 1 || obj.Shape[0] != n {
			return nil, c.errorf(1, "boolean array argument obj to delete must be one dimensional and match the axis length of %d", n)
		}
		if keep, err = b.Node(p, tensor.OpLogicalNot, spec.Attrs{}, obj); err != nil {
			return nil, err
		}
	case obj.DType.IsInteger():
		if len(obj.Shape) > 1 {
			return nil, c.errorf(1, "delete(): indices of %d dimensions are not supported: give a 1-D array", len(obj.Shape))
		}
		ar, err := b.IndexAlong(p, []int{n}, 0)
		if err != nil {
			return nil, err
		}
		// Each index in range and made positive, as take checks it.
		flat, err := b.Reshape(p, obj, []int{flatLen(obj.Shape)})
		if err != nil {
			return nil, err
		}
		named, err := b.Take(p, ar, flat, 0, "raise")
		if err != nil {
			return nil, err
		}
		in, err := isinNodes(c, ar, named)
		if err != nil {
			return nil, err
		}
		if keep, err = b.Node(p, tensor.OpLogicalNot, spec.Attrs{}, in); err != nil {
			return nil, err
		}
	default:
		return nil, c.errorf(1, "arrays used as indices must be of integer (or boolean) type")
	}
	perm := []int{ax}
	for a := range x.Shape {
		if a != ax {
			perm = append(perm, a)
		}
	}
	xt, err := b.Transpose(p, x, perm)
	if err != nil {
		return nil, err
	}
	r, err := b.Mask(p, xt, keep)
	if err != nil {
		return nil, err
	}
	inv := make([]int, len(perm))
	for i, a := range perm {
		inv[a] = i
	}
	return b.Transpose(p, r, inv)
}

// isinNodes is isin(element, test) for two tensors.
func isinNodes(c *call, element, test *spec.Node) (*spec.Node, error) {
	return c.b.Node(c.pos, tensor.OpIsin, spec.Attrs{}, element, test)
}

func insertFn(c *call) (value, error) {
	x, ax, err := editAxis(c, 3)
	if err != nil {
		return nil, err
	}
	for i := 1; i <= 2; i++ {
		if !c.has(i) {
			return nil, c.missing(i)
		}
	}
	b, p := c.b, c.pos
	n, nd := x.Shape[ax], len(x.Shape)
	// NumPy 1.24 takes boolean indices as the integers 0 and 1 (with a
	// warning), as staticIndices gives them.
	idx, scalar, _, ok, err := staticIndices(c, 1)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, c.errorf(1, "insert(): indices in a tensor are not supported yet: write them as a number or a list")
	}
	vals, err := c.tensor(2)
	if err != nil {
		return nil, err
	}
	if err := c.known(vals); err != nil {
		return nil, err
	}
	if vals, err = b.Astype(p, vals, x.DType); err != nil {
		return nil, err
	}
	// NumPy's array(values, ndmin=arr.ndim).
	if len(vals.Shape) < nd {
		shape := append(slices.Repeat([]int{1}, nd-len(vals.Shape)), vals.Shape...)
		if vals, err = b.Reshape(p, vals, shape); err != nil {
			return nil, err
		}
	}
	if len(idx) == 1 {
		i := idx[0]
		if i < -n || i > n {
			return nil, c.errorf(1, "index %d is out of bounds for axis %d with size %d", i, ax, n)
		}
		if i < 0 {
			i += n
		}
		if scalar {
			// values fill x[:, i:i+1, :] as a[:, [i], :] = values would:
			// their first axis moves to the edited one.
			perm := []int{}
			for a := 1; a < len(vals.Shape); a++ {
				perm = append(perm, a)
			}
			perm = slices.Insert(perm, ax, 0)
			if vals, err = b.Transpose(p, vals, perm); err != nil {
				return nil, err
			}
		}
		if len(vals.Shape) > nd {
			return nil, c.errorf(2, "could not broadcast input array from shape %s into shape %s", spec.ShapeString(vals.Shape), spec.ShapeString(x.Shape))
		}
		slot := slices.Clone(x.Shape)
		slot[ax] = vals.Shape[ax]
		if !tensor.Broadcasts(vals.Shape, slot) {
			return nil, c.errorf(2, "could not broadcast input array from shape %s into shape %s", spec.ShapeString(vals.Shape), spec.ShapeString(slot))
		}
		if vals, err = b.BroadcastTo(p, vals, slot); err != nil {
			return nil, err
		}
		head, err := b.SliceAxis(p, x, ax, tensor.Slice{Start: 0, Step: 1, Len: i})
		if err != nil {
			return nil, err
		}
		tail, err := b.SliceAxis(p, x, ax, tensor.Slice{Start: i, Step: 1, Len: n - i})
		if err != nil {
			return nil, err
		}
		return b.Concat(p, []*spec.Node{head, vals, tail}, ax)
	}
	// Several indices: the j-th value goes before element idx[j], those
	// at one place in the order given (NumPy's stable argsort).
	k := len(idx)
	for j, i := range idx {
		if i < -n || i > n {
			return nil, c.errorf(1, "index %d is out of bounds for axis %d with size %d", i, ax, n+k)
		}
		if i < 0 {
			idx[j] = i + n
		}
	}
	slot := slices.Clone(x.Shape)
	slot[ax] = k
	if len(vals.Shape) > nd || !tensor.Broadcasts(vals.Shape, slot) {
		return nil, c.errorf(2, "shape mismatch: value array of shape %s could not be broadcast to indexing result of shape %s", spec.ShapeString(vals.Shape), spec.ShapeString(slot))
	}
	if vals, err = b.BroadcastTo(p, vals, slot); err != nil {
		return nil, err
	}
	order := make([]int, k)
	for j := range order {
		order[j] = j
	}
	slices.SortStableFunc(order, func(a, b int) int { return idx[a] - idx[b] })
	var parts []*spec.Node
	prev := 0
	for _, j := range order {
		if idx[j] > prev {
			part, err := b.SliceAxis(p, x, ax, tensor.Slice{Start: prev, Step: 1, Len: idx[j] - prev})
			if err != nil {
				return nil, err
			}
			parts = append(parts, part)
			prev = idx[j]
		}
		v, err := b.SliceAxis(p, vals, ax, tensor.Slice{Start: j, Step: 1, Len: 1})
		if err != nil {
			return nil, err
		}
		parts = append(parts, v)
	}
	if prev < n || len(parts) == 0 {
		part, err := b.SliceAxis(p, x, ax, tensor.Slice{Start: prev, Step: 1, Len: n - prev})
		if err != nil {
			return nil, err
		}
		parts = append(parts, part)
	}
	return b.Concat(p, parts, ax)
}
