package kernel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
	"marsfs/tensor/kernel/expr"
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
type kernel func(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error)

// KernelFor returns the kernel of a chunk.Op.Kind. The whole table is this
// one switch, rather than a map each op family's file fills in init: a map
// literal cannot be used, since the fused kernels run their members through
// Run, and Go refuses a variable whose initializer refers to itself.
func KernelFor(kind string) (kernel, bool) {
	switch kind {
	case "const":
		return constKernel, true
	case tensor.OpFromNPY:
		return fromNPYKernel, true
	case tensor.OpFromZarr:
		return fromZarrKernel, true
	case "to_npy.create":
		return toNPYCreateKernel, true
	case "to_npy.write":
		return toNPYWriteKernel, true
	case "to_npy.commit":
		return toNPYCommitKernel, true
	case "to_zarr.create":
		return toZarrCreateKernel, true
	case "to_zarr.write":
		return toZarrWriteKernel, true
	case "to_zarr.commit":
		return toZarrCommitKernel, true
	case "rechunk.split":
		return splitKernel, true
	case "assemble":
		return assembleKernel, true
	case "transpose":
		return transposeKernel, true
	case "convert":
		return convertKernel, true
	case "reshape":
		return reshapeKernel, true
	case tensor.OpFull:
		return fullKernel, true
	case tensor.OpArange, tensor.OpLinspace:
		return rangeKernel, true
	case tensor.OpEye:
		return eyeKernel, true
	case tensor.OpRand, tensor.OpRandn, tensor.OpRandint, tensor.OpUniform, tensor.OpNormal:
		return randomKernel, true
	case "fuse":
		return fuseKernel, true
	case chunk.OpMaps:
		return mapsKernel, true
	case "expr":
		return expr.ExprKernel, true
	case chunk.ExprPart:
		return partKernel, true
	case "matmul":
		return matmulKernel, true
	case "matmul.sum":
		return matmulSumKernel, true
	case chunk.OpLabelSums:
		return labelSumsKernel, true
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
	case "diagonal":
		return diagonalKernel, true
	case "mask.count":
		return maskCountKernel, true
	case "mask.lens":
		return maskLensKernel, true
	case "mask.select":
		return maskSelectKernel, true
	case "linalg.eigh":
		return eighKernel, true
	case "take.touch":
		return takeTouchKernel, true
	case "take.touches":
		return takeTouchesKernel, true
	case "take":
		return takeKernel, true
	case "take.piece":
		return takePieceKernel, true
	case "searchsorted":
		return searchsortedKernel, true
	case "isin":
		return isinKernel, true
	case "isin.or":
		return isinOrKernel, true
	case "nonempty":
		return nonEmptyKernel, true
	case "ssort.sample":
		return ssortSampleKernel, true
	case "ssort.splitters":
		return ssortSplittersKernel, true
	case "ssort.counts":
		return ssortCountsKernel, true
	case "ssort.table":
		return ssortTableKernel, true
	case "ssort.merge":
		return ssortMergeKernel, true
	case "ssort.values":
		return ssortValuesKernel, true
	case "linalg.eigh.w", "linalg.eigh.v":
		return eighPartKernel, true
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
	if tensor.ElemKinds[kind] {
		return elemKernel, true
	}
	// A reduction's steps are "<op>.map", "<op>.combine" and "<op>.final";
	// a scan's "<op>.local", "<op>.carry" and "<op>.offset".
	op, step, _ := strings.Cut(kind, ".")
	switch {
	case slices.Contains(tensor.Reductions, op):
		switch step {
		case "map":
			return reduceMapKernel, true
		case "combine":
			return reduceCombineKernel, true
		case "final":
			return reduceFinalKernel, true
		}
	case op == tensor.OpCumsum || op == tensor.OpCumprod:
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
func Run(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	if op.Stored != 0 {
		return nil, fmt.Errorf("run op %d: stored chunk %d has no kernel", op.Key, op.Stored)
	}
	k, ok := KernelFor(op.Kind)
	if !ok {
		return nil, fmt.Errorf("run op %d: unknown kernel %q", op.Key, op.Kind)
	}
	if len(in) != len(op.Inputs) {
		return nil, fmt.Errorf("run op %d (%s): %d inputs, want %d", op.Key, op.Kind, len(in), len(op.Inputs))
	}
	out, done, err := roundHalf(op, in)
	if !done {
		run, args, widened := widen(op, in)
		out, err = k(ctx, run, args)
		if err == nil && widened && out.DType != op.DType {
			out = elem.CastArray(out, op.DType)
		}
	}
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
