package tensor

// A Graph is a parsed spec: whole-tensor (tileable) operations with their
// shapes, dtypes and chunkings inferred, and the names the spec outputs.
//
// Graphs are built by Parse (the text form) and ParseJSON (the JSON form) and
// cut into chunk operands by Tile.
type Graph struct {
	// Nodes in topological order: every node's inputs come before it.
	Nodes []*Node
	// Outputs are the fetched names in the order the spec lists them.
	Outputs []Output
	// Source is the spec's text as submitted.
	Source string
}

// Output names one fetched tensor of a graph.
type Output struct {
	Name string
	Node *Node
}

// A Node is one whole-tensor operation. The parser lowers the spec language's
// conveniences (clip, stack, outer, tensordot, squeeze, .T, linalg.norm, ...)
// onto this smaller set of ops, so that tiling has one rule per Op.
type Node struct {
	ID     int    // index in Graph.Nodes
	Op     string // one of the Op* constants
	Inputs []*Node
	Shape  []int
	DType  DType
	// Chunks holds the chunk sizes along each axis (like Dask's chunks); the
	// last chunk along an axis may be smaller than the others (ragged). The
	// parser sets it on creation ops (from chunks= or the default chunking),
	// OpScalar (no axes), OpInput (the stored tensor's) and OpRechunk (the
	// target); every other op leaves it nil and its tile rule chooses.
	Chunks [][]int
	// Weak marks a Python scalar literal: in dtype promotion it yields to an
	// array operand of the same kind (NumPy's value-based casting for
	// scalars: float32 array * 2.0 stays float32).
	Weak bool
	// Attrs are the op's parameters; which fields matter depends on Op.
	Attrs Attrs
}

// Attrs are the parameters of a Node. Each op documents the fields it uses
// next to its constant; the rest stay zero.
type Attrs struct {
	Value    float64 // OpFull, OpScalar: the fill value (IntValue for int dtypes)
	IntValue int64   // OpFull, OpScalar with an integer or bool dtype
	Start    float64 // OpArange, OpLinspace: first value; OpUniform: low; OpNormal: loc
	Step     float64 // OpArange, OpLinspace: spacing; OpUniform: high; OpNormal: scale
	Low      int64   // OpRandint: low (inclusive)
	High     int64   // OpRandint: high (exclusive)
	K        int     // OpEye: diagonal offset
	Seed     uint64  // random generators
	Axes     []int   // reductions: sorted axes (nil for all); OpCumsum/OpCumprod/OpConcat: Axes[0]
	Keepdims bool    // reductions
	Ddof     int     // OpVar, OpStd
	Decimals int     // OpRound
	Perm     []int   // OpTranspose
	Slices   []Slice // OpSlice: one per input axis, normalized (0 <= Start, Step != 0)
	Name     string  // OpInput: the session tensor's name

	Bins      int       // OpHistogram, OpHistEdges: the number of bins
	Range     []float64 // OpHistogram, OpHistEdges: [low, high]; nil for the data's min and max
	Minlength int       // OpBincount: the least output length
	Q         []float64 // OpPercentile: the percentiles, in [0, 100]

	// Pending holds, for an OpSlice of an input whose shape the data decides,
	// the index as written, one entry an axis; Slices is resolved from it
	// once the lengths are known (see stage.go).
	Pending []PendingSlice
}

// Slice selects Start, Start+Step, ... (Len elements) along one axis; Step may
// be negative. Bounds are resolved against the axis length by the parser.
type Slice struct {
	Start, Step, Len int
}

// Node ops. Creation ops have no inputs; elementwise ops take 1, 2 or 3
// inputs that broadcast against each other (NumPy rules) to Node.Shape.
const (
	// Creation.
	OpInput    = "input"    // a session tensor (kept output or upload), Attrs.Name
	OpScalar   = "scalar"   // a 0-d literal, Attrs.Value/IntValue
	OpFull     = "full"     // zeros, ones, empty and full
	OpArange   = "arange"   // Start + i*Step
	OpLinspace = "linspace" // Start + i*Step, the parser computes Step
	OpEye      = "eye"      // ones on diagonal K of Shape (2-D)
	OpRand     = "rand"     // uniform [0, 1) float64
	OpRandn    = "randn"    // standard normal float64
	OpRandint  = "randint"  // uniform integers in [Low, High), int64
	OpUniform  = "uniform"  // uniform [Start, Step)
	OpNormal   = "normal"   // normal, mean Start, standard deviation Step

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
