package lang

import (
	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/syntax"
)

// Basic indexing: integers, slices, ... and None (newaxis). It lowers to an
// OpSlice over every axis of the input (left out when it selects
// everything) and an OpReshape that drops the integer-indexed axes and adds
// the new ones (left out when the shape does not change).

func (b *builder) index(e *syntax.IndexExpr) (value, error) {
	xv, err := b.eval(e.X)
	if err != nil {
		return nil, err
	}
	if seq, ok := xv.(seqValue); ok {
		return b.indexSeq(e, seq)
	}
	x, ok := xv.(*spec.Node)
	if !ok {
		return nil, syntax.Errorf(e.Pos, "'%s' object is not subscriptable", typeName(xv))
	}
	items, err := b.indexItems(e)
	if err != nil {
		return nil, err
	}
	advanced := false
	for k, it := range items {
		switch v := it.v.(type) {
		case seqValue:
			// A list of integers (or bools) indexes as its array does.
			a, err := b.arrayLiteral(it.p, v, -1, nil)
			if err != nil {
				return nil, err
			}
			items[k].v = a
			advanced = true
		case *spec.Node:
			advanced = true
		}
	}
	if advanced {
		return b.advancedIndex(e.Pos, x, items)
	}
	return b.basicIndex(e.Pos, x, items)
}

// An indexItem is one item of a subscript, evaluated: a number, a slice,
// None, Ellipsis, a tensor or a list.
type indexItem struct {
	v value
	p syntax.SrcPos
}

// indexItems evaluates the items of e's subscript; a tuple alone is its
// items, as Python passes x[(i, j)] as x[i, j] (x[a.nonzero()]).
func (b *builder) indexItems(e *syntax.IndexExpr) ([]indexItem, error) {
	var items []indexItem
	for _, ie := range e.Idx {
		var v value
		var err error
		if s, ok := ie.(*syntax.SliceExpr); ok {
			sv := sliceValue{lo: noneValue{}, hi: noneValue{}, step: noneValue{}}
			for _, part := range []struct {
				e   syntax.Expr
				dst *value
			}{{s.Lo, &sv.lo}, {s.Hi, &sv.hi}, {s.Step, &sv.step}} {
				if part.e == nil {
					continue
				}
				if *part.dst, err = b.eval(part.e); err != nil {
					return nil, err
				}
			}
			v = sv
		} else if v, err = b.eval(ie); err != nil {
			return nil, err
		}
		items = append(items, indexItem{v, ie.At()})
	}
	if len(items) == 1 {
		if s, ok := items[0].v.(seqValue); ok && !s.list {
			items = items[:0]
			for k, v := range s.elts {
				items = append(items, indexItem{v, s.pos[k]})
			}
		}
	}
	return items, nil
}

// basicIndex is x[items] for items of basic indexing: integers, slices,
// one ellipsis and None.
func (b *builder) basicIndex(pos syntax.SrcPos, x *spec.Node, items []indexItem) (*spec.Node, error) {
	real, ellipsis := 0, false
	for _, it := range items {
		switch v := it.v.(type) {
		case ellipsisValue:
			if ellipsis {
				return nil, syntax.Errorf(it.p, "an index can only have a single ellipsis ('...')")
			}
			ellipsis = true
		case noneValue:
		case sliceValue:
			real++
		case syntax.PyNum:
			if v.Dt != tensor.Int64 {
				return nil, syntax.Errorf(it.p, "only integers, slices (`:`), ellipsis (`...`) and None are valid indices, not a %s", v.TypeName())
			}
			real++
		default:
			return nil, syntax.Errorf(it.p, "only integers, slices (`:`), ellipsis (`...`) and None are valid indices, not a %s", typeName(v))
		}
	}
	nd := len(x.Shape)
	if real > nd {
		return nil, syntax.Errorf(pos, "too many indices for array: array is %d-dimensional, but %d were indexed", nd, real)
	}
	slices := make([]tensor.Slice, 0, nd)
	var pend []spec.PendingSlice
	var shape []int
	identity := true
	ax := 0
	for _, it := range items {
		switch v := it.v.(type) {
		case ellipsisValue:
			for n := nd - real; n > 0; n-- {
				slices = append(slices, tensor.Slice{Start: 0, Step: 1, Len: x.Shape[ax]})
				pend = append(pend, spec.PendingSlice{})
				shape = append(shape, x.Shape[ax])
				ax++
			}
		case noneValue:
			shape = append(shape, 1)
		case syntax.PyNum:
			l := x.Shape[ax]
			pend = append(pend, spec.PendingSlice{Lo: int(max(min(v.I, spec.MaxInt), -spec.MaxInt)), Int: true})
			if l == tensor.Unknown {
				// Checked against the length once it is known.
				slices = append(slices, tensor.Slice{Start: 0, Step: 1, Len: 1})
				identity = false
				ax++
				continue
			}
			i := v.I
			if i < 0 {
				i += int64(l)
			}
			if i < 0 || i >= int64(l) {
				return nil, syntax.Errorf(it.p, "index %d is out of bounds for axis %d with size %d", v.I, ax, l)
			}
			slices = append(slices, tensor.Slice{Start: int(i), Step: 1, Len: 1})
			identity = identity && l == 1
			ax++
		case sliceValue:
			l := x.Shape[ax]
			p, err := pendingSlice(v, it.p)
			if err != nil {
				return nil, err
			}
			pend = append(pend, p)
			if l == tensor.Unknown {
				slices = append(slices, tensor.Slice{Start: 0, Step: 1, Len: tensor.Unknown})
				shape = append(shape, tensor.Unknown)
				identity = identity && p == spec.PendingSlice{}
				ax++
				continue
			}
			s, err := resolveSlice(v, l, it.p)
			if err != nil {
				return nil, err
			}
			slices = append(slices, s)
			shape = append(shape, s.Len)
			identity = identity && s.Start == 0 && s.Step == 1 && s.Len == x.Shape[ax]
			ax++
		}
	}
	for ; ax < nd; ax++ {
		slices = append(slices, tensor.Slice{Start: 0, Step: 1, Len: x.Shape[ax]})
		pend = append(pend, spec.PendingSlice{})
		shape = append(shape, x.Shape[ax])
	}
	if !identity {
		attrs := spec.Attrs{Slices: slices}
		if tensor.HasUnknown(x.Shape) {
			// Resolved when the stage that knows the lengths tiles it.
			attrs.Pending = pend
		}
		var err error
		if x, err = b.AddAt(pos, &spec.Node{Op: tensor.OpSlice, Inputs: []*spec.Node{x}, Attrs: attrs}); err != nil {
			return nil, err
		}
	}
	return b.Reshape(pos, x, spec.CloneInts(shape))
}

