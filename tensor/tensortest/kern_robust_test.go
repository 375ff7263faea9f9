package tensortest

import (
	"context"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel"
)

// TestKernelsNeverPanic runs every kernel of this package on ill-formed ops
// and inputs: each must return a chunk or an error, never panic.
func TestKernelsNeverPanic(t *testing.T) {
	var kinds []string
	kinds = append(kinds, tensor.OpFull, tensor.OpArange, tensor.OpLinspace, tensor.OpEye, tensor.OpRand, tensor.OpRandn, tensor.OpRandint, tensor.OpUniform, tensor.OpNormal, tensor.OpWhere)
	kinds = append(append(kinds, tensor.ElemUnaryOps...), tensor.ElemBinaryOps...)
	for _, op := range tensor.Reductions {
		kinds = append(kinds, op+".map", op+".combine", op+".final")
	}
	for _, op := range []string{tensor.OpCumsum, tensor.OpCumprod} {
		kinds = append(kinds, op+".local", op+".carry", op+".offset")
	}
	kinds = append(kinds, string(chunk.KindExprPart))
	f := arrayOf(tensor.Float64, []int{2, 3}, 1, 2, 3, 4, 5, 6)
	inputs := [][]*tensor.Array{
		nil,
		{f},
		{f, f},
		{f, f, f},
		{f, arrayOf(tensor.Int32, []int{3, 2}, 1, 2, 3, 4, 5, 6)},
		{arrayOf(tensor.Bool, []int{}, 1)},
		{tensor.NewArray(tensor.Float64, []int{0, 3}), f},
		{{DType: tensor.Float64, Shape: []int{2}, Data: make([]byte, 5)}},
		{nil, f},
	}
	args := []any{
		nil,
		chunk.ElemArgs{},
		chunk.ElemArgs{Compute: tensor.Float64},
		chunk.ElemArgs{Compute: tensor.Bool, Decimals: -30},
		chunk.GenArgs{},
		chunk.GenArgs{Offset: []int{0, 0}, Global: []int{2, 3}, High: 1},
		chunk.GenArgs{Offset: []int{5, 0}, Global: []int{2, 3}},
		chunk.ReduceArgs{},
		chunk.ReduceArgs{Op: tensor.OpSum, In: tensor.Float64, Axes: []int{1}},
		chunk.ReduceArgs{Op: tensor.OpArgmax, In: tensor.Float64, Axes: []int{7}, Offset: []int{0, 0}, Global: []int{2, 3}},
		chunk.ReduceArgs{Op: tensor.OpVar, In: tensor.Float64, Axes: []int{0, 1}},
		chunk.ScanArgs{},
		chunk.ScanArgs{Op: tensor.OpCumsum, Axis: 1},
		chunk.ScanArgs{Op: tensor.OpCumprod, Axis: -1},
		chunk.PartArgs{Offset: -1},
		chunk.PartArgs{Offset: 3},
		chunk.PartArgs{Offset: 1 << 62},
	}
	shapes := [][]int{{}, {2, 3}, {2, 1}, {1, 3, 2}, {-1, 3}}
	dtypes := []tensor.DType{0, tensor.Bool, tensor.Int64, tensor.Float64}
	for _, kind := range kinds {
		for _, in := range inputs {
			for _, a := range args {
				for _, s := range shapes {
					for _, dt := range dtypes {
						op := &chunk.Op{Kind: chunk.Kind(kind), Inputs: make([]int, len(in)), Shape: s, DType: dt, Args: a}
						func() {
							defer func() {
								if r := recover(); r != nil {
									t.Fatalf("%s on %d inputs, args %+v, %v%v: panic %v", kind, len(in), a, dt, s, r)
								}
							}()
							kernel.Run(context.Background(), op, in)
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
	n := 4 * kernel.ElemBlock
	x := tensor.NewArray(tensor.Float64, []int{n})
	ops := []struct {
		op *chunk.Op
		in []*tensor.Array
	}{
		{&chunk.Op{Kind: tensor.OpAdd, Inputs: []int{0, 1}, Shape: []int{n}, DType: tensor.Float64, Args: chunk.ElemArgs{Compute: tensor.Float64}}, []*tensor.Array{x, x}},
		{&chunk.Op{Kind: chunk.KindRand, Shape: []int{n}, DType: tensor.Float64, Args: chunk.GenArgs{Offset: []int{0}, Global: []int{n}}}, nil},
		{&chunk.Op{Kind: "sum.map", Inputs: []int{0}, Shape: []int{1}, DType: tensor.Float64, Args: chunk.ReduceArgs{Op: tensor.OpSum, In: tensor.Float64, Axes: []int{0}}}, []*tensor.Array{x}},
		{&chunk.Op{Kind: "var.map", Inputs: []int{0}, Shape: []int{n / 4, 1, 3}, DType: tensor.Float64, Args: chunk.ReduceArgs{Op: tensor.OpVar, In: tensor.Float64, Axes: []int{1}}},
			[]*tensor.Array{{DType: tensor.Float64, Shape: []int{n / 4, 4}, Data: x.Data}}},
	}
	for _, c := range ops {
		if _, err := kernel.Run(ctx, c.op, c.in); err == nil {
			t.Errorf("%s ran to the end under a cancelled context", c.op.Kind)
		}
	}
}
