package tensor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrKernel marks the errors Run returns because a kernel rejected its op or
// inputs (a singular matrix, an argument out of range). Kernels are
// deterministic, so running the op again gives the same error: executors
// test errors.Is(err, ErrKernel) to give up at once rather than retry.
var ErrKernel = errors.New("kernel error")

// kernelError is a kernel's error, marked with ErrKernel.
type kernelError struct {
	kind string
	err  error
}

func (e *kernelError) Error() string   { return e.kind + ": " + e.err.Error() }
func (e *kernelError) Unwrap() []error { return []error{ErrKernel, e.err} }

// A kernel computes one chunk from its input chunks. It must not modify the
// inputs, and should return ctx.Err() promptly once ctx is done when its work
// is long (it checks between blocks of elements, not per element).
type kernel func(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error)

// kernelFor returns the kernel of a ChunkOp.Kind. The whole table is this
// one switch, rather than a map each op family's file fills in init: a map
// literal cannot be used, since the fused kernels run their members through
// Run, and Go refuses a variable whose initializer refers to itself.
func kernelFor(kind string) (kernel, bool) {
	switch kind {
	case "const":
		return constKernel, true
	case "assemble":
		return assembleKernel, true
	case "transpose":
		return transposeKernel, true
	case "convert":
		return convertKernel, true
	case "reshape":
		return reshapeKernel, true
	case OpFull:
		return fullKernel, true
	case OpArange, OpLinspace:
		return rangeKernel, true
	case OpEye:
		return eyeKernel, true
	case OpRand, OpRandn, OpRandint, OpUniform, OpNormal:
		return randomKernel, true
	case "fuse":
		return fuseKernel, true
	case "expr":
		return exprKernel, true
	case exprPart:
		return partKernel, true
	case "matmul":
		return matmulKernel, true
	case "matmul.sum":
		return matmulSumKernel, true
	case "linalg.qr.factor":
		return qrFactorKernel, true
	case "linalg.qr.r":
		return qrRKernel, true
	case "linalg.qr.q":
		return qrQKernel, true
	case "linalg.qr.qt":
		return qrQTKernel, true
	case "linalg.svd.small":
		return svdSmallKernel, true
	case "linalg.svd.part":
		return svdPartKernel, true
	case "linalg.solve":
		return solveKernel, true
	case "linalg.inv":
		return invKernel, true
	case "linalg.cholesky":
		return choleskyDiagKernel, true
	case "linalg.cholesky.block":
		return choleskyBlockKernel, true
	case "linalg.cholesky.update":
		return choleskyUpdateKernel, true
	case "linalg.zeros":
		return zerosKernel, true
	case "sort.local":
		return sortLocalKernel, true
	case "sort.merge":
		return sortMergeKernel, true
	case "argsort.indices":
		return argsortIndicesKernel, true
	case "histogram.minmax":
		return histMinMaxKernel, true
	case "histogram":
		return histRangeKernel, true
	case "histogram.edges":
		return histEdgesKernel, true
	case "histogram.count":
		return histCountKernel, true
	case "bincount":
		return bincountKernel, true
	case "percentile":
		return percentileKernel, true
	case "unique.map":
		return uniqueMapKernel, true
	case "unique.merge":
		return uniqueMergeKernel, true
	case "unique.values":
		return uniqueValuesKernel, true
	case "unique.counts":
		return uniqueCountsKernel, true
	case "unique.len":
		return uniqueLenKernel, true
	case "bincount.len":
		return bincountLenKernel, true
	}
	if elemKinds[kind] {
		return elemKernel, true
	}
	// A reduction's steps are "<op>.map", "<op>.combine" and "<op>.final";
	// a scan's "<op>.local", "<op>.carry" and "<op>.offset".
	op, step, _ := strings.Cut(kind, ".")
	switch {
	case slices.Contains(reductions, op):
		switch step {
		case "map":
			return reduceMapKernel, true
		case "combine":
			return reduceCombineKernel, true
		case "final":
			return reduceFinalKernel, true
		}
	case op == OpCumsum || op == OpCumprod:
		switch step {
		case "local":
			return scanLocalKernel, true
		case "carry":
			return scanCarryKernel, true
		case "offset":
			return scanOffsetKernel, true
		}
	}
	return nil, false
}

