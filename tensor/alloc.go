package tensor

import (
	"context"
)

// An Alloc makes the array a kernel writes its output into: an array of
// dtype dt and the given shape, in memory the caller chooses (a worker's
// shared-memory store, so that the chunk needs no copy once made), zero
// filled unless zero is false: the kernel then sets every element itself.
// It returns nil to decline, and the kernel then uses the heap.
type Alloc func(dt DType, shape []int, zero bool) *Array

type allocKey struct{}

// WithAlloc returns a context under which Run's kernels make their output
// arrays with alloc. A kernel may still return an array of its own (a view
// of an input, a scalar): the caller compares what Run returns with what
// alloc gave.
func WithAlloc(ctx context.Context, alloc Alloc) context.Context {
	return context.WithValue(ctx, allocKey{}, alloc)
}

// AllocArray returns an array of dtype dt and the given shape from ctx's
// Alloc when it has one that accepts, else from the heap; zero as for Alloc.
func AllocArray(ctx context.Context, dt DType, shape []int, zero bool) *Array {
	if alloc, ok := ctx.Value(allocKey{}).(Alloc); ok && alloc != nil {
		if a := alloc(dt, shape, zero); a != nil {
			return a
		}
	}
	return NewArray(dt, shape)
}
