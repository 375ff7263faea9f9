package tensor

import (
	"context"
	"testing"
)

// TestKernelsNeverPanic runs every kernel of this package on ill-formed ops
// and inputs: each must return a chunk or an error, never panic.
func TestKernelsNeverPanic(t *testing.T) {
	var kinds []string
	kinds = append(kinds, OpFull, OpArange, OpLinspace, OpEye, OpRand, OpRandn, OpRandint, OpUniform, OpNormal, OpWhere)
	kinds = append(append(kinds, elemUnaryOps...), elemBinaryOps...)
	for _, op := range reductions {
		kinds = append(kinds, op+".map", op+".combine", op+".final")
	}
	for _, op := range []string{OpCumsum, OpCumprod} {
		kinds = append(kinds, op+".local", op+".carry", op+".offset")
	}
	kinds = append(kinds, exprPart)
	f := arrayOf(Float64, []int{2, 3}, 1, 2, 3, 4, 5, 6)
	inputs := [][]*Array{
		nil,
		{f},
		{f, f},
		{f, f, f},
		{f, arrayOf(Int32, []int{3, 2}, 1, 2, 3, 4, 5, 6)},
		{arrayOf(Bool, []int{}, 1)},
		{NewArray(Float64, []int{0, 3}), f},
		{{DType: Float64, Shape: []int{2}, Data: make([]byte, 5)}},
		{nil, f},
	}
	args := []any{
		nil,
		ElemArgs{},
		ElemArgs{Compute: Float64},
		ElemArgs{Compute: Bool, Decimals: -30},
		GenArgs{},
		GenArgs{Offset: []int{0, 0}, Global: []int{2, 3}, High: 1},
		GenArgs{Offset: []int{5, 0}, Global: []int{2, 3}},
		ReduceArgs{},
		ReduceArgs{Op: OpSum, In: Float64, Axes: []int{1}},
		ReduceArgs{Op: OpArgmax, In: Float64, Axes: []int{7}, Offset: []int{0, 0}, Global: []int{2, 3}},
		ReduceArgs{Op: OpVar, In: Float64, Axes: []int{0, 1}},
		ScanArgs{},
		ScanArgs{Op: OpCumsum, Axis: 1},
		ScanArgs{Op: OpCumprod, Axis: -1},
		PartArgs{Offset: -1},
		PartArgs{Offset: 3},
		PartArgs{Offset: 1 << 62},
	}
	shapes := [][]int{{}, {2, 3}, {2, 1}, {1, 3, 2}, {-1, 3}}
	dtypes := []DType{0, Bool, Int64, Float64}
	for _, kind := range kinds {
		for _, in := range inputs {
			for _, a := range args {
				for _, s := range shapes {
					for _, dt := range dtypes {
						op := &ChunkOp{Kind: kind, Inputs: make([]int, len(in)), Shape: s, DType: dt, Args: a}
						func() {
							defer func() {
								if r := recover(); r != nil {
									t.Fatalf("%s on %d inputs, args %+v, %v%v: panic %v", kind, len(in), a, dt, s, r)
								}
							}()
							Run(context.Background(), op, in)
						}()
					}
				}
			}
		}
	}
}

// TestKernelsCancel checks that long kernels stop with the context's error.
func TestKernelsCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := 4 * elemBlock
	x := NewArray(Float64, []int{n})
	ops := []struct {
		op *ChunkOp
		in []*Array
	}{
		{&ChunkOp{Kind: OpAdd, Inputs: []int{0, 1}, Shape: []int{n}, DType: Float64, Args: ElemArgs{Compute: Float64}}, []*Array{x, x}},
		{&ChunkOp{Kind: OpRand, Shape: []int{n}, DType: Float64, Args: GenArgs{Offset: []int{0}, Global: []int{n}}}, nil},
		{&ChunkOp{Kind: "sum.map", Inputs: []int{0}, Shape: []int{1}, DType: Float64, Args: ReduceArgs{Op: OpSum, In: Float64, Axes: []int{0}}}, []*Array{x}},
		{&ChunkOp{Kind: "var.map", Inputs: []int{0}, Shape: []int{n / 4, 1, 3}, DType: Float64, Args: ReduceArgs{Op: OpVar, In: Float64, Axes: []int{1}}},
			[]*Array{{DType: Float64, Shape: []int{n / 4, 4}, Data: x.Data}}},
	}
	for _, c := range ops {
		if _, err := Run(ctx, c.op, c.in); err == nil {
			t.Errorf("%s ran to the end under a cancelled context", c.op.Kind)
		}
	}
}
