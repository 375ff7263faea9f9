package tensor

// The elementwise math a NumPy user reaches for beyond the basic ufuncs.
// They tile, fuse and run like the others (ElemUnaryOps, ElemBinaryOps).
const (
	// One input, computed in floating point (bool and integers give the
	// smallest float that holds them, as NumPy's loops do).
	OpCbrt    = "cbrt"
	OpLog2    = "log2"
	OpLog10   = "log10"
	OpExp2    = "exp2"
	OpArcsin  = "arcsin"
	OpArccos  = "arccos"
	OpArctan  = "arctan"
	OpExpm1   = "expm1"
	OpSinh    = "sinh"
	OpCosh    = "cosh"
	OpArcsinh = "arcsinh"
	OpArccosh = "arccosh"
	OpArctanh = "arctanh"
	OpDeg2rad = "deg2rad"
	OpRad2deg = "rad2deg"

	// One input, a bool result: false (isnan, isinf) or true (isfinite)
	// for every bool and integer.
	OpIsnan    = "isnan"
	OpIsinf    = "isinf"
	OpIsfinite = "isfinite"
	// OpSignbit is true where the sign bit is set: a negative number, -0.0,
	// a NaN with its sign bit.
	OpSignbit = "signbit"

	// Two inputs. arctan2 and hypot compute in floating point; fmax and
	// fmin are maximum and minimum that ignore a NaN when the other
	// operand is a number.
	OpArctan2 = "arctan2"
	OpHypot   = "hypot"
	OpFmax    = "fmax"
	OpFmin    = "fmin"
	// logaddexp and logaddexp2 are log(exp(x) + exp(y)) (base 2) without
	// overflow, copysign x's magnitude with y's sign: in floating point.
	OpLogaddexp  = "logaddexp"
	OpLogaddexp2 = "logaddexp2"
	OpCopysign   = "copysign"
	// OpFmod is C's remainder, of the dividend's sign (mod's is the
	// divisor's); of integers by 0 it is 0, as NumPy's.
	OpFmod = "fmod"
	// OpLdexp is x * 2**e for integers e, in x's floating point.
	OpLdexp = "ldexp"
	// OpBitXor is ^ of bools and integers.
	OpBitXor = "bitwise_xor"
	// OpNormalize is x / w that refuses a w of zero, as NumPy's average
	// refuses weights summing to zero ("Weights sum to zero, can't be
	// normalized"), which it checks before it divides.
	OpNormalize = "normalize"
)

// IsClassify reports whether op is one of the float classifications
// (isnan, isinf, isfinite, signbit), whose result is bool whatever the
// input.
func IsClassify(op string) bool {
	return op == OpIsnan || op == OpIsinf || op == OpIsfinite || op == OpSignbit
}

// OpDiagonal is the Attrs.K-th diagonal of a 2-D input (K > 0 above the
// main one), 1-D: one chunk op a diagonal block, reading that block only.
const OpDiagonal = "diagonal"

// OpMask is x[m] for a bool m whose shape is the first axes of x's: the
// elements (or, for fewer axes, the sub-arrays) where m is true, in C
// order, along a first axis of a length the data decides. It tiles in two
// stages: each block of m counts its trues while the blocks of x are cut
// to their selected rows; the counts become the result's chunks.
const OpMask = "mask"

// linalg.eigh of a symmetric n x n input, Attrs.K 0 reading its lower
// triangle (UPLO='L'), 1 its upper: the eigenvalues ascending (n,) and the
// eigenvectors in columns (n x n), float32 for float32 input and float64
// otherwise. It gathers the matrix into one chunk, as NumPy's LAPACK call
// holds it whole: no tiled rule for it here.
const (
	OpEighW = "linalg.eigh.w"
	OpEighV = "linalg.eigh.v"
)

// OpTake is x[i] for an integer array i (int64, each in [0, len(x))):
// the rows of x along its first axis that i names, of shape i.shape +
// x.shape[1:]. It tiles in two stages: each block of i first says which
// blocks of x its indices fall in, and then reads only those.
const OpTake = "take"

// Lookups in a second array, tiled as a block of the first input against
// every block of the second, the partial answers combined in a tree.
const (
	// OpSearchsorted is searchsorted(a, v): for each element of v
	// (input 1) the number of elements of the sorted 1-D a (input 0) that
	// sort before it (Attrs.K 1, side='right': not after it), in NumPy's
	// order (NaNs last), int64 of v's shape.
	OpSearchsorted = "searchsorted"
	// OpIsin is isin(element, test): whether each element (input 0)
	// equals one of test's (input 1, any shape), bool of element's shape.
	// Both have one dtype; NaN equals nothing.
	OpIsin = "isin"
)

// OpArray is a literal array written in the spec (array([[1, 2], [3, 4]]),
// a list as an index or argument): Attrs.Data holds its little-endian C
// order bytes, cut into "const" chunks like an upload.
const OpArray = "array"

// MaxArrayLiteral bounds the elements of a literal array: specs are text.
const MaxArrayLiteral = 1 << 16

// OpNonEmpty passes its first input (a reduction of a mask's values)
// through when its second, an int64 count, is not 0, and fails the graph
// with NumPy's error for a reduction without identity of an empty array
// (Attrs.Name: "maximum", "minimum") when it is.
const OpNonEmpty = "nonempty"

// AllNaNSlice, as OpNonEmpty's Attrs.Name, fails with NumPy's error of
// nanargmin and nanargmax of a slice of only NaNs ("All-NaN slice
// encountered"); the value passed may then have any shape.
const AllNaNSlice = "all-nan"
