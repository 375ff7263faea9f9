package kernel

import (
	"context"
	"errors"
	"fmt"
	"slices"

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
	kind chunk.Kind
	err  error
}

func (e *kernelError) Error() string   { return string(e.kind) + ": " + e.err.Error() }
func (e *kernelError) Unwrap() []error { return []error{ErrKernel, e.err} }

// A kernel computes one chunk from its input chunks. It must not modify the
// inputs, and should return ctx.Err() promptly once ctx is done when its work
// is long (it checks between blocks of elements, not per element).
type kernel func(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error)

// KernelFor returns the kernel of a chunk.Op.Kind. The whole table is this
// one switch, rather than a map each op family's file fills in init: a map
// literal cannot be used, since the fused kernels run their members through
// Run, and Go refuses a variable whose initializer refers to itself.
func KernelFor(kind chunk.Kind) (kernel, bool) {
	switch kind {
	case chunk.KindConst:
		return constKernel, true
	case chunk.KindFromNPY:
		return fromNPYKernel, true
	case chunk.KindFromZarr:
		return fromZarrKernel, true
	case chunk.KindToNPYCreate:
		return toNPYCreateKernel, true
	case chunk.KindToNPYWrite:
		return toNPYWriteKernel, true
	case chunk.KindToNPYCommit:
		return toNPYCommitKernel, true
	case chunk.KindToZarrCreate:
		return toZarrCreateKernel, true
	case chunk.KindToZarrWrite:
		return toZarrWriteKernel, true
	case chunk.KindToZarrCommit:
		return toZarrCommitKernel, true
	case chunk.KindRechunkSplit:
		return splitKernel, true
	case chunk.KindAssemble:
		return assembleKernel, true
	case chunk.KindTranspose:
		return transposeKernel, true
	case chunk.KindConvert:
		return convertKernel, true
	case chunk.KindReshape:
		return reshapeKernel, true
	case chunk.KindFull:
		return fullKernel, true
	case chunk.KindArange, chunk.KindLinspace:
		return rangeKernel, true
	case chunk.KindEye:
		return eyeKernel, true
	case chunk.KindRand, chunk.KindRandn, chunk.KindRandint, chunk.KindUniform, chunk.KindNormal:
		return randomKernel, true
	case chunk.KindFuse:
		return fuseKernel, true
	case chunk.KindMaps:
		return mapsKernel, true
	case chunk.KindExpr:
		return expr.ExprKernel, true
	case chunk.KindExprPart:
		return partKernel, true
	case chunk.KindMatmul:
		return matmulKernel, true
	case chunk.KindMatmulSum:
		return matmulSumKernel, true
	case chunk.KindLabelSums:
		return labelSumsKernel, true
	case chunk.KindGroupByMap:
		return groupByMapKernel, true
	case chunk.KindGroupByCombine:
		return groupByCombineKernel, true
	case chunk.KindGroupByFinal:
		return groupByFinalKernel, true
	case chunk.KindQRFactor:
		return qrFactorKernel, true
	case chunk.KindQRR:
		return qrRKernel, true
	case chunk.KindQRQ:
		return qrQKernel, true
	case chunk.KindQRQT:
		return qrQTKernel, true
	case chunk.KindSVDSmall:
		return svdSmallKernel, true
	case chunk.KindSVDPart:
		return svdPartKernel, true
	case chunk.KindSolve:
		return solveKernel, true
	case chunk.KindInv:
		return invKernel, true
	case chunk.KindCholesky:
		return choleskyDiagKernel, true
	case chunk.KindCholeskyBlock:
		return choleskyBlockKernel, true
	case chunk.KindCholeskyUpdate:
		return choleskyUpdateKernel, true
	case chunk.KindLinalgZeros:
		return zerosKernel, true
	case chunk.KindDiagonal:
		return diagonalKernel, true
	case chunk.KindMaskCount:
		return maskCountKernel, true
	case chunk.KindMaskLens:
		return maskLensKernel, true
	case chunk.KindMaskSelect:
		return maskSelectKernel, true
	case chunk.KindEigh:
		return eighKernel, true
	case chunk.KindTakeTouch:
		return takeTouchKernel, true
	case chunk.KindTakeTouches:
		return takeTouchesKernel, true
	case chunk.KindTake:
		return takeKernel, true
	case chunk.KindTakePiece:
		return takePieceKernel, true
	case chunk.KindSearchsorted:
		return searchsortedKernel, true
	case chunk.KindIsin:
		return isinKernel, true
	case chunk.KindIsinOr:
		return isinOrKernel, true
	case chunk.KindNonempty:
		return nonEmptyKernel, true
	case chunk.KindSsortSample:
		return ssortSampleKernel, true
	case chunk.KindSsortSplitters:
		return ssortSplittersKernel, true
	case chunk.KindSsortCounts:
		return ssortCountsKernel, true
	case chunk.KindSsortTable:
		return ssortTableKernel, true
	case chunk.KindSsortMerge:
		return ssortMergeKernel, true
	case chunk.KindSsortValues:
		return ssortValuesKernel, true
	case chunk.KindEighW, chunk.KindEighV:
		return eighPartKernel, true
	case chunk.KindSortLocal:
		return sortLocalKernel, true
	case chunk.KindSortMerge:
		return sortMergeKernel, true
	case chunk.KindArgsortIndices:
		return argsortIndicesKernel, true
	case chunk.KindHistMinMax:
		return histMinMaxKernel, true
	case chunk.KindHist:
		return histRangeKernel, true
	case chunk.KindHistEdges:
		return histEdgesKernel, true
	case chunk.KindHistCount:
		return histCountKernel, true
	case chunk.KindBincount:
		return bincountKernel, true
	case chunk.KindPercentile:
		return percentileKernel, true
	case chunk.KindUniqueMap:
		return uniqueMapKernel, true
	case chunk.KindUniqueMerge:
		return uniqueMergeKernel, true
	case chunk.KindUniqueValues:
		return uniqueValuesKernel, true
	case chunk.KindUniqueCounts:
		return uniqueCountsKernel, true
	case chunk.KindUniqueLen:
		return uniqueLenKernel, true
	case chunk.KindBincountLen:
		return bincountLenKernel, true
	}
	if kind.IsElem() {
		return elemKernel, true
	}
	// A reduction's steps and a scan's (see chunk.StepKind).
	op, step := kind.Split()
	switch {
	case slices.Contains(tensor.Reductions, op):
		switch step {
		case chunk.StepMap:
			return reduceMapKernel, true
		case chunk.StepCombine:
			return reduceCombineKernel, true
		case chunk.StepFinal:
			return reduceFinalKernel, true
		}
	case slices.Contains(chunk.Scans, op):
		switch step {
		case chunk.StepLocal:
			return scanLocalKernel, true
		case chunk.StepCarry:
			return scanCarryKernel, true
		case chunk.StepOffset:
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
