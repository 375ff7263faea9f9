package kernel

import (
	"context"
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

func assembleKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.AssembleArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	// The pieces of an assemble never overlap (each is the part of one
	// input chunk that falls in the output); when their elements are as
	// many as the output's, they cover it, and clearing it first (160 MB
	// for a row strip of RECHUNK: a fifth of its workers' time) is waste.
	var out *tensor.Array
	if covered := piecesVolume(args.Pieces) == tensor.NumElements(op.Shape); covered {
		out = elem.NewOutputAll(ctx, op)
	} else {
		out = elem.NewOutput(ctx, op)
	}
	for _, p := range args.Pieces {
		if p.In < 0 || p.In >= len(in) {
			return nil, fmt.Errorf("piece reads input %d of %d", p.In, len(in))
		}
		tensor.CopyStrided(out, p.Dst, in[p.In], p.Src)
	}
	return out, nil
}

// piecesVolume is the number of elements the pieces copy.
func piecesVolume(pieces []chunk.Piece) int {
	n := 0
	for _, p := range pieces {
		v := 1
		for _, sl := range p.Src {
			v *= max(sl.Len, 0)
		}
		n += v
	}
	return n
}

// splitKernel lays the blocks of its input out one after the other (see
// chunk.SplitArgs).
func splitKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.SplitArgs)
	if !ok || len(in) != 1 {
		return nil, fmt.Errorf("bad args %T or %d inputs", op.Args, len(in))
	}
	out := elem.NewOutput(ctx, op)
	sz := out.DType.Size()
	at := 0
	for _, box := range args.Boxes {
		if len(box) != len(in[0].Shape) {
			return nil, fmt.Errorf("a block of %d axes in a chunk of %d", len(box), len(in[0].Shape))
		}
		shape := make([]int, len(box))
		for ax, sl := range box {
			if sl.Step != 1 || sl.Start < 0 || sl.Len < 0 || sl.Start+sl.Len > in[0].Shape[ax] {
				return nil, fmt.Errorf("block %v of a chunk of %v", box, in[0].Shape)
			}
			shape[ax] = sl.Len
		}
		n := tensor.NumElements(shape)
		if (at+n)*sz > len(out.Data) {
			return nil, fmt.Errorf("blocks past the %d elements of the output", len(out.Data)/sz)
		}
		dst := &tensor.Array{DType: out.DType, Shape: shape, Data: out.Data[at*sz : (at+n)*sz]}
		if n > 0 {
			tensor.CopyStrided(dst, make([]int, len(shape)), in[0], box)
		}
		at += n
	}
	return out, nil
}
