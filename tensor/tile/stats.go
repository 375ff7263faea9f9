package tile

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// StatsCombine is how many partial results one combining op reads.
const StatsCombine = 8

// tree combines parts with ops made by mk (fan-in statsCombine) and returns
// the key of the last.
func (t *tiler) tree(parts []uint64, mk func(inputs []int) uint64) uint64 {
	for len(parts) > 1 {
		var next []uint64
		for s := 0; s < len(parts); s += StatsCombine {
			group := parts[s:min(s+StatsCombine, len(parts))]
			if len(group) == 1 {
				next = append(next, group[0])
				continue
			}
			inputs := make([]int, len(group))
			for i, k := range group {
				inputs[i] = int(k)
			}
			next = append(next, mk(inputs))
		}
		parts = next
	}
	return parts[0]
}

func tileHistogram(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	if len(n.Inputs) != 1 {
		return nil, fmt.Errorf("need 1 input, have %d", len(n.Inputs))
	}
	x := t.input(n, 0)
	bins, rng := n.Attrs.Bins, n.Attrs.Range
	if bins < 1 {
		return nil, fmt.Errorf("bins must be positive, not %d", bins)
	}
	if rng != nil && (len(rng) != 2 || !(rng[0] <= rng[1]) || math.IsInf(rng[0], 0) || math.IsInf(rng[1], 0)) {
		return nil, fmt.Errorf("range %v is not a finite [low, high] with low <= high", rng)
	}
	edt := tensor.HistEdgesDType(x.DType)
	args := chunk.HistArgs{Bins: bins, Range: rng, Edges: edt}
	// The data's range, shared by the histogram and its edges.
	rangeKey := -1
	if rng == nil {
		v, _ := t.sharedFor("histrange", n, func() (any, error) {
			var parts []uint64
			for _, in := range x.Keys {
				parts = append(parts, t.emit(&chunk.Op{Kind: chunk.KindHistMinMax, Inputs: []int{int(in)}, Shape: []int{3}, DType: tensor.Float64, Args: chunk.HistArgs{}}))
			}
			top := t.tree(parts, func(inputs []int) uint64 {
				return t.emit(&chunk.Op{Kind: chunk.KindHistMinMax, Inputs: inputs, Shape: []int{3}, DType: tensor.Float64, Args: chunk.HistArgs{Combine: true}})
			})
			return t.emit(&chunk.Op{Kind: chunk.KindHist, Inputs: []int{int(top)}, Shape: []int{2}, DType: tensor.Float64}), nil
		})
		rangeKey = int(v.(uint64))
	}
	withRange := func(in ...int) []int {
		if rangeKey >= 0 {
			in = append(in, rangeKey)
		}
		return in
	}
	if n.Op == tensor.OpHistEdges {
		if !slices.Equal(n.Shape, []int{bins + 1}) || n.DType != edt {
			return nil, fmt.Errorf("node %v%v, want %v%v", n.DType, n.Shape, edt, []int{bins + 1})
		}
		key := t.emit(&chunk.Op{Kind: chunk.KindHistEdges, Inputs: withRange(), Shape: n.Shape, DType: edt, Args: args})
		return &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{{bins + 1}}, Keys: []uint64{key}}, nil
	}
	if !slices.Equal(n.Shape, []int{bins}) || n.DType != tensor.Int64 {
		return nil, fmt.Errorf("node %v%v, want int64%v", n.DType, n.Shape, []int{bins})
	}
	var parts []uint64
	for _, in := range x.Keys {
		parts = append(parts, t.emit(&chunk.Op{Kind: chunk.KindHistCount, Inputs: withRange(int(in)), Shape: n.Shape, DType: tensor.Int64, Args: args}))
	}
	key := t.sumTree(parts, n.Shape, tensor.Int64)
	return &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{{bins}}, Keys: []uint64{key}}, nil
}

