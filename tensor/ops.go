package tensor

var (
	ElemUnaryOps = []string{OpNegative, OpAbs, OpSqrt, OpExp, OpLog, OpLog1p, OpSin, OpCos, OpTan,
		OpTanh, OpFloor, OpCeil, OpRound, OpSign, OpLogicalNot, OpInvert, OpAstype,
		OpCbrt, OpLog2, OpLog10, OpExp2, OpArcsin, OpArccos, OpArctan, OpIsnan, OpIsinf, OpIsfinite,
		OpExpm1, OpSinh, OpCosh, OpArcsinh, OpArccosh, OpArctanh, OpDeg2rad, OpRad2deg, OpSignbit}
	ElemBinaryOps = []string{OpAdd, OpSubtract, OpMultiply, OpDivide, OpFloorDiv, OpMod, OpPower,
		OpMaximum, OpMinimum, OpEqual, OpNotEqual, OpLess, OpLessEq, OpGreater, OpGreaterEq,
		OpLogicalAnd, OpLogicalOr, OpBitAnd, OpBitOr,
		OpArctan2, OpHypot, OpFmax, OpFmin, OpNormalize,
		OpLogaddexp, OpLogaddexp2, OpCopysign, OpFmod, OpLdexp, OpBitXor}
)

// ElemKinds are the elementwise ops, whose chunk ops have the node's op as
// their kind.
var ElemKinds = setOf(ElemUnaryOps, ElemBinaryOps, []string{OpWhere})

// setOf returns the set of the strings of lists.
func setOf(lists ...[]string) map[string]bool {
	m := make(map[string]bool)
	for _, l := range lists {
		for _, s := range l {
			m[s] = true
		}
	}
	return m
}

func IsComparison(op string) bool {
	switch op {
	case OpEqual, OpNotEqual, OpLess, OpLessEq, OpGreater, OpGreaterEq:
		return true
	}
	return false
}

// Node ops. Creation ops have no inputs; elementwise ops take 1, 2 or 3
// inputs that broadcast against each other (NumPy rules) to Node.Shape.
const (
	// Creation.
	OpInput    = "input"     // a session tensor (kept output or upload), Attrs.Name
	OpScalar   = "scalar"    // a 0-d literal, Attrs.Value/IntValue
	OpFull     = "full"      // zeros, ones, empty and full
	OpArange   = "arange"    // Start + i*Step
	OpLinspace = "linspace"  // Start + i*Step, the parser computes Step
	OpEye      = "eye"       // ones on diagonal K of Shape (2-D)
	OpRand     = "rand"      // uniform [0, 1) float64
	OpRandn    = "randn"     // standard normal float64
	OpRandint  = "randint"   // uniform integers in [Low, High), int64
	OpUniform  = "uniform"   // uniform [Start, Step)
	OpNormal   = "normal"    // normal, mean Start, standard deviation Step
	OpFromNPY  = "from_npy"  // a .npy file read in place, Attrs.Path and the header's facts
	OpFromZarr = "from_zarr" // a Zarr array read in place, Attrs.Path and Attrs.Zarr

	// Elementwise, one input.
	OpNegative   = "negative"
	OpAbs        = "abs"
	OpSqrt       = "sqrt"
	OpExp        = "exp"
	OpLog        = "log"
	OpLog1p      = "log1p"
	OpSin        = "sin"
	OpCos        = "cos"
	OpTan        = "tan"
	OpTanh       = "tanh"
	OpFloor      = "floor"
	OpCeil       = "ceil"
	OpRound      = "round" // Attrs.Decimals; half to even as NumPy
	OpSign       = "sign"
	OpLogicalNot = "logical_not"
	OpInvert     = "invert" // ~: bitwise not, logical not on bool
	OpAstype     = "astype" // to Node.DType

	// Elementwise, two inputs.
	OpAdd        = "add"
	OpSubtract   = "subtract"
	OpMultiply   = "multiply"
	OpDivide     = "divide" // true division
	OpFloorDiv   = "floor_divide"
	OpMod        = "mod" // sign of the divisor, as NumPy
	OpPower      = "power"
	OpMaximum    = "maximum" // NaN-propagating, as NumPy
	OpMinimum    = "minimum"
	OpEqual      = "equal"
	OpNotEqual   = "not_equal"
	OpLess       = "less"
	OpLessEq     = "less_equal"
	OpGreater    = "greater"
	OpGreaterEq  = "greater_equal"
	OpLogicalAnd = "logical_and"
	OpLogicalOr  = "logical_or"
	OpBitAnd     = "bitwise_and" // &
	OpBitOr      = "bitwise_or"  // |

	// Elementwise, three inputs.
	OpWhere = "where" // where(cond, x, y)

	// Reductions over Attrs.Axes with Attrs.Keepdims.
	OpSum          = "sum"
	OpProd         = "prod"
	OpMean         = "mean"
	OpVar          = "var" // Attrs.Ddof
	OpStd          = "std" // Attrs.Ddof
	OpMin          = "min"
	OpMax          = "max"
	OpArgmin       = "argmin" // one axis or none (flat index); int64
	OpArgmax       = "argmax"
	OpAny          = "any"
	OpAll          = "all"
	OpCountNonzero = "count_nonzero"
	OpNansum       = "nansum"
	OpNanmean      = "nanmean"
	OpNanmax       = "nanmax"
	OpNanmin       = "nanmin"

	// Scans along Attrs.Axes[0] (the parser ravels first for axis=None).
	OpCumsum  = "cumsum"
	OpCumprod = "cumprod"

	// Shape.
	OpReshape   = "reshape"     // to Node.Shape, C order
	OpTranspose = "transpose"   // Attrs.Perm
	OpConcat    = "concatenate" // along Attrs.Axes[0]
	OpSlice     = "slice"       // Attrs.Slices; integer indexing is a slice then a reshape
	OpRechunk   = "rechunk"     // to Node.Chunks

	// Linear algebra.
	OpMatmul = "matmul" // 2-D @ 2-D; the parser reshapes 1-D operands
)

