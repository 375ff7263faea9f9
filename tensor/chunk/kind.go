package chunk

import (
	"strings"

	"marsfs/tensor"
)

// A Kind names the kernel that computes an op's chunk. The kinds are the
// constants below, and three families built from the names of whole-tensor
// ops: an elementwise op's chunks have the op's name as their kind
// (tensor.ElemKinds), a reduction's steps are "<op>.map", "<op>.combine"
// and "<op>.final", and a scan's "<op>.local", "<op>.carry" and
// "<op>.offset" (StepKind). Kinds lists them all; the tiler and the fuser
// emit them, tensor/kernel's KernelFor runs them, and a test in
// tensor/tensortest ties the three together.
type Kind string

// The kinds of op whose chunks a generator makes: no inputs.
const (
	KindConst    Kind = "const" // an upload's or a literal's chunk (ConstArgs)
	KindFull     Kind = tensor.OpFull
	KindArange   Kind = tensor.OpArange
	KindLinspace Kind = tensor.OpLinspace
	KindEye      Kind = tensor.OpEye
	KindRand     Kind = tensor.OpRand
	KindRandn    Kind = tensor.OpRandn
	KindRandint  Kind = tensor.OpRandint
	KindUniform  Kind = tensor.OpUniform
	KindNormal   Kind = tensor.OpNormal
	// KindStored is an op that computes nothing: its chunk exists
	// (Op.Stored). It has no kernel.
	KindStored Kind = "stored"
)

// The kinds of op that read and write files in the data directory.
const (
	KindFromNPY      Kind = tensor.OpFromNPY
	KindFromZarr     Kind = tensor.OpFromZarr
	KindToNPYCreate  Kind = "to_npy.create"
	KindToNPYWrite   Kind = "to_npy.write"
	KindToNPYCommit  Kind = "to_npy.commit"
	KindToZarrCreate Kind = "to_zarr.create"
	KindToZarrWrite  Kind = "to_zarr.write"
	KindToZarrCommit Kind = "to_zarr.commit"
)

// The kinds of op that move elements: layout, rechunking, slicing.
const (
	KindAssemble     Kind = "assemble"
	KindRechunkSplit Kind = "rechunk.split"
	KindTranspose    Kind = tensor.OpTranspose
	KindReshape      Kind = tensor.OpReshape
	KindConvert      Kind = "convert"
	KindDiagonal     Kind = tensor.OpDiagonal
)

// The kinds of fused op (fuse): a chain, a pass of several reduction
// maps, an expression program and a partial cut from one.
const (
	KindFuse     Kind = "fuse"
	KindMaps     Kind = "maps"
	KindExpr     Kind = "expr"
	KindExprPart Kind = "expr.part"
)

// The kinds of op of linear algebra.
const (
	KindMatmul         Kind = tensor.OpMatmul
	KindMatmulSum      Kind = "matmul.sum"
	KindLabelSums      Kind = "label.sums" // a band's sums and counts by label (LabelSumsArgs)
	KindQRFactor       Kind = "linalg.qr.factor"
	KindQRR            Kind = tensor.OpQRR
	KindQRQ            Kind = tensor.OpQRQ
	KindQRQT           Kind = "linalg.qr.qt"
	KindSVDSmall       Kind = "linalg.svd.small"
	KindSVDPart        Kind = "linalg.svd.part"
	KindSolve          Kind = tensor.OpSolve
	KindInv            Kind = tensor.OpInv
	KindCholesky       Kind = tensor.OpCholesky
	KindCholeskyBlock  Kind = "linalg.cholesky.block"
	KindCholeskyUpdate Kind = "linalg.cholesky.update"
	KindLinalgZeros    Kind = "linalg.zeros"
	KindEigh           Kind = "linalg.eigh"
	KindEighW          Kind = tensor.OpEighW
	KindEighV          Kind = tensor.OpEighV
)

// The kinds of op of masks, gathers, lookups, sorting, statistics and
// unique: most are stages whose lengths the data decides.
const (
	KindMaskCount      Kind = "mask.count"
	KindMaskLens       Kind = "mask.lens"
	KindMaskSelect     Kind = "mask.select"
	KindTakeTouch      Kind = "take.touch"
	KindTakeTouches    Kind = "take.touches"
	KindTake           Kind = tensor.OpTake
	KindTakePiece      Kind = "take.piece"
	KindSearchsorted   Kind = tensor.OpSearchsorted
	KindIsin           Kind = tensor.OpIsin
	KindIsinOr         Kind = "isin.or"
	KindNonempty       Kind = "nonempty"
	KindSsortSample    Kind = "ssort.sample"
	KindSsortSplitters Kind = "ssort.splitters"
	KindSsortCounts    Kind = "ssort.counts"
	KindSsortTable     Kind = "ssort.table"
	KindSsortMerge     Kind = "ssort.merge"
	KindSsortValues    Kind = "ssort.values"
	KindSortLocal      Kind = "sort.local"
	KindSortMerge      Kind = "sort.merge"
	KindArgsortIndices Kind = "argsort.indices"
	KindHistMinMax     Kind = "histogram.minmax"
	KindHist           Kind = tensor.OpHistogram
	KindHistEdges      Kind = tensor.OpHistEdges
	KindHistCount      Kind = "histogram.count"
	KindBincount       Kind = tensor.OpBincount
	KindBincountLen    Kind = "bincount.len"
	KindPercentile     Kind = tensor.OpPercentile
	KindUniqueMap      Kind = "unique.map"
	KindUniqueMerge    Kind = "unique.merge"
	KindUniqueValues   Kind = "unique.values"
	KindUniqueCounts   Kind = tensor.OpUniqueCounts
	KindUniqueLen      Kind = "unique.len"
	KindGroupByMap     Kind = "groupby.map"     // a chunk's partials by group (GroupByArgs)
	KindGroupByCombine Kind = "groupby.combine" // partials combined
	KindGroupByFinal   Kind = "groupby.final"   // the result's chunk from its partials
)

