package tensor

import (
	"fmt"
	"slices"
)

// catalogueOps are the ops of graph_linalg.go with their number of inputs;
// infer hands them to inferCatalogue before its elementwise cases, which
// would otherwise take them for elementwise ops by their arity.
var catalogueOps = map[string]int{
	OpQRQ: 1, OpQRR: 1, OpSVDU: 1, OpSVDS: 1, OpSVDVT: 1,
	OpSolve: 2, OpInv: 1, OpCholesky: 1,
	OpSort: 1, OpArgsort: 1,
	OpHistogram: 1, OpHistEdges: 1, OpBincount: 1, OpPercentile: 1, OpMedian: 1,
	OpUnique: 1, OpUniqueCounts: 1,
}

// solveDType is NumPy's result dtype for linalg functions of arrays of the
// given dtypes: float32 when all are float32, float64 otherwise.
func solveDType(dts ...DType) DType {
	for _, d := range dts {
		if d != Float32 {
			return Float64
		}
	}
	return Float32
}

// inferCatalogue sets the shape and dtype of an op of graph_linalg.go, with
// NumPy's messages where the spec language can reach the error.
func inferCatalogue(n *Node) error {
	x := n.Inputs[0]
	nd := len(x.Shape)
	switch n.Op {
	case OpQRQ, OpQRR, OpSVDU, OpSVDS, OpSVDVT, OpInv, OpCholesky, OpSolve:
		if nd != 2 {
			return fmt.Errorf("%d-dimensional array given. Array must be at least two-dimensional", nd)
		}
	}
	m, k := 0, 0
	if nd == 2 {
		m, k = x.Shape[0], min(x.Shape[0], x.Shape[1])
	}
	switch n.Op {
	case OpInv, OpCholesky, OpSolve:
		if x.Shape[0] != x.Shape[1] {
			return fmt.Errorf("Last 2 dimensions of the array must be square")
		}
	}
	switch n.Op {
	case OpQRQ:
		n.Shape, n.DType = []int{m, k}, solveDType(x.DType)
	case OpQRR:
		n.Shape, n.DType = []int{k, x.Shape[1]}, solveDType(x.DType)
	case OpSVDU:
		n.Shape, n.DType = []int{m, k}, solveDType(x.DType)
	case OpSVDS:
		n.Shape, n.DType = []int{k}, solveDType(x.DType)
	case OpSVDVT:
		n.Shape, n.DType = []int{k, x.Shape[1]}, solveDType(x.DType)
	case OpInv, OpCholesky:
		n.Shape, n.DType = slices.Clone(x.Shape), solveDType(x.DType)
	case OpSolve:
		b := n.Inputs[1]
		switch {
		case len(b.Shape) == 0:
			return fmt.Errorf("solve: Input operand 1 does not have enough dimensions (has 0, gufunc core with signature (m,m),(m,n)->(m,n) requires 2)")
		case len(b.Shape) > 2:
			return fmt.Errorf("solve with a stack of right-hand sides (%d-D) is not supported yet", len(b.Shape))
		case len(b.Shape) == 1 && b.Shape[0] != m:
			return fmt.Errorf("solve1: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (m,m),(m)->(m) (size %d is different from %d)", b.Shape[0], m)
		case b.Shape[0] != m:
			return fmt.Errorf("solve: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (m,m),(m,n)->(m,n) (size %d is different from %d)", b.Shape[0], m)
		}
		n.Shape, n.DType = slices.Clone(b.Shape), solveDType(x.DType, b.DType)
	case OpSort, OpArgsort:
		if nd != 1 && nd != 2 {
			return fmt.Errorf("%s of a %d-D array is not supported yet (1-D, and 2-D along either axis, are)", n.Op, nd)
		}
		n.Shape, n.DType = slices.Clone(x.Shape), x.DType
		if n.Op == OpArgsort {
			n.DType = Int64
		}
	case OpHistogram, OpHistEdges:
		a := n.Attrs
		if a.Bins < 1 {
			return fmt.Errorf("`bins` must be positive, when an integer")
		}
		if a.Bins > maxOneChunk {
			return fmt.Errorf("bins=%d is too many: the histogram is one chunk of at most %d bins", a.Bins, maxOneChunk)
		}
		if a.Range != nil {
			if len(a.Range) != 2 {
				return fmt.Errorf("range must be a pair (low, high)")
			}
			if a.Range[0] > a.Range[1] {
				return fmt.Errorf("max must be larger than min in range parameter.")
			}
			if !finite(a.Range[0]) || !finite(a.Range[1]) {
				return fmt.Errorf("supplied range of [%s, %s] is not finite", pyFloat(a.Range[0]), pyFloat(a.Range[1]))
			}
		}
		if n.Op == OpHistogram {
			n.Shape, n.DType = []int{a.Bins}, Int64
		} else {
			n.Shape, n.DType = []int{a.Bins + 1}, histEdgesDType(x.DType)
		}
	case OpBincount:
		if nd != 1 {
			return fmt.Errorf("object too deep for desired array")
		}
		if !x.DType.IsInt() && x.DType != Bool {
			return fmt.Errorf("Cannot cast array data from dtype('%s') to dtype('int64') according to the rule 'safe'", x.DType)
		}
		if n.Attrs.Minlength < 0 {
			return fmt.Errorf("'minlength' must not be negative")
		}
		if n.Attrs.Minlength > maxOneChunk {
			return fmt.Errorf("minlength=%d is too long: the counts are one chunk of at most %d", n.Attrs.Minlength, maxOneChunk)
		}
		// max(minlength, max(x)+1): known once a stage has run.
		n.Shape, n.DType = []int{Unknown}, Int64
	case OpUnique, OpUniqueCounts:
		if nd != 1 {
			return fmt.Errorf("%s takes the flattened array, not one of shape %s", n.Op, shapeString(x.Shape))
		}
		n.Shape, n.DType = []int{Unknown}, x.DType
		if n.Op == OpUniqueCounts {
			n.DType = Int64
		}
	case OpPercentile, OpMedian:
		if nd != 1 && nd != 2 {
			return fmt.Errorf("%s of a %d-D array along its last axis is not supported yet (1-D and 2-D are)", n.Op, nd)
		}
		if x.Shape[nd-1] == 0 {
			return fmt.Errorf("%s of an empty array", n.Op)
		}
		var rows []int
		if nd == 2 {
			rows = []int{x.Shape[0]}
		}
		if x.DType == Bool && n.Op == OpPercentile {
			return fmt.Errorf("numpy boolean subtract, the `-` operator, is not supported")
		}
		if n.Op == OpMedian {
			n.Shape, n.DType = append([]int{}, rows...), histEdgesDType(x.DType)
			break
		}
		if len(n.Attrs.Q) == 0 {
			return fmt.Errorf("percentile needs at least one q")
		}
		for _, q := range n.Attrs.Q {
			if !(q >= 0 && q <= 100) {
				return fmt.Errorf("Percentiles must be in the range [0, 100]")
			}
		}
		n.Shape, n.DType = append([]int{len(n.Attrs.Q)}, rows...), Float64
	default:
		return fmt.Errorf("unknown op %q", n.Op)
	}
	return nil
}

// maxOneChunk bounds the length of the outputs made as a single chunk
// whose length the spec gives (histogram's bins, bincount's minlength): 1 GiB
// of int64 counts.
const maxOneChunk = 1 << 27

func finite(v float64) bool { return v == v && v-v == 0 }