// Node ops of linear algebra, sorting and statistics. Functions of the spec
// language that return several tensors (q, r = linalg.qr(x)) become one node
// per result; the nodes share their inputs and Attrs, and their tile rules
// share the work common to them (the factorization), so it runs once.
const (
	// Factorizations of a 2-D input (m x n, k = min(m, n)), computed by TSQR:
	// per-row-block QR, then QR of the stacked R factors in a tree. Results
	// are float32 for float32 inputs and float64 otherwise, as in NumPy.
	OpQRQ   = "linalg.qr.q"  // Q of the reduced QR: m x k, orthonormal columns
	OpQRR   = "linalg.qr.r"  // R of the reduced QR: k x n, upper triangular
	OpSVDU  = "linalg.svd.u" // U of the reduced SVD (full_matrices=False): m x k
	OpSVDS  = "linalg.svd.s" // the singular values, decreasing: (k,)
	OpSVDVT = "linalg.svd.vt"

	OpSolve    = "linalg.solve"    // solve(a, b): a n x n, b (n,) or (n, nrhs)
	OpInv      = "linalg.inv"      // inverse of an n x n matrix
	OpCholesky = "linalg.cholesky" // lower factor L of a = L Lᵀ (lower triangle of a read)

	// Sorting along the last axis of a 1-D or 2-D input; NaNs sort last, as
	// in NumPy. Argsort is stable (NumPy's kind='stable') and gives int64
	// indices along the axis.
	OpSort    = "sort"
	OpArgsort = "argsort"

	// Statistics.
	OpHistogram  = "histogram"       // counts (int64) of Attrs.Bins equal bins over Attrs.Range, input flattened
	OpHistEdges  = "histogram.edges" // the Bins+1 edges of those bins
	OpBincount   = "bincount"        // counts (int64) of each value of a 1-D non-negative integer input, length max(Attrs.Minlength, max+1): tiled in stages
	OpPercentile = "percentile"      // Attrs.Q percentiles along the last axis of a 1-D or 2-D input, linear interpolation: float64 of shape (len(Q),) + rows
	OpMedian     = "median"          // median along the last axis of a 1-D or 2-D input: float32 for float32, float64 otherwise; shape () or (rows,)
	OpGroupBy    = "groupby"         // Attrs.Func (sum, mean, count, min, max, var, std, prod) of input 0 by group along Attrs.Axes[0], the groups given by input 1's integer labels (0 .. Attrs.Groups-1, one an element of that axis; others left out): that axis becomes Attrs.Groups long
)

// MaxOneChunk bounds the length of the outputs made as a single chunk
// whose length the spec gives (histogram's bins, bincount's minlength): 1 GiB
// of int64 counts.
const MaxOneChunk = 1 << 27

var Reductions = []string{OpSum, OpProd, OpMean, OpVar, OpStd, OpMin, OpMax, OpArgmin, OpArgmax,
	OpAny, OpAll, OpCountNonzero, OpNansum, OpNanmean, OpNanmax, OpNanmin}

// HistEdgesDType is the dtype of histogram's edges for data of dtype dt.
func HistEdgesDType(dt DType) DType {
	if dt == Float32 || dt == Float16 {
		return dt
	}
	return Float64
}

// Ops whose length the data decides.
const (
	OpUnique       = "unique"        // the sorted unique values of the flattened input: (?,)
	OpUniqueCounts = "unique.counts" // how often each of them occurs: int64 (?,)
)
