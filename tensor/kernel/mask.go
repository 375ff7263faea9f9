package kernel

import (
	"context"
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

// The kernels of boolean masks (tile/mask.go).

// maskCountKernel counts the trues of its mask block: an int64 scalar.
func maskCountKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	if len(in) != 1 || in[0].DType != tensor.Bool {
		return nil, fmt.Errorf("mask.count takes one bool block")
	}
	out := tensor.NewArray(tensor.Int64, []int{})
	out.Int64s()[0] = int64(countTrue(in[0].Data[:in[0].Len()]))
	return out, nil
}

// maskLensKernel gathers the counts of the blocks, int64 scalars, into
// one vector: the probe the next stage tiles the result by.
func maskLensKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	out := tensor.NewArray(tensor.Int64, []int{len(in)})
	for i, a := range in {
		if a.DType != tensor.Int64 || a.Len() != 1 {
			return nil, fmt.Errorf("count %d is %v%v, not an int64 scalar", i, a.DType, a.Shape)
		}
		out.Int64s()[i] = a.Int64s()[0]
	}
	return out, nil
}

// maskSelectKernel copies the sub-arrays of its x block (its first axes
// those of the mask block) where the mask is true, in order.
func maskSelectKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	if len(in) != 2 || in[1].DType != tensor.Bool || len(op.Shape) == 0 {
		return nil, fmt.Errorf("mask.select takes a block and a bool mask block")
	}
	x, m := in[0], in[1]
	k := len(m.Shape)
	if len(x.Shape) < k || !slices.Equal(x.Shape[:k], m.Shape) || x.DType != op.DType {
		return nil, fmt.Errorf("mask %v does not index block %v%v", m.Shape, x.DType, x.Shape)
	}
	rest := x.Shape[k:]
	row := tensor.NumElements(rest) * x.DType.Size()
	mask := m.Data[:m.Len()]
	n := countTrue(mask)
	out := tensor.NewArray(x.DType, append([]int{n}, rest...))
	switch row {
	case 1:
		compact(out.Data, mask, x.Data)
	case 2:
		compact(tensor.View[uint16](out.Data), mask, tensor.View[uint16](x.Data))
	case 4:
		compact(tensor.View[uint32](out.Data), mask, tensor.View[uint32](x.Data))
	case 8:
		compact(tensor.View[uint64](out.Data), mask, tensor.View[uint64](x.Data))
	default:
		o := 0
		for i, b := range mask {
			if b != 0 {
				o += copy(out.Data[o:o+row], x.Data[i*row:(i+1)*row])
			}
		}
	}
	return out, nil
}

// countTrue counts the nonzero bytes of mask. A random mask would
// mispredict half the branches of an if.
func countTrue(mask []byte) int {
	n := 0
	for _, c := range mask {
		n += elem.Truth(c)
	}
	return n
}

// compact copies x[i] to d in order where mask[i] is nonzero, d holding
// exactly as many elements as mask has trues. Every element is written at
// d's next place, which advances only past the kept ones, so there is no
// branch on the data; the loop ends once d is full (the rest of mask is
// then false), before a write could fall past its end.
func compact[T uint8 | uint16 | uint32 | uint64](d []T, mask []byte, x []T) {
	x = x[:len(mask)]
	o := 0
	for i, c := range mask {
		if o == len(d) {
			return
		}
		d[o] = x[i]
		o += elem.Truth(c)
	}
}
