package chunk

import "marsfs/tensor"

// GroupByArgs are the arguments of the ops a group-by reduction is tiled
// into, in the manner of flox: a "groupby.map" op reduces one chunk of x
// (input 0) by the labels of its elements along Axis (input 1, 1-D), a
// tree of "groupby.combine" ops merges the partials of the chunks along
// Axis, and a "groupby.final" op makes the result's chunk, whose Axis is
// Groups long. Labels outside 0 .. Groups-1 are left out, as flox leaves
// out labels not among the expected groups; a group no element has gives
// 0 (sum, count), 1 (prod) or NaN (the others).
//
// A partial is a flat array of Acc: Stats blocks of Groups*outer*inner
// accumulators, group-major (outer: the product of the chunk's axes
// before Axis, inner: after it; a combine finds an accumulator's group
// from its index and the partial's length alone), then Groups counts.
// The accumulators of a group whose count is 0 are undefined and never
// read: a chunk holding a few of the groups writes only theirs.
type GroupByArgs struct {
	Func   string // sum, mean, count, min, max, var, std, prod
	Axis   int
	Groups int
	Ddof   int          // var and std
	In     tensor.DType // x's
	Acc    tensor.DType // the partials': Int64 for exact integer sums, products and extrema, else Float64
}

// GroupByStats is how many blocks of accumulators a partial of f holds:
// a mean keeps the sum, var and std the mean and the sum of squared
// deviations, count nothing but the counts.
func GroupByStats(f string) int {
	switch f {
	case "count":
		return 0
	case "var", "std":
		return 2
	}
	return 1
}

// GroupByAcc is the dtype of the partials of f over x of dtype in.
func GroupByAcc(f string, in tensor.DType) tensor.DType {
	switch f {
	case "count":
		return tensor.Int64
	case "sum", "prod", "min", "max":
		if !in.IsFloat() {
			return tensor.Int64
		}
	}
	return tensor.Float64
}

// GroupByPartialLen is the length of a partial of f for a chunk with outer
// and inner elements around the axis.
func GroupByPartialLen(f string, outer, groups, inner int) int {
	return GroupByStats(f)*outer*groups*inner + groups
}
