package tensor

// CopyStrided copies the block of src selected by sel (one Slice an axis) to
// dst at offset off.
func CopyStrided(dst *Array, off []int, src *Array, sel []Slice) {
	nd := len(dst.Shape)
	es := dst.DType.Size()
	if nd == 0 {
		copy(dst.Data, src.Data[:es])
		return
	}
	lens := make([]int, nd)
	for ax, s := range sel {
		lens[ax] = s.Len
	}
	if NumElements(lens) == 0 {
		return
	}
	dstStr, srcStr := ByteStrides(dst.Shape, es), ByteStrides(src.Shape, es)
	idx := make([]int, nd-1)
	last := sel[nd-1]
	for {
		so, do := last.Start*srcStr[nd-1], off[nd-1]*dstStr[nd-1]
		for ax := 0; ax < nd-1; ax++ {
			so += (sel[ax].Start + idx[ax]*sel[ax].Step) * srcStr[ax]
			do += (off[ax] + idx[ax]) * dstStr[ax]
		}
		if last.Step == 1 {
			copy(dst.Data[do:do+last.Len*es], src.Data[so:so+last.Len*es])
		} else {
			step := last.Step * es
			for i := 0; i < last.Len; i++ {
				copy(dst.Data[do+i*es:do+(i+1)*es], src.Data[so+i*step:so+i*step+es])
			}
		}
		ax := nd - 2
		for ; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < lens[ax] {
				break
			}
			idx[ax] = 0
		}
		if ax < 0 {
			return
		}
	}
}

// ByteStrides are the C-order strides in bytes of an array of shape.
func ByteStrides(shape []int, es int) []int {
	st := make([]int, len(shape))
	s := es
	for ax := len(shape) - 1; ax >= 0; ax-- {
		st[ax] = s
		s *= shape[ax]
	}
	return st
}

// Whole selects every element of an array of shape.
func Whole(shape []int) []Slice {
	sel := make([]Slice, len(shape))
	for ax, n := range shape {
		sel[ax] = Slice{Start: 0, Step: 1, Len: n}
	}
	return sel
}

// ElemStrides are the C-order strides of shape in elements.
func ElemStrides(shape []int) []int {
	st := make([]int, len(shape))
	s := 1
	for ax := len(shape) - 1; ax >= 0; ax-- {
		st[ax] = s
		s *= shape[ax]
	}
	return st
}
