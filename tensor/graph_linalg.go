package tensor

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
)
