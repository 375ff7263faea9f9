package kernel

import (
	"context"
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// diagonalKernel copies the run of the diagonal of its block that starts
// at (Row, Col).
func diagonalKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.DiagonalArgs)
	if !ok || len(in) != 1 || len(op.Shape) != 1 {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	x := in[0]
	l := op.Shape[0]
	if len(x.Shape) != 2 || args.Row < 0 || args.Col < 0 || l > 0 && (args.Row+l > x.Shape[0] || args.Col+l > x.Shape[1]) {
		return nil, fmt.Errorf("a run of %d from (%d, %d) leaves the block %v", l, args.Row, args.Col, x.Shape)
	}
	out := tensor.NewArray(x.DType, []int{l})
	sz := x.DType.Size()
	for i := range l {
		src := ((args.Row+i)*x.Shape[1] + args.Col + i) * sz
		copy(out.Data[i*sz:(i+1)*sz], x.Data[src:src+sz])
	}
	return out, nil
}
