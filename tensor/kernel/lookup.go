package kernel

import (
	"context"
	"fmt"
	"math"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// The kernels of searchsorted and isin (tile/lookup.go). Values compare by
// sortKey: NumPy's sort order, NaNs last, -0 equal to +0.

// keysOf returns the sort keys of a's elements.
func keysOf(a *tensor.Array) []uint64 {
	k := make([]uint64, a.Len())
	for i := range k {
		k[i] = sortKey(a, i)
	}
	return k
}

// searchsortedKernel counts, for each query of in[1], the elements of the
// sorted block in[0] before it (side='right': not after it).
func searchsortedKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.LookupArgs)
	if !ok || len(in) != 2 || in[0].DType != in[1].DType {
		return nil, fmt.Errorf("searchsorted takes a block and queries of one dtype")
	}
	a, v := keysOf(in[0]), keysOf(in[1])
	out := tensor.NewArray(tensor.Int64, op.Shape)
	if out.Len() != len(v) {
		return nil, fmt.Errorf("%d queries for a result of %v", len(v), op.Shape)
	}
	for i, k := range v {
		j, found := slices.BinarySearch(a, k)
		if args.Right && found {
			for j < len(a) && a[j] == k {
				j++
			}
		}
		out.Int64s()[i] = int64(j)
	}
	return out, nil
}

// isinKernel says whether each element of in[0] equals one of in[1]'s.
func isinKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	if len(in) != 2 || in[0].DType != in[1].DType {
		return nil, fmt.Errorf("isin takes elements and a test block of one dtype")
	}
	test := keysOf(in[1])
	slices.Sort(test)
	out := tensor.NewArray(tensor.Bool, op.Shape)
	if out.Len() != in[0].Len() {
		return nil, fmt.Errorf("%d elements for a result of %v", in[0].Len(), op.Shape)
	}
	float := in[0].DType.IsFloat()
	for i := range out.Data {
		k := sortKey(in[0], i)
		if float && k == math.MaxUint64 {
			continue // NaN equals nothing
		}
		if _, found := slices.BinarySearch(test, k); found {
			out.Data[i] = 1
		}
	}
	return out, nil
}

// isinOrKernel ors its bool blocks.
func isinOrKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	out := tensor.NewArray(tensor.Bool, op.Shape)
	for _, a := range in {
		if a.DType != tensor.Bool || a.Len() != out.Len() {
			return nil, fmt.Errorf("or of %v%v into %v", a.DType, a.Shape, op.Shape)
		}
		for i, b := range a.Data[:a.Len()] {
			out.Data[i] |= b
		}
	}
	return out, nil
}

// nonEmptyKernel passes in[0] through unless the count in[1] is 0.
func nonEmptyKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, _ := op.Args.(chunk.NonEmptyArgs)
	if len(in) != 2 || in[1].DType != tensor.Int64 || in[1].Len() != 1 {
		return nil, fmt.Errorf("nonempty takes a value and an int64 count")
	}
	if in[1].Int64s()[0] == 0 {
		if args.Reduction == tensor.AllNaNSlice {
			return nil, fmt.Errorf("All-NaN slice encountered")
		}
		return nil, fmt.Errorf("zero-size array to reduction operation %s which has no identity", args.Reduction)
	}
	return in[0], nil
}