// Run computes op's chunk from the chunks of its inputs, in op.Inputs order.
func Run(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	if op.Stored != 0 {
		return nil, fmt.Errorf("run op %d: stored chunk %d has no kernel", op.Key, op.Stored)
	}
	k, ok := kernelFor(op.Kind)
	if !ok {
		return nil, fmt.Errorf("run op %d: unknown kernel %q", op.Key, op.Kind)
	}
	if len(in) != len(op.Inputs) {
		return nil, fmt.Errorf("run op %d (%s): %d inputs, want %d", op.Key, op.Kind, len(in), len(op.Inputs))
	}
	out, err := k(ctx, op, in)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", op.Kind, err) // interrupted, not rejected
		}
		return nil, &kernelError{op.Kind, err}
	}
	if out.DType != op.DType || !shapeFits(op, out.Shape) {
		return nil, fmt.Errorf("run op %d (%s): kernel made %v%v, want %v%v", op.Key, op.Kind, out.DType, out.Shape, op.DType, op.Shape)
	}
	return out, nil
}

// Compute runs every op of g in this process, in key order, and returns the
// outputs gathered into whole arrays. stored resolves Stored ops. It frees
// each chunk once its last consumer has run. It is the reference executor for
// tests and single-process use; the cluster runs the same kernels.
func Compute(ctx context.Context, g *ChunkGraph, stored func(id uint64) (*Array, error)) ([]*Array, error) {
	chunks, err := computeChunks(ctx, g, stored)
	if err != nil {
		return nil, err
	}
	outs := make([]*Array, len(g.Outputs))
	for i := range g.Outputs {
		if outs[i], err = Gather(&g.Outputs[i], chunks[i]); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// Gather assembles the chunks of t (one array a chunk, in t.Keys order) into
// one array of t's shape.
func Gather(t *TiledTensor, parts []*Array) (*Array, error) {
	if len(parts) != len(t.Keys) {
		return nil, fmt.Errorf("gather %s: %d chunks for a grid of %d", t.Name, len(parts), len(t.Keys))
	}
	out := NewArray(t.DType, t.Shape)
	offs := ChunkOffsets(t.Chunks)
	grid := GridShape(t.Chunks)
	idx := make([]int, len(grid))
	for _, p := range parts {
		if p == nil || p.DType != t.DType {
			return nil, fmt.Errorf("gather %s: missing or mistyped chunk", t.Name)
		}
		dst := make([]int, len(idx))
		for ax, i := range idx {
			dst[ax] = offs[ax][i]
			if p.Shape[ax] != t.Chunks[ax][i] {
				return nil, fmt.Errorf("gather %s: chunk %v has shape %v", t.Name, idx, p.Shape)
			}
		}
		copyStrided(out, dst, p, whole(p.Shape))
		for ax := len(idx) - 1; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < grid[ax] {
				break
			}
			idx[ax] = 0
		}
	}
	return out, nil
}

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

// newOutput returns the zero-filled array a kernel running op under ctx
// writes its output into: from ctx's Alloc when it has one that accepts,
// else from the heap.
func newOutput(ctx context.Context, op *ChunkOp) *Array { return allocOutput(ctx, op, true) }

// newOutputAll is newOutput for a kernel that sets every element: the
// array may hold anything beforehand, which spares clearing reused memory.
func newOutputAll(ctx context.Context, op *ChunkOp) *Array { return allocOutput(ctx, op, false) }

func allocOutput(ctx context.Context, op *ChunkOp, zero bool) *Array {
	return newArrayIn(ctx, op.DType, op.Shape, zero)
}

// newArrayIn returns an array of dtype dt and the given shape from ctx's
// Alloc when it has one that accepts, else from the heap; zero as for Alloc.
func newArrayIn(ctx context.Context, dt DType, shape []int, zero bool) *Array {
	if alloc, ok := ctx.Value(allocKey{}).(Alloc); ok && alloc != nil {
		if a := alloc(dt, shape, zero); a != nil {
			return a
		}
	}
	return NewArray(dt, shape)
}