// pendingSlice records lo:hi:step as written, for an axis whose length is
// not known yet.
func pendingSlice(v sliceValue, p syntax.SrcPos) (spec.PendingSlice, error) {
	var ps spec.PendingSlice
	for _, part := range []struct {
		v   value
		dst *int
		has *bool
	}{{v.lo, &ps.Lo, &ps.HasLo}, {v.hi, &ps.Hi, &ps.HasHi}, {v.step, &ps.Step, &ps.HasStep}} {
		if _, none := part.v.(noneValue); none {
			continue
		}
		n, ok := part.v.(syntax.PyNum)
		if !ok || n.Dt != tensor.Int64 {
			return ps, syntax.Errorf(p, "slice indices must be integers or None, not %s", typeName(part.v))
		}
		*part.dst, *part.has = int(max(min(n.I, spec.MaxInt), -spec.MaxInt)), true
	}
	if ps.HasStep && ps.Step == 0 {
		return ps, syntax.Errorf(p, "slice step cannot be zero")
	}
	if ps.HasStep && ps.Step == 1 {
		ps.Step, ps.HasStep = 0, false
	}
	return ps, nil
}

// resolveSlice resolves lo:hi:step against an axis of length l as Python's
// slice.indices does: negative bounds count from the end, bounds clamp to the
// axis, and a negative step walks backwards.
func resolveSlice(v sliceValue, l int, p syntax.SrcPos) (tensor.Slice, error) {
	bound := func(x value) (int, bool, error) {
		if _, none := x.(noneValue); none {
			return 0, false, nil
		}
		n, ok := x.(syntax.PyNum)
		if !ok || n.Dt != tensor.Int64 {
			return 0, false, syntax.Errorf(p, "slice indices must be integers or None, not %s", typeName(x))
		}
		return int(max(min(n.I, spec.MaxInt), -spec.MaxInt)), true, nil
	}
	step, hasStep, err := bound(v.step)
	if err != nil {
		return tensor.Slice{}, err
	}
	if !hasStep {
		step = 1
	}
	if step == 0 {
		return tensor.Slice{}, syntax.Errorf(p, "slice step cannot be zero")
	}
	lo, hasLo, err := bound(v.lo)
	if err != nil {
		return tensor.Slice{}, err
	}
	hi, hasHi, err := bound(v.hi)
	if err != nil {
		return tensor.Slice{}, err
	}
	return spec.SliceIndices(lo, hi, step, hasLo, hasHi, true, l), nil
}

// indexSeq indexes a tuple or list with one integer (a.shape[0]).
func (b *builder) indexSeq(e *syntax.IndexExpr, seq seqValue) (value, error) {
	if len(e.Idx) != 1 {
		return nil, syntax.Errorf(e.Pos, "%s indices must be integers, not tuple", typeName(seq))
	}
	v, err := b.eval(e.Idx[0])
	if err != nil {
		return nil, err
	}
	n, ok := v.(syntax.PyNum)
	if !ok || n.IsFloat() {
		return nil, syntax.Errorf(e.Idx[0].At(), "%s indices must be integers, not %s", typeName(seq), typeName(v))
	}
	i := n.I
	if i < 0 {
		i += int64(len(seq.elts))
	}
	if i < 0 || i >= int64(len(seq.elts)) {
		return nil, syntax.Errorf(e.Idx[0].At(), "%s index out of range", typeName(seq))
	}
	return seq.elts[i], nil
}