// fixedKinds are the constants above, in their order.
var fixedKinds = []Kind{
	KindConst, KindFull, KindArange, KindLinspace, KindEye, KindRand, KindRandn, KindRandint, KindUniform, KindNormal, KindStored,
	KindFromNPY, KindFromZarr, KindToNPYCreate, KindToNPYWrite, KindToNPYCommit, KindToZarrCreate, KindToZarrWrite, KindToZarrCommit,
	KindAssemble, KindRechunkSplit, KindTranspose, KindReshape, KindConvert, KindDiagonal,
	KindFuse, KindMaps, KindExpr, KindExprPart,
	KindMatmul, KindMatmulSum, KindLabelSums, KindQRFactor, KindQRR, KindQRQ, KindQRQT, KindSVDSmall, KindSVDPart, KindSolve, KindInv,
	KindCholesky, KindCholeskyBlock, KindCholeskyUpdate, KindLinalgZeros, KindEigh, KindEighW, KindEighV,
	KindMaskCount, KindMaskLens, KindMaskSelect, KindTakeTouch, KindTakeTouches, KindTake, KindTakePiece,
	KindSearchsorted, KindIsin, KindIsinOr, KindNonempty,
	KindSsortSample, KindSsortSplitters, KindSsortCounts, KindSsortTable, KindSsortMerge, KindSsortValues,
	KindSortLocal, KindSortMerge, KindArgsortIndices,
	KindHistMinMax, KindHist, KindHistEdges, KindHistCount, KindBincount, KindBincountLen, KindPercentile,
	KindUniqueMap, KindUniqueMerge, KindUniqueValues, KindUniqueCounts, KindUniqueLen,
	KindGroupByMap, KindGroupByCombine, KindGroupByFinal,
}

// A Step is one of the ops a reduction or a scan of a whole tensor is
// tiled into.
type Step string

const (
	StepMap     Step = "map"     // a reduction's partial of one chunk
	StepCombine Step = "combine" // partials combined into one
	StepFinal   Step = "final"   // the result's chunk from its partials
	StepLocal   Step = "local"   // a scan within one chunk
	StepCarry   Step = "carry"   // the running total of the chunks before
	StepOffset  Step = "offset"  // a local scan with the carry added
)

// ReduceSteps and ScanSteps are the steps of a reduction and of a scan.
var (
	ReduceSteps = []Step{StepMap, StepCombine, StepFinal}
	ScanSteps   = []Step{StepLocal, StepCarry, StepOffset}
	// Scans are the whole-tensor ops tiled as scans.
	Scans = []string{tensor.OpCumsum, tensor.OpCumprod}
)

// StepKind is the kind of step s of whole-tensor op op: "sum.map".
func StepKind(op string, s Step) Kind { return Kind(op + "." + string(s)) }

// Split returns the whole-tensor op and the step of a kind StepKind made
// ("sum", "map" of "sum.map"); for any other kind, the kind and "".
func (k Kind) Split() (string, Step) {
	op, s, _ := strings.Cut(string(k), ".")
	return op, Step(s)
}

// IsElem reports whether k is an elementwise op's kind.
func (k Kind) IsElem() bool { return tensor.ElemKinds[string(k)] }

// Kinds returns every kind an op can have but KindStored's: the constants,
// the elementwise ops, and the steps of every reduction and scan.
func Kinds() []Kind {
	var ks []Kind
	for _, k := range fixedKinds {
		if k != KindStored {
			ks = append(ks, k)
		}
	}
	for _, ops := range [][]string{tensor.ElemUnaryOps, tensor.ElemBinaryOps, {tensor.OpWhere}} {
		for _, op := range ops {
			ks = append(ks, Kind(op))
		}
	}
	for _, op := range tensor.Reductions {
		for _, s := range ReduceSteps {
			ks = append(ks, StepKind(op, s))
		}
	}
	for _, op := range Scans {
		for _, s := range ScanSteps {
			ks = append(ks, StepKind(op, s))
		}
	}
	return ks
}
