package elem

import (
	"context"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// NewOutput returns the zero-filled array a kernel running op under ctx
// writes its output into: from ctx's Alloc when it has one that accepts,
// else from the heap.
func NewOutput(ctx context.Context, op *chunk.Op) *tensor.Array { return allocOutput(ctx, op, true) }

// NewOutputAll is newOutput for a kernel that sets every element: the
// array may hold anything beforehand, which spares clearing reused memory.
func NewOutputAll(ctx context.Context, op *chunk.Op) *tensor.Array {
	return allocOutput(ctx, op, false)
}

func allocOutput(ctx context.Context, op *chunk.Op, zero bool) *tensor.Array {
	return tensor.AllocArray(ctx, op.DType, op.Shape, zero)
}
