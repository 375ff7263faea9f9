package tensor

// Basic indexing: integers, slices, ... and None (newaxis). It lowers to an
// OpSlice over every axis of the input (left out when it selects
// everything) and an OpReshape that drops the integer-indexed axes and adds
// the new ones (left out when the shape does not change).

func (b *builder) index(e *indexExpr) (value, error) {
	xv, err := b.eval(e.x)
	if err != nil {
		return nil, err
	}
	if seq, ok := xv.(seqValue); ok {
		return b.indexSeq(e, seq)
	}
	x, ok := xv.(*Node)
	if !ok {
		return nil, errorf(e.pos, "'%s' object is not subscriptable", typeName(xv))
	}
	type item struct {
		v value
		p srcPos
	}
	var items []item
	real, ellipsis := 0, false
	for _, ie := range e.idx {
		var v value
		if s, ok := ie.(*sliceExpr); ok {
			sv := sliceValue{lo: noneValue{}, hi: noneValue{}, step: noneValue{}}
			for _, part := range []struct {
				e   expr
				dst *value
			}{{s.lo, &sv.lo}, {s.hi, &sv.hi}, {s.step, &sv.step}} {
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
		switch v := v.(type) {
		case ellipsisValue:
			if ellipsis {
				return nil, errorf(ie.at(), "an index can only have a single ellipsis ('...')")
			}
			ellipsis = true
		case noneValue:
		case sliceValue:
			real++
		case pyNum:
			if v.dt != Int64 {
				return nil, errorf(ie.at(), "only integers, slices (`:`), ellipsis (`...`) and None are valid indices, not a %s", v.typeName())
			}
			real++
		case *Node, seqValue:
			return nil, errorf(ie.at(), "advanced indexing (an array or list as an index) is not supported")
		default:
			return nil, errorf(ie.at(), "only integers, slices (`:`), ellipsis (`...`) and None are valid indices, not a %s", typeName(v))
		}
		items = append(items, item{v, ie.at()})
	}
	nd := len(x.Shape)
	if real > nd {
		return nil, errorf(e.pos, "too many indices for array: array is %d-dimensional, but %d were indexed", nd, real)
	}
	slices := make([]Slice, 0, nd)
	var pend []PendingSlice
	var shape []int
	identity := true
	ax := 0
	for _, it := range items {
		switch v := it.v.(type) {
		case ellipsisValue:
			for n := nd - real; n > 0; n-- {
				slices = append(slices, Slice{Start: 0, Step: 1, Len: x.Shape[ax]})
				pend = append(pend, PendingSlice{})
				shape = append(shape, x.Shape[ax])
				ax++
			}
		case noneValue:
			shape = append(shape, 1)
		case pyNum:
			l := x.Shape[ax]
			pend = append(pend, PendingSlice{Lo: int(max(min(v.i, maxInt), -maxInt)), Int: true})
			if l == Unknown {
				// Checked against the length once it is known.
				slices = append(slices, Slice{Start: 0, Step: 1, Len: 1})
				identity = false
				ax++
				continue
			}
			i := v.i
			if i < 0 {
				i += int64(l)
			}
			if i < 0 || i >= int64(l) {
				return nil, errorf(it.p, "index %d is out of bounds for axis %d with size %d", v.i, ax, l)
			}
			slices = append(slices, Slice{Start: int(i), Step: 1, Len: 1})
			identity = identity && l == 1
			ax++
		case sliceValue:
			l := x.Shape[ax]
			p, err := pendingSlice(v, it.p)
			if err != nil {
				return nil, err
			}
			pend = append(pend, p)
			if l == Unknown {
				slices = append(slices, Slice{Start: 0, Step: 1, Len: Unknown})
				shape = append(shape, Unknown)
				identity = identity && p == PendingSlice{}
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
		slices = append(slices, Slice{Start: 0, Step: 1, Len: x.Shape[ax]})
		pend = append(pend, PendingSlice{})
		shape = append(shape, x.Shape[ax])
	}
	if !identity {
		attrs := Attrs{Slices: slices}
		if HasUnknown(x.Shape) {
			// Resolved when the stage that knows the lengths tiles it.
			attrs.Pending = pend
		}
		if x, err = b.addAt(e.pos, &Node{Op: OpSlice, Inputs: []*Node{x}, Attrs: attrs}); err != nil {
			return nil, err
		}
	}
	return b.reshape(e.pos, x, cloneInts(shape))
}

// pendingSlice records lo:hi:step as written, for an axis whose length is
// not known yet.
func pendingSlice(v sliceValue, p srcPos) (PendingSlice, error) {
	var ps PendingSlice
	for _, part := range []struct {
		v   value
		dst *int
		has *bool
	}{{v.lo, &ps.Lo, &ps.HasLo}, {v.hi, &ps.Hi, &ps.HasHi}, {v.step, &ps.Step, &ps.HasStep}} {
		if _, none := part.v.(noneValue); none {
			continue
		}
		n, ok := part.v.(pyNum)
		if !ok || n.dt != Int64 {
			return ps, errorf(p, "slice indices must be integers or None, not %s", typeName(part.v))
		}
		*part.dst, *part.has = int(max(min(n.i, maxInt), -maxInt)), true
	}
	if ps.HasStep && ps.Step == 0 {
		return ps, errorf(p, "slice step cannot be zero")
	}
	if ps.HasStep && ps.Step == 1 {
		ps.Step, ps.HasStep = 0, false
	}
	return ps, nil
}

// resolveSlice resolves lo:hi:step against an axis of length l as Python's
// slice.indices does: negative bounds count from the end, bounds clamp to the
// axis, and a negative step walks backwards.
func resolveSlice(v sliceValue, l int, p srcPos) (Slice, error) {
	bound := func(x value) (int, bool, error) {
		if _, none := x.(noneValue); none {
			return 0, false, nil
		}
		n, ok := x.(pyNum)
		if !ok || n.dt != Int64 {
			return 0, false, errorf(p, "slice indices must be integers or None, not %s", typeName(x))
		}
		return int(max(min(n.i, maxInt), -maxInt)), true, nil
	}
	step, hasStep, err := bound(v.step)
	if err != nil {
		return Slice{}, err
	}
	if !hasStep {
		step = 1
	}
	if step == 0 {
		return Slice{}, errorf(p, "slice step cannot be zero")
	}
	lo, hasLo, err := bound(v.lo)
	if err != nil {
		return Slice{}, err
	}
	hi, hasHi, err := bound(v.hi)
	if err != nil {
		return Slice{}, err
	}
	return sliceIndices(lo, hi, step, hasLo, hasHi, true, l), nil
}

// sliceIndices resolves lo:hi:step against an axis of length l; absent
// bounds are the axis' ends and an absent step is 1.
func sliceIndices(lo, hi, step int, hasLo, hasHi, hasStep bool, l int) Slice {
	if !hasStep {
		step = 1
	}
	clamp := func(i, low, high int) int { return max(low, min(i, high)) }
	var start, stop int
	if step > 0 {
		start, stop = 0, l
		if hasLo {
			if lo < 0 {
				lo += l
			}
			start = clamp(lo, 0, l)
		}
		if hasHi {
			if hi < 0 {
				hi += l
			}
			stop = clamp(hi, 0, l)
		}
	} else {
		start, stop = l-1, -1
		if hasLo {
			if lo < 0 {
				lo += l
			}
			start = clamp(lo, -1, l-1)
		}
		if hasHi {
			if hi < 0 {
				hi += l
			}
			stop = clamp(hi, -1, l-1)
		}
	}
	n := 0
	if step > 0 && stop > start {
		n = (stop - start + step - 1) / step
	} else if step < 0 && start > stop {
		n = (start - stop - step - 1) / -step
	}
	if n == 0 {
		start = 0
	}
	return Slice{Start: start, Step: step, Len: n}
}

// indexSeq indexes a tuple or list with one integer (a.shape[0]).
func (b *builder) indexSeq(e *indexExpr, seq seqValue) (value, error) {
	if len(e.idx) != 1 {
		return nil, errorf(e.pos, "%s indices must be integers, not tuple", typeName(seq))
	}
	v, err := b.eval(e.idx[0])
	if err != nil {
		return nil, err
	}
	n, ok := v.(pyNum)
	if !ok || n.isFloat() {
		return nil, errorf(e.idx[0].at(), "%s indices must be integers, not %s", typeName(seq), typeName(v))
	}
	i := n.i
	if i < 0 {
		i += int64(len(seq.elts))
	}
	if i < 0 || i >= int64(len(seq.elts)) {
		return nil, errorf(e.idx[0].at(), "%s index out of range", typeName(seq))
	}
	return seq.elts[i], nil
}