// tileBincount counts each chunk's values into a whole-length partial
// (with weights, input 1 rechunked as x, their sums, float64) and adds the
// partials in a tree.
func tileBincount(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	if len(n.Inputs) != 1 && len(n.Inputs) != 2 {
		return nil, fmt.Errorf("need 1 or 2 inputs, have %d", len(n.Inputs))
	}
	x := t.input(n, 0)
	if len(x.Shape) != 1 || !(x.DType.IsInt() || x.DType == tensor.Bool) {
		return nil, fmt.Errorf("bincount needs a 1-D array of non-negative integers, not %v%v", x.DType, x.Shape)
	}
	dt := tensor.Int64
	var w *tensor.TiledTensor
	if len(n.Inputs) == 2 {
		dt, w = tensor.Float64, t.input(n, 1)
		if !SameChunks(w.Chunks, x.Chunks) {
			w = t.rechunk(w, x.Chunks)
		}
	}
	if len(n.Shape) != 1 || n.Shape[0] < n.Attrs.Minlength || n.DType != dt {
		return nil, fmt.Errorf("node %v%v, want %v of at least %d", n.DType, n.Shape, dt, n.Attrs.Minlength)
	}
	m := n.Shape[0]
	var parts []uint64
	for i, in := range x.Keys {
		ins := []int{int(in)}
		if w != nil {
			ins = append(ins, int(w.Keys[i]))
		}
		parts = append(parts, t.emit(&chunk.Op{Kind: chunk.KindBincount, Inputs: ins, Shape: n.Shape, DType: dt, Args: chunk.BincountArgs{Minlength: m}}))
	}
	if len(parts) == 0 {
		parts = append(parts, t.emit(&chunk.Op{Kind: chunk.KindLinalgZeros, Shape: n.Shape, DType: dt}))
	}
	key := t.sumTree(parts, n.Shape, dt)
	return &tensor.TiledTensor{Shape: n.Shape, DType: dt, Chunks: [][]int{{m}}, Keys: []uint64{key}}, nil
}

// tilePercentile tiles percentile and median along the last axis of a 1-D
// or 2-D input: one op a row chunk reads the blocks of the sorted rows that
// hold the ranks it needs. The output is the percentiles' axis (percentile
// only) followed by the rows of a 2-D input.
func tilePercentile(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	if len(n.Inputs) != 1 {
		return nil, fmt.Errorf("need 1 input, have %d", len(n.Inputs))
	}
	x := t.input(n, 0)
	nd := len(x.Shape)
	if nd != 1 && nd != 2 {
		return nil, fmt.Errorf("%s of a %d-D tensor: only 1-D and 2-D (along the last axis) are supported", n.Op, nd)
	}
	size := x.Shape[nd-1]
	if size == 0 {
		// NumPy's median of nothing is NaN, and so are nanmedian's and
		// nanpercentile's of only NaNs, whose masks leave nothing here.
		return nanFill(t, n), nil
	}
	args := chunk.PercentileArgs{N: size, Q: n.Attrs.Q, Median: n.Op == tensor.OpMedian, SkipNaN: n.Attrs.SkipNaN, Method: n.Attrs.Func}
	var ranks, want []int
	dt := tensor.Float64
	if tensor.QuantileMethods[args.Method] {
		dt = x.DType
	}
	if args.Median {
		dt = tensor.HistEdgesDType(x.DType)
		ranks = []int{(size - 1) / 2, size / 2}
	} else {
		if len(args.Q) == 0 {
			return nil, fmt.Errorf("no percentiles")
		}
		want = []int{len(args.Q)}
		for _, q := range args.Q {
			if !(q >= 0 && q <= 100) {
				return nil, fmt.Errorf("percentiles must be in the range [0, 100], not %v", q)
			}
			lo, hi, _ := tensor.QuantileIndexes(args.Method, q, size)
			ranks = append(ranks, lo, hi)
		}
	}
	if nd == 2 {
		want = append(want, x.Shape[0])
	}
	if !slices.Equal(n.Shape, want) || n.DType != dt {
		return nil, fmt.Errorf("node %v%v, want %v%v", n.DType, n.Shape, dt, want)
	}
	ranks = append(ranks, size-1) // NaNs sort last
	sorted := t.sortOf(n, false)
	offs := tensor.ChunkOffsets(sorted.Chunks)[nd-1]
	var blocks []int
	for _, r := range ranks {
		b := sort.SearchInts(offs, r+1) - 1
		if !slices.Contains(blocks, b) {
			blocks = append(blocks, b)
		}
	}
	if args.SkipNaN {
		// Where the numbers end is the data's: every block of the rows.
		blocks = blocks[:0]
		for b := range offs {
			blocks = append(blocks, b)
		}
	}
	slices.Sort(blocks)
	for _, b := range blocks {
		args.Starts = append(args.Starts, offs[b])
	}
	rowChunks := []int{1}
	if nd == 2 {
		rowChunks = sorted.Chunks[0]
	}
	p := len(offs)
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType}
	if !args.Median {
		out.Chunks = [][]int{{len(args.Q)}}
	}
	if nd == 2 {
		out.Chunks = append(out.Chunks, rowChunks)
	}
	for r, rows := range rowChunks {
		shape := []int{}
		if !args.Median {
			shape = append(shape, len(args.Q))
		}
		if nd == 2 {
			shape = append(shape, rows)
		}
		op := &chunk.Op{Kind: chunk.KindPercentile, Shape: shape, DType: n.DType, Args: args}
		for _, b := range blocks {
			op.Inputs = append(op.Inputs, int(sorted.Keys[r*p+b]))
		}
		out.Keys = append(out.Keys, t.emit(op))
	}
	return out, nil
}
