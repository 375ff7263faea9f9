package tensor

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
)

// Histogram counts each chunk into the bins on its own ("histogram.count")
// and adds the counts in a tree; without a range, a tree of min/max ops
// finds the data's range first. Bincount counts each chunk and adds them the
// same way. Percentile and median sort the input with the sorting network
// (see sort.go) and read the few elements they need from the blocks that
// hold them: the total length is known when the graph is tiled, so which
// block holds the element of rank r is known too.
//
// Unique (unique.go) is not here: its length depends on the data, so it
// tiles in stages (stage.go); so does bincount, whose length is
// max(minlength, max+1): once a first stage has found it, the tile rule here
// counts with that length.

// HistArgs are the arguments of the histogram kernels.
type HistArgs struct {
	Bins    int
	Range   []float64 // the bins' outer edges, nil when an input holds them
	Combine bool      // "histogram.minmax": the inputs are partial (min, max) pairs
	Edges   DType     // the edges' dtype
}

// BincountArgs are the arguments of "bincount".
type BincountArgs struct{ Minlength int }

// PercentileArgs are the arguments of "percentile": the input blocks of the
// sorted data start at Starts; N is its length.
type PercentileArgs struct {
	Q      []float64
	N      int
	Starts []int
	Median bool
}

// statsCombine is how many partial results one combining op reads.
const statsCombine = 8

// histEdgesDType is the dtype of histogram's edges for data of dtype dt.
func histEdgesDType(dt DType) DType {
	if dt == Float32 {
		return Float32
	}
	return Float64
}

