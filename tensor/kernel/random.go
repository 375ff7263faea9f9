package kernel

import (
	"context"
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
	"marsfs/tensor/kernel/expr"
)

// forGlobalRows calls fn for each run of the last axis of a chunk of shape at
// offset in a tensor of shape global: local is the run's first element in
// the chunk, flat its global C-order index; the run has n elements with
// consecutive global indices. It stops early, with ctx's error, once ctx is
// done.
func forGlobalRows(ctx context.Context, shape, offset, global []int, fn func(local, flat, n int)) error {
	nd := len(shape)
	if tensor.NumElements(shape) == 0 {
		return nil
	}
	if nd == 0 {
		fn(0, 0, 1)
		return nil
	}
	gidx := make([]int, nd)
	idx := make([]int, nd)
	rowLen := shape[nd-1]
	done := 0
	for local := 0; ; local += rowLen {
		if done += rowLen; done >= ElemBlock {
			if err := ctx.Err(); err != nil {
				return err
			}
			done = 0
		}
		for ax := range idx {
			gidx[ax] = idx[ax] + offset[ax]
		}
		fn(local, tensor.Ravel(gidx, global), rowLen)
		ax := nd - 2
		for ; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < shape[ax] {
				break
			}
			idx[ax] = 0
		}
		if ax < 0 {
			return nil
		}
	}
}

func randomKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, err := genArgs(op, in)
	if err != nil {
		return nil, err
	}
	s := elem.NewRandStream(args.Seed, 0)
	var src *tensor.Array
	if op.Kind == tensor.OpRandint {
		if args.High <= args.Low {
			return nil, fmt.Errorf("randint: low %d >= high %d", args.Low, args.High)
		}
		width := uint64(args.High - args.Low)
		streams := make([]elem.RandStream, elem.MaxRetries)
		for j := range streams {
			streams[j] = elem.NewRandStream(args.Seed, uint64(j))
		}
		src = randOutput(ctx, op, tensor.Int64)
		d := src.Int64s()
		err = forGlobalRows(ctx, op.Shape, args.Offset, args.Global, func(local, flat, n int) {
			for j := range n {
				d[local+j] = args.Low + int64(elem.Intn(streams, uint64(flat+j), width))
			}
		})
	} else {
		src = randOutput(ctx, op, tensor.Float64)
		d := src.Float64s()
		// rand and randn are uniform and normal with (0, 1): 0 + 1*x is x.
		loc, scale := 0.0, 1.0
		switch op.Kind {
		case tensor.OpRand, tensor.OpRandn:
		case tensor.OpUniform:
			loc, scale = args.Start, args.Step-args.Start
		case tensor.OpNormal:
			loc, scale = args.Start, args.Step
			if scale < 0 {
				return nil, fmt.Errorf("normal: scale %v < 0", scale)
			}
		default:
			return nil, fmt.Errorf("unknown generator %q", op.Kind)
		}
		normal := op.Kind == tensor.OpRandn || op.Kind == tensor.OpNormal
		err = forGlobalRows(ctx, op.Shape, args.Offset, args.Global, func(local, flat, n int) {
			row := d[local : local+n]
			if normal {
				for j := range row {
					row[j] = loc + scale*s.Normal(uint64(flat+j))
				}
				return
			}
			// uniformFill's values are s.uniform's, bit for bit.
			expr.UniformFill(row, s, uint64(flat))
			if op.Kind != tensor.OpRand {
				for j, v := range row {
					row[j] = loc + scale*v
				}
			}
		})
	}
	if err != nil {
		return nil, err
	}
	return elem.CastArray(src, op.DType), nil
}

// randOutput is the array a generator draws into: the op's own output (in
// the store, when the worker gives one) when the op's dtype is the one the
// generator draws, else a heap array castArray converts afterwards.
func randOutput(ctx context.Context, op *chunk.Op, drawn tensor.DType) *tensor.Array {
	if op.DType == drawn {
		return elem.NewOutputAll(ctx, op)
	}
	return tensor.NewArray(drawn, op.Shape)
}
