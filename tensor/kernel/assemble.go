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
	out := elem.NewOutput(ctx, op)
	for _, p := range args.Pieces {
		if p.In < 0 || p.In >= len(in) {
			return nil, fmt.Errorf("piece reads input %d of %d", p.In, len(in))
		}
		tensor.CopyStrided(out, p.Dst, in[p.In], p.Src)
	}
	return out, nil
}
