package spec

import (
	"fmt"
	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
	"slices"
)

// catalogueOps are the ops of graph_linalg.go with their number of inputs;
// infer hands them to inferCatalogue before its elementwise cases, which
// would otherwise take them for elementwise ops by their arity.
var catalogueOps = map[string]int{
	tensor.OpQRQ: 1, tensor.OpQRR: 1, tensor.OpSVDU: 1, tensor.OpSVDS: 1, tensor.OpSVDVT: 1,
	tensor.OpSolve: 2, tensor.OpInv: 1, tensor.OpCholesky: 1,
	tensor.OpSort: 1, tensor.OpArgsort: 1,
	tensor.OpHistogram: 1, tensor.OpHistEdges: 1, tensor.OpBincount: -1, tensor.OpPercentile: 1, tensor.OpMedian: 1,
	tensor.OpUnique: 1, tensor.OpUniqueCounts: 1,
}

// SolveDType is NumPy's result dtype for linalg functions of arrays of the
// given dtypes: float32 when all are float32, float64 otherwise.
func SolveDType(dts ...tensor.DType) tensor.DType {
	for _, d := range dts {
		if d != tensor.Float32 {
			return tensor.Float64
		}
	}
	return tensor.Float32
}

// inferCatalogue sets the shape and dtype of an op of graph_linalg.go, with
// NumPy's messages where the spec language can reach the error.
func inferCatalogue(n *Node) error {
	x := n.Inputs[0]
	nd := len(x.Shape)
	switch n.Op {
	case tensor.OpQRQ, tensor.OpQRR, tensor.OpSVDU, tensor.OpSVDS, tensor.OpSVDVT, tensor.OpInv, tensor.OpCholesky, tensor.OpSolve:
		if nd != 2 {
			return fmt.Errorf("%d-dimensional array given. Array must be at least two-dimensional", nd)
		}
	}
	m, k := 0, 0
	if nd == 2 {
		m, k = x.Shape[0], min(x.Shape[0], x.Shape[1])
	}
	switch n.Op {
	case tensor.OpInv, tensor.OpCholesky, tensor.OpSolve:
		if x.Shape[0] != x.Shape[1] {
			return fmt.Errorf("Last 2 dimensions of the array must be square")
		}
	}
	switch n.Op {
	case tensor.OpQRQ:
		n.Shape, n.DType = []int{m, k}, SolveDType(x.DType)
	case tensor.OpQRR:
		n.Shape, n.DType = []int{k, x.Shape[1]}, SolveDType(x.DType)
	case tensor.OpSVDU:
		n.Shape, n.DType = []int{m, k}, SolveDType(x.DType)
	case tensor.OpSVDS:
		n.Shape, n.DType = []int{k}, SolveDType(x.DType)
	case tensor.OpSVDVT:
		n.Shape, n.DType = []int{k, x.Shape[1]}, SolveDType(x.DType)
	case tensor.OpInv, tensor.OpCholesky:
		n.Shape, n.DType = slices.Clone(x.Shape), SolveDType(x.DType)
	case tensor.OpSolve:
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
		n.Shape, n.DType = slices.Clone(b.Shape), SolveDType(x.DType, b.DType)
	case tensor.OpSort, tensor.OpArgsort:
		if nd != 1 && nd != 2 {
			return fmt.Errorf("%s of a %d-D array is not supported yet (1-D, and 2-D along either axis, are)", n.Op, nd)
		}
		n.Shape, n.DType = slices.Clone(x.Shape), x.DType
		if n.Op == tensor.OpArgsort {
			n.DType = tensor.Int64
		}
	case tensor.OpHistogram, tensor.OpHistEdges:
		a := n.Attrs
		if a.Bins < 1 {
			return fmt.Errorf("`bins` must be positive, when an integer")
		}
		if a.Bins > tensor.MaxOneChunk {
			return fmt.Errorf("bins=%d is too many: the histogram is one chunk of at most %d bins", a.Bins, tensor.MaxOneChunk)
		}
		if a.Range != nil {
			if len(a.Range) != 2 {
				return fmt.Errorf("range must be a pair (low, high)")
			}
			if a.Range[0] > a.Range[1] {
				return fmt.Errorf("max must be larger than min in range parameter.")
			}
			if !finite(a.Range[0]) || !finite(a.Range[1]) {
				return fmt.Errorf("supplied range of [%s, %s] is not finite", syntax.PyFloat(a.Range[0]), syntax.PyFloat(a.Range[1]))
			}
		}
		if n.Op == tensor.OpHistogram {
			n.Shape, n.DType = []int{a.Bins}, tensor.Int64
		} else {
			n.Shape, n.DType = []int{a.Bins + 1}, tensor.HistEdgesDType(x.DType)
		}
	case tensor.OpBincount:
		if nd != 1 {
			return fmt.Errorf("object too deep for desired array")
		}
		if !x.DType.IsInt() && x.DType != tensor.Bool {
			return fmt.Errorf("Cannot cast array data from dtype('%s') to dtype('int64') according to the rule 'safe'", x.DType)
		}
		if n.Attrs.Minlength < 0 {
			return fmt.Errorf("'minlength' must not be negative")
		}
		if n.Attrs.Minlength > tensor.MaxOneChunk {
			return fmt.Errorf("minlength=%d is too long: the counts are one chunk of at most %d", n.Attrs.Minlength, tensor.MaxOneChunk)
		}
		// max(minlength, max(x)+1): known once a stage has run.
		n.Shape, n.DType = []int{tensor.Unknown}, tensor.Int64
		switch len(n.Inputs) {
		case 1:
		case 2: // weights: the sums of each value's, float64 as NumPy's
			w := n.Inputs[1]
			if len(w.Shape) != 1 || tensor.HasUnknown(w.Shape) || tensor.HasUnknown(x.Shape) || w.Shape[0] != x.Shape[0] {
				return fmt.Errorf("The weights and list don't have the same length.")
			}
			n.DType = tensor.Float64
		default:
			return fmt.Errorf("bincount takes x and its weights, not %d inputs", len(n.Inputs))
		}
	case tensor.OpUnique, tensor.OpUniqueCounts:
		if nd != 1 {
			return fmt.Errorf("%s takes the flattened array, not one of shape %s", n.Op, ShapeString(x.Shape))
		}
		n.Shape, n.DType = []int{tensor.Unknown}, x.DType
		if n.Op == tensor.OpUniqueCounts {
			n.DType = tensor.Int64
		}
	case tensor.OpPercentile, tensor.OpMedian:
		if nd != 1 && nd != 2 {
			return fmt.Errorf("%s of a %d-D array along its last axis is not supported yet (1-D and 2-D are)", n.Op, nd)
		}
		// Of an empty array NumPy's median is nan (with a warning), and so
		// are nanmedian's and nanpercentile's of only NaNs, whose masks
		// leave nothing: the tile rule fills nan. A percentile of an array
		// known empty is refused as the spec is read (lang), as NumPy does.
		var rows []int
		if nd == 2 {
			rows = []int{x.Shape[0]}
		}
		discrete, known := tensor.QuantileMethods[n.Attrs.Func]
		if n.Op == tensor.OpPercentile && n.Attrs.Func != "" && !known {
			return fmt.Errorf("'%s' is not a valid method. Use one of: %s", n.Attrs.Func, quantileMethodList())
		}
		if x.DType == tensor.Bool && n.Op == tensor.OpPercentile && !discrete {
			return fmt.Errorf("numpy boolean subtract, the `-` operator, is not supported")
		}
		if n.Op == tensor.OpMedian {
			n.Shape, n.DType = append([]int{}, rows...), tensor.HistEdgesDType(x.DType)
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
		n.Shape, n.DType = append([]int{len(n.Attrs.Q)}, rows...), tensor.Float64
		if discrete {
			// A method that picks a value keeps the data's dtype.
			n.DType = x.DType
		}
	default:
		return fmt.Errorf("unknown op %q", n.Op)
	}
	return nil
}

func finite(v float64) bool { return v == v && v-v == 0 }

func inferEigh(n *Node) error {
	x := n.Inputs[0]
	if len(x.Shape) != 2 {
		return fmt.Errorf("%d-dimensional array given. Array must be at least two-dimensional", len(x.Shape))
	}
	if x.Shape[0] != x.Shape[1] {
		return fmt.Errorf("Last 2 dimensions of the array must be square")
	}
	if n.Attrs.K != 0 && n.Attrs.K != 1 {
		return fmt.Errorf("eigh: K must be 0 (lower) or 1 (upper)")
	}
	n.DType = SolveDType(x.DType)
	n.Shape = []int{x.Shape[0]}
	if n.Op == tensor.OpEighV {
		n.Shape = []int{x.Shape[0], x.Shape[0]}
	}
	return nil
}

// quantileMethodList names NumPy's quantile methods in its order.
func quantileMethodList() string {
	return "inverted_cdf, averaged_inverted_cdf, closest_observation, interpolated_inverted_cdf, hazen, weibull, linear, median_unbiased, normal_unbiased, lower, higher, midpoint, nearest"
}