// tree combines parts with ops made by mk (fan-in statsCombine) and returns
// the key of the last.
func (t *tiler) tree(parts []uint64, mk func(inputs []int) uint64) uint64 {
	for len(parts) > 1 {
		var next []uint64
		for s := 0; s < len(parts); s += statsCombine {
			group := parts[s:min(s+statsCombine, len(parts))]
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

func tileHistogram(t *tiler, n *Node) (*TiledTensor, error) {
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
	edt := histEdgesDType(x.DType)
	args := HistArgs{Bins: bins, Range: rng, Edges: edt}
	// The data's range, shared by the histogram and its edges.
	rangeKey := -1
	if rng == nil {
		v, _ := t.sharedFor("histrange", n, func() (any, error) {
			var parts []uint64
			for _, in := range x.Keys {
				parts = append(parts, t.emit(&ChunkOp{Kind: "histogram.minmax", Inputs: []int{int(in)}, Shape: []int{3}, DType: Float64, Args: HistArgs{}}))
			}
			top := t.tree(parts, func(inputs []int) uint64 {
				return t.emit(&ChunkOp{Kind: "histogram.minmax", Inputs: inputs, Shape: []int{3}, DType: Float64, Args: HistArgs{Combine: true}})
			})
			return t.emit(&ChunkOp{Kind: "histogram", Inputs: []int{int(top)}, Shape: []int{2}, DType: Float64}), nil
		})
		rangeKey = int(v.(uint64))
	}
	withRange := func(in ...int) []int {
		if rangeKey >= 0 {
			in = append(in, rangeKey)
		}
		return in
	}
	if n.Op == OpHistEdges {
		if !slices.Equal(n.Shape, []int{bins + 1}) || n.DType != edt {
			return nil, fmt.Errorf("node %v%v, want %v%v", n.DType, n.Shape, edt, []int{bins + 1})
		}
		key := t.emit(&ChunkOp{Kind: "histogram.edges", Inputs: withRange(), Shape: n.Shape, DType: edt, Args: args})
		return &TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{{bins + 1}}, Keys: []uint64{key}}, nil
	}
	if !slices.Equal(n.Shape, []int{bins}) || n.DType != Int64 {
		return nil, fmt.Errorf("node %v%v, want int64%v", n.DType, n.Shape, []int{bins})
	}
	var parts []uint64
	for _, in := range x.Keys {
		parts = append(parts, t.emit(&ChunkOp{Kind: "histogram.count", Inputs: withRange(int(in)), Shape: n.Shape, DType: Int64, Args: args}))
	}
	key := t.sumTree(parts, n.Shape, Int64)
	return &TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{{bins}}, Keys: []uint64{key}}, nil
}

// histMinMaxKernel finds (count, min, max) of a chunk or combines such
// triples. NaNs propagate to both min and max, as NumPy's min and max do.
func histMinMaxKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(HistArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	cnt, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
	add := func(v float64) {
		if v != v || lo != lo {
			lo, hi = math.NaN(), math.NaN()
			return
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	for _, a := range in {
		if args.Combine {
			d := a.Float64s()
			if d[0] > 0 {
				cnt += d[0]
				add(d[1])
				add(d[2])
			}
			continue
		}
		for i := range a.Len() {
			add(a.Float64At(i))
		}
		cnt += float64(a.Len())
	}
	out := NewArray(Float64, op.Shape)
	copy(out.Float64s(), []float64{cnt, lo, hi})
	return out, nil
}

// histRangeKernel turns the data's (count, min, max) into the bins' outer
// edges as NumPy does: [0, 1] for no data, widened by 0.5 each way when
// min == max.
func histRangeKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	d := in[0].Float64s()
	first, last := d[1], d[2]
	if d[0] == 0 {
		first, last = 0, 1
	} else if math.IsNaN(first) || math.IsInf(first, 0) || math.IsInf(last, 0) {
		return nil, fmt.Errorf("autodetected range of [%v, %v] is not finite", pyFloatString(first), pyFloatString(last))
	}
	if first == last {
		first, last = first-0.5, last+0.5
	}
	out := NewArray(Float64, op.Shape)
	copy(out.Float64s(), []float64{first, last})
	return out, nil
}

// histBounds returns the outer edges, from the arguments or the last input.
func histBounds(args HistArgs, in []*Array) (float64, float64) {
	if args.Range != nil {
		first, last := args.Range[0], args.Range[1]
		if first == last {
			first, last = first-0.5, last+0.5
		}
		return first, last
	}
	d := in[len(in)-1].Float64s()
	return d[0], d[1]
}

// histEdges computes the Bins+1 edges as numpy.linspace does, rounded to
// the edges' dtype.
func histEdges(args HistArgs, first, last float64) []float64 {
	e := make([]float64, args.Bins+1)
	step := (last - first) / float64(args.Bins)
	for i := range e {
		if step == 0 {
			e[i] = float64(i)/float64(args.Bins)*(last-first) + first
		} else {
			e[i] = float64(i)*step + first
		}
	}
	e[args.Bins] = last
	if args.Edges == Float32 {
		for i, v := range e {
			e[i] = float64(float32(v))
		}
	}
	return e
}

func histEdgesKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(HistArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	first, last := histBounds(args, in)
	return fromFloat64(histEdges(args, first, last), op.DType, op.Shape), nil
}

// histCountKernel counts a chunk into the bins with NumPy's rule for equal
// bins: the index from the value's offset, corrected by comparison with the
// edges; values outside [first, last] (and NaNs) are not counted, and the
// last bin includes its right edge.
func histCountKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(HistArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	first, last := histBounds(args, in)
	edges := histEdges(args, first, last)
	bins := args.Bins
	norm := float64(bins) / (last - first)
	out := NewArray(Int64, op.Shape)
	counts := out.Int64s()
	a := in[0]
	for i := range a.Len() {
		v := a.Float64At(i)
		if args.Edges == Float32 {
			v = float64(float32(v))
		}
		if !(v >= first && v <= last) {
			continue
		}
		k := int((v - first) * norm)
		if k == bins {
			k--
		}
		if v < edges[k] {
			k--
		}
		if k != bins-1 && v >= edges[k+1] {
			k++
		}
		counts[k]++
	}
	return out, nil
}

func tileBincount(t *tiler, n *Node) (*TiledTensor, error) {
	if len(n.Inputs) != 1 {
		return nil, fmt.Errorf("need 1 input, have %d", len(n.Inputs))
	}
	x := t.input(n, 0)
	if len(x.Shape) != 1 || !(x.DType.IsInt() || x.DType == Bool) {
		return nil, fmt.Errorf("bincount needs a 1-D array of non-negative integers, not %v%v", x.DType, x.Shape)
	}
	if len(n.Shape) != 1 || n.Shape[0] < n.Attrs.Minlength || n.DType != Int64 {
		return nil, fmt.Errorf("node %v%v, want int64 of at least %d", n.DType, n.Shape, n.Attrs.Minlength)
	}
	m := n.Shape[0]
	var parts []uint64
	for _, in := range x.Keys {
		parts = append(parts, t.emit(&ChunkOp{Kind: "bincount", Inputs: []int{int(in)}, Shape: n.Shape, DType: Int64, Args: BincountArgs{Minlength: m}}))
	}
	if len(parts) == 0 {
		parts = append(parts, t.emit(&ChunkOp{Kind: "linalg.zeros", Shape: n.Shape, DType: Int64}))
	}
	key := t.sumTree(parts, n.Shape, Int64)
	return &TiledTensor{Shape: n.Shape, DType: Int64, Chunks: [][]int{{m}}, Keys: []uint64{key}}, nil
}

func bincountKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	out := NewArray(Int64, op.Shape)
	counts := out.Int64s()
	a := in[0]
	for i := range a.Len() {
		v, err := binAt(a, i)
		if err != nil {
			return nil, err
		}
		if v >= int64(len(counts)) {
			return nil, fmt.Errorf("value %d is not below the length %d of the counts", v, len(counts))
		}
		counts[v]++
	}
	return out, nil
}

// tilePercentile tiles percentile and median along the last axis of a 1-D
// or 2-D input: one op a row chunk reads the blocks of the sorted rows that
// hold the ranks it needs. The output is the percentiles' axis (percentile
// only) followed by the rows of a 2-D input.
func tilePercentile(t *tiler, n *Node) (*TiledTensor, error) {
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
		return nil, fmt.Errorf("%s of an empty array", n.Op)
	}
	args := PercentileArgs{N: size, Q: n.Attrs.Q, Median: n.Op == OpMedian}
	var ranks, want []int
	dt := Float64
	if args.Median {
		dt = histEdgesDType(x.DType)
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
			lo, hi, _ := percentileIndexes(q, size)
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
	offs := ChunkOffsets(sorted.Chunks)[nd-1]
	var blocks []int
	for _, r := range ranks {
		b := sort.SearchInts(offs, r+1) - 1
		if !slices.Contains(blocks, b) {
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
	out := &TiledTensor{Shape: n.Shape, DType: n.DType}
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
		op := &ChunkOp{Kind: "percentile", Shape: shape, DType: n.DType, Args: args}
		for _, b := range blocks {
			op.Inputs = append(op.Inputs, int(sorted.Keys[r*p+b]))
		}
		out.Keys = append(out.Keys, t.emit(op))
	}
	return out, nil
}

// percentileIndexes returns the ranks NumPy's linear method interpolates
// between for percentile q of n sorted values, and the weight of the upper.
func percentileIndexes(q float64, n int) (int, int, float64) {
	qq := q / 100
	v := float64(n)*qq + (1 + qq*(1-1-1)) - 1
	if v >= float64(n-1) {
		// NumPy takes the last element twice, with index -1 in the weight.
		return n - 1, n - 1, v + 1
	}
	if v < 0 {
		return 0, 0, v
	}
	lo := math.Floor(v)
	return int(lo), int(lo) + 1, v - lo
}

func percentileKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(PercentileArgs)
	if !ok || len(args.Starts) != len(in) || len(in) == 0 {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	rows, _ := rowsOf(in[0].Shape, false)
	// at returns the array holding rank r of row i and the element's index.
	at := func(i, r int) (*Array, int, error) {
		for k, a := range in {
			_, cols := rowsOf(a.Shape, false)
			if r >= args.Starts[k] && r < args.Starts[k]+cols {
				return a, i*cols + r - args.Starts[k], nil
			}
		}
		return nil, 0, fmt.Errorf("no input holds rank %d", r)
	}
	nq := len(args.Q)
	if args.Median {
		nq = 1
	}
	res := make([]float64, nq*rows)
	if len(res) != NumElements(op.Shape) {
		return nil, fmt.Errorf("%d results for shape %v", len(res), op.Shape)
	}
	for i := range rows {
		last, li, err := at(i, args.N-1)
		if err != nil {
			return nil, err
		}
		if last.DType.IsFloat() && math.IsNaN(last.Float64At(li)) {
			for q := range nq {
				res[q*rows+i] = math.NaN()
			}
			continue
		}
		if args.Median {
			a, j, err := at(i, (args.N-1)/2)
			if err != nil {
				return nil, err
			}
			b, k, err := at(i, args.N/2)
			if err != nil {
				return nil, err
			}
			switch {
			case args.N%2 == 1:
				res[i] = a.Float64At(j)
			case a.DType == Float32:
				res[i] = float64((a.Float32s()[j] + b.Float32s()[k]) / 2)
			default:
				res[i] = (a.Float64At(j) + b.Float64At(k)) / 2
			}
			continue
		}
		for q, v := range args.Q {
			lo, hi, g := percentileIndexes(v, args.N)
			a, j, err := at(i, lo)
			if err != nil {
				return nil, err
			}
			b, k, err := at(i, hi)
			if err != nil {
				return nil, err
			}
			res[q*rows+i] = lerp(a, j, b, k, g)
		}
	}
	return fromFloat64(res, op.DType, op.Shape), nil
}

// lerp interpolates between element i of a and element j of b with weight
// g as NumPy's _lerp does: the difference is taken in the data's dtype, and
// from the upper end when g >= 0.5.
func lerp(a *Array, i int, b *Array, j int, g float64) float64 {
	var x, y, diff float64
	switch a.DType {
	case Int32:
		x, y = float64(a.Int32s()[i]), float64(b.Int32s()[j])
		diff = float64(b.Int32s()[j] - a.Int32s()[i])
	case Int64:
		x, y = float64(a.Int64s()[i]), float64(b.Int64s()[j])
		diff = float64(b.Int64s()[j] - a.Int64s()[i])
	case Float32:
		x, y = float64(a.Float32s()[i]), float64(b.Float32s()[j])
		diff = float64(b.Float32s()[j] - a.Float32s()[i])
	default:
		x, y = a.Float64At(i), b.Float64At(j)
		diff = y - x
	}
	if g >= 0.5 {
		return y - diff*(1-g)
	}
	return x + diff*g
}

// binAt returns element i of bincount's input a: a non-negative integer.
func binAt(a *Array, i int) (int64, error) {
	var v int64
	switch a.DType {
	case Bool:
		v = int64(a.Data[i])
	case Int32:
		v = int64(a.Int32s()[i])
	case Int64:
		v = a.Int64s()[i]
	default:
		return 0, fmt.Errorf("input of dtype %v is not integer", a.DType)
	}
	if v < 0 {
		return 0, fmt.Errorf("the input has a negative value (%d)", v)
	}
	return v, nil
}
