package kernel

import (
	"context"
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

func reshapeKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.ReshapeArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	out := elem.NewOutput(ctx, op)
	es := op.DType.Size()
	for _, r := range args.Runs {
		if r.In < 0 || r.In >= len(in) {
			return nil, fmt.Errorf("run reads input %d of %d", r.In, len(in))
		}
		src := in[r.In]
		if src.DType != op.DType {
			return nil, fmt.Errorf("input %d is %v, want %v", r.In, src.DType, op.DType)
		}
		if r.Count <= 0 || r.Len <= 0 {
			continue
		}
		if !runFits(r.Src, r.SrcStride, r.Count, r.Len, src.Len()) || !runFits(r.Dst, r.DstStride, r.Count, r.Len, out.Len()) {
			return nil, fmt.Errorf("run %+v out of bounds of input %v or output %v", r, src.Shape, op.Shape)
		}
		n := r.Len * es
		for i := range r.Count {
			s, d := (r.Src+i*r.SrcStride)*es, (r.Dst+i*r.DstStride)*es
			copy(out.Data[d:d+n], src.Data[s:s+n])
		}
	}
	return out, nil
}

// runFits reports whether count blocks of n elements at start, start+stride,
// ... lie within size elements. The block starts are linear in i, so the
// first and last blocks are the extremes.
func runFits(start, stride, count, n, size int) bool {
	end := start + (count-1)*stride
	return min(start, end) >= 0 && max(start, end)+n <= size
}
