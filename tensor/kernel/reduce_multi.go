package kernel

import (
	"context"
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

// A mean's map op may read several chunks: the blocks along the reduced
// axes of one output chunk, whose partial it makes in one pass. The tiler
// groups them so when a chunk's partial would be as large as the chunk
// (a reduced extent of 1 to 4 float32 values: the seasonal cycle
// x.reshape(3, T/3, lat, lon).mean(axis=0) reduces chunks of one year
// each), so that no partial four times its chunk is stored and combined.
// The values are added in the order of the inputs, each widened to
// float64, as the map and combine of each chunk would have: float64 sums
// of float32 values.

// meanMapMulti makes the partial (the sums) of a mean's map op over
// the chunks in, which agree on every axis that is not reduced.
func meanMapMulti(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, err := reduceArgs(op, in, -1)
	if err != nil {
		return nil, err
	}
	if args.Gather != nil {
		return meanMapGather(ctx, op, args, in)
	}
	if args.Op != tensor.OpMean || !widens(args.In) {
		return nil, fmt.Errorf("a %s map of %v reads one chunk, not %d", args.Op, args.In, len(in))
	}
	x0 := in[0]
	nd := len(x0.Shape)
	reduced := make([]bool, nd)
	for _, ax := range args.Axes {
		if ax < 0 || ax >= nd {
			return nil, fmt.Errorf("axis %d out of range for shape %v", ax, x0.Shape)
		}
		reduced[ax] = true
	}
	pshape := make([]int, nd)
	for ax, s := range x0.Shape {
		pshape[ax] = s
		if reduced[ax] {
			pshape[ax] = 1
		}
	}
	if op.DType != tensor.Float64 || !slices.Equal(pshape, op.Shape) {
		return nil, fmt.Errorf("partial of %v%v is float64%v, op says %v%v", x0.DType, x0.Shape, pshape, op.DType, op.Shape)
	}
	ones := true
	for i, x := range in {
		if x.DType != args.In || len(x.Shape) != nd {
			return nil, fmt.Errorf("input %d is %v%v, input 0 %v%v", i, x.DType, x.Shape, args.In, x0.Shape)
		}
		e := 1
		for ax, s := range x.Shape {
			if reduced[ax] {
				e *= s
			} else if s != x0.Shape[ax] {
				return nil, fmt.Errorf("input %d is %v%v, input 0 %v%v", i, x.DType, x.Shape, args.In, x0.Shape)
			}
		}
		ones = ones && e == 1
	}
	nout := tensor.NumElements(pshape)
	acc := takeF64(nout)
	defer putF64(acc)
	clear(acc)
	if ones && args.In == tensor.Float32 {
		// Each chunk is one row of the sums: up to 8 added at once.
		var rows [elem.MaxWideRows][]float32
		for lo := 0; lo < len(in); lo += len(rows) {
			k := 0
			for _, x := range in[lo:min(lo+len(rows), len(in))] {
				rows[k] = x.Float32s()
				k++
			}
			elem.AddWideRows(acc, rows[:k])
		}
	} else {
		for _, x := range in {
			var err error
			if x.DType == tensor.Float32 {
				err = wideSumsT(ctx, acc, x.Float32s(), x.Shape, reduced)
			} else {
				err = wideSumsT(ctx, acc, x.Float64s(), x.Shape, reduced)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := tensor.AllocArray(ctx, tensor.Float64, pshape, false)
	copy(out.Float64s(), acc)
	return out, nil
}

// meanMapGather makes the partial of a mean's map of the blocks
// args.Gather cuts out of in, each one value deep along the reduced axes:
// a block's element j adds into sum j, read where it lies (a reshape's
// runs) rather than from a copy of the block. Blocks add in order, as
// meanMapMulti's do.
func meanMapGather(ctx context.Context, op *chunk.Op, args chunk.ReduceArgs, in []*tensor.Array) (*tensor.Array, error) {
	if args.Op != tensor.OpMean || !widens(args.In) || op.DType != tensor.Float64 {
		return nil, fmt.Errorf("a gathered %s map of %v making %v%v", args.Op, args.In, op.DType, op.Shape)
	}
	for i, x := range in {
		if x.DType != args.In {
			return nil, fmt.Errorf("input %d is %v, want %v", i, x.DType, args.In)
		}
	}
	nout := tensor.NumElements(op.Shape)
	acc := takeF64(nout)
	defer putF64(acc)
	clear(acc)
	for b, g := range args.Gather {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, r := range g.Runs {
			if r.In < 0 || r.In >= len(in) {
				return nil, fmt.Errorf("block %d reads input %d of %d", b, r.In, len(in))
			}
			if r.Count <= 0 || r.Len <= 0 {
				continue
			}
			src := in[r.In]
			if !runFits(r.Src, r.SrcStride, r.Count, r.Len, src.Len()) || !runFits(r.Dst, r.DstStride, r.Count, r.Len, nout) {
				return nil, fmt.Errorf("block %d: run %+v out of bounds of input %v or %d sums", b, r, src.Shape, nout)
			}
			for i := range r.Count {
				s, d := r.Src+i*r.SrcStride, r.Dst+i*r.DstStride
				if src.DType == tensor.Float32 {
					elem.AddWideRows(acc[d:d+r.Len], [][]float32{src.Float32s()[s : s+r.Len]})
				} else {
					elem.AddLoop(acc[d:d+r.Len], acc[d:d+r.Len], src.Float64s()[s:s+r.Len])
				}
			}
		}
	}
	out := tensor.AllocArray(ctx, tensor.Float64, op.Shape, false)
	copy(out.Float64s(), acc)
	return out, nil
}
