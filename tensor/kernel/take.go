package kernel

import (
	"context"
	"fmt"
	"sort"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// The kernels of integer-array indexing (tile/take.go).

// takeTouchKernel marks, for its block of indices, the blocks of x they
// fall in: an int64 vector, 1 for a block read, one entry a block. An
// index out of [0, len) is NumPy's IndexError.
func takeTouchKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.TakeArgs)
	if !ok || len(in) != 1 || in[0].DType != tensor.Int64 || len(args.Offs) < 1 {
		return nil, fmt.Errorf("take.touch takes an int64 index block")
	}
	nb := len(args.Offs) - 1
	l := args.Offs[nb]
	out := tensor.NewArray(tensor.Int64, []int{nb})
	marks := out.Int64s()
	for _, v := range in[0].Int64s() {
		i := v
		if i < 0 {
			i += int64(l) // from the end, as NumPy's
		}
		if i < 0 || i >= int64(l) {
			return nil, fmt.Errorf("index %d is out of bounds for axis 0 with size %d", v, l)
		}
		marks[sort.SearchInts(args.Offs, int(i)+1)-1] = 1
	}
	return out, nil
}

// takeTouchesKernel joins the marks of every index block into one vector:
// the probe of the next stage.
func takeTouchesKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	var all []int64
	for _, a := range in {
		if a.DType != tensor.Int64 || len(a.Shape) != 1 {
			return nil, fmt.Errorf("marks of %v%v", a.DType, a.Shape)
		}
		all = append(all, a.Int64s()...)
	}
	out := tensor.NewArray(tensor.Int64, []int{len(all)})
	copy(out.Int64s(), all)
	return out, nil
}

// takeKernel copies the rows its index block names out of the blocks of
// x after it (those the indices fall in, starting at Offs), or, the reduce
// side of take's shuffle (Piece), out of the pieces cut from them.
func takeKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.TakeArgs)
	if !ok || len(in) < 1 || in[0].DType != tensor.Int64 || len(args.Offs) != len(in)-1 {
		return nil, fmt.Errorf("take takes an int64 index block and the blocks it reads")
	}
	idx := in[0].Int64s()
	k := len(in[0].Shape)
	if len(op.Shape) < k {
		return nil, fmt.Errorf("take of shape %v for indices %v", op.Shape, in[0].Shape)
	}
	rest := op.Shape[k:]
	sz := op.DType.Size()
	row := tensor.NumElements(rest) * sz
	out := tensor.NewArray(op.DType, op.Shape)
	next := make([]int, len(in)-1) // a piece's next row
	for j, v := range idx {
		if v < 0 {
			v += int64(args.Len)
		}
		b := sort.SearchInts(args.Offs, int(v)+1) - 1
		if b < 0 {
			return nil, fmt.Errorf("index %d is in no block read", v)
		}
		x := in[1+b]
		r := int(v) - args.Offs[b]
		if args.Piece {
			// The pieces hold the rows in the indices' order.
			r = next[b]
			next[b]++
		}
		if x.DType != op.DType || len(x.Shape) == 0 || r >= x.Shape[0] || tensor.NumElements(x.Shape[1:])*sz != row {
			return nil, fmt.Errorf("index %d is in no block read", v)
		}
		copy(out.Data[j*row:(j+1)*row], x.Data[r*row:(r+1)*row])
	}
	return out, nil
}

// takePieceKernel is the map side of take's shuffle: the rows of its
// block of x (starting at Off along the axis) that its index block
// names, in the indices' order, one a naming index.
func takePieceKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.TakePieceArgs)
	if !ok || len(in) != 2 || in[0].DType != tensor.Int64 || len(in[1].Shape) == 0 || in[1].DType != op.DType {
		return nil, fmt.Errorf("take.piece takes an int64 index block and a block of x")
	}
	x := in[1]
	lo, rows := args.Off, x.Shape[0]
	row := tensor.NumElements(x.Shape[1:]) * x.DType.Size()
	var sel []int
	for _, v := range in[0].Int64s() {
		if v < 0 {
			v += int64(args.Len)
		}
		if r := int(v) - lo; r >= 0 && r < rows {
			sel = append(sel, r)
		}
	}
	out := tensor.NewArray(x.DType, append([]int{len(sel)}, x.Shape[1:]...))
	for k, r := range sel {
		copy(out.Data[k*row:(k+1)*row], x.Data[r*row:(r+1)*row])
	}
	return out, nil
}
