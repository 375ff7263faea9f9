package kernel

import (
	"context"
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// The kernels of boolean masks (tile/mask.go).

// maskCountKernel counts the trues of its mask block: an int64 scalar.
func maskCountKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	if len(in) != 1 || in[0].DType != tensor.Bool {
		return nil, fmt.Errorf("mask.count takes one bool block")
	}
	n := int64(0)
	for _, b := range in[0].Data[:in[0].Len()] {
		if b != 0 {
			n++
		}
	}
	out := tensor.NewArray(tensor.Int64, []int{})
	out.Int64s()[0] = n
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
	n := 0
	for _, b := range mask {
		if b != 0 {
			n++
		}
	}
	out := tensor.NewArray(x.DType, append([]int{n}, rest...))
	o := 0
	for i, b := range mask {
		if b != 0 {
			o += copy(out.Data[o:o+row], x.Data[i*row:(i+1)*row])
		}
	}
	return out, nil
}
