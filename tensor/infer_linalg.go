package tensor

import "fmt"

// Ops of factorizations, solvers and sorting. Their tile rules and kernels
// live in other files of the package, which register them in tileRules; the
// parser accepts these ops only when their rules are registered, and
// reports the functions that make them as not supported otherwise. The
// strings are the ops' names in those files.
const (
	opQRQ      = "linalg.qr.q"     // Q of the reduced QR of a 2-D input: m x k, k = min(m, n)
	opQRR      = "linalg.qr.r"     // R: k x n
	opSVDU     = "linalg.svd.u"    // U of the reduced SVD: m x k
	opSVDS     = "linalg.svd.s"    // singular values: (k,)
	opSVDVT    = "linalg.svd.vt"   // Vᵀ: k x n
	opSolve    = "linalg.solve"    // solve(a, b): a n x n, b (n,) or (n, nrhs)
	opInv      = "linalg.inv"      // n x n
	opCholesky = "linalg.cholesky" // lower factor of an n x n matrix
	opSort     = "sort"            // along the last axis of a 1-D or 2-D input
	opArgsort  = "argsort"         // int64 indices, stable
)

func init() {
	for _, op := range []string{opQRQ, opQRR, opSVDU, opSVDS, opSVDVT, opInv, opCholesky, opSort, opArgsort} {
		opArity[op] = 1
		linalgOps[op] = true
	}
	opArity[opSolve] = 2
	linalgOps[opSolve] = true
}

// linalgOps is the set of the ops above.
var linalgOps = map[string]bool{}

// available reports whether op can be tiled in this build.
func available(op string) bool {
	_, ok := tileRules[op]
	return ok
}

// linalgType is the dtype NumPy's linalg functions give for inputs of dt.
func linalgType(dt DType) DType {
	if dt == Float32 {
		return Float32
	}
	return Float64
}

// inferLinalg checks a node of one of the ops above and sets its shape and
// dtype.
func inferLinalg(n *Node) error {
	if !available(n.Op) {
		return fmt.Errorf("%s is not supported yet", n.Op)
	}
	x := n.Inputs[0]
	s := x.Shape
	switch n.Op {
	case opSort, opArgsort:
		if len(s) != 1 && len(s) != 2 {
			return fmt.Errorf("%s of a %d-D tensor is not supported (1-D and 2-D only)", n.Op, len(s))
		}
		n.Shape, n.DType = cloneInts(s), x.DType
		if n.Op == opArgsort {
			n.DType = Int64
		}
		return nil
	}
	if len(s) != 2 {
		return fmt.Errorf("%d-dimensional array given. Array must be two-dimensional", len(s))
	}
	m, c := s[0], s[1]
	k := min(m, c)
	n.DType = linalgType(x.DType)
	switch n.Op {
	case opQRQ, opSVDU:
		n.Shape = []int{m, k}
		return nil
	case opQRR, opSVDVT:
		n.Shape = []int{k, c}
		return nil
	case opSVDS:
		n.Shape = []int{k}
		return nil
	}
	if m != c {
		return fmt.Errorf("Last 2 dimensions of the array must be square")
	}
	if n.Op != opSolve {
		n.Shape = cloneInts(s)
		return nil
	}
	b := n.Inputs[1]
	if len(b.Shape) != 1 && len(b.Shape) != 2 || b.Shape[0] != m {
		return fmt.Errorf("solve: a right-hand side of shape %s does not fit a %dx%d matrix", shapeString(b.Shape), m, m)
	}
	n.Shape, n.DType = cloneInts(b.Shape), linalgType(Promote(x.DType, b.DType))
	return nil
}
