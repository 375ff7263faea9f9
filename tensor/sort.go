package tensor

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
)

// Sort tiles as a sorting network over blocks. A sample sort (partition by
// pivots, sort each partition) gives partitions whose sizes depend on the
// data, and marsfs fixes every chunk's shape when it tiles a graph. A
// network of merge-splits keeps every shape fixed: the axis is cut into p
// blocks of equal size (the last may be smaller), each block is sorted on its
// own, and then every comparator (a, b) of Batcher's odd-even merge sort
// network on p wires merges the sorted blocks a < b and gives a the smallest
// len(a) elements and b the rest. By the 0-1 principle (a merge-split is a
// merging comparator network) the result is sorted when the blocks have
// equal sizes; a smaller last block behaves as an equal one padded with +inf,
// which never leaves it since b always keeps the largest elements. The
// network has O(p log² p) comparators in O(log² p) rounds; each op reads two
// blocks and writes one, so no op ever holds more than two blocks.
//
// NaNs sort last, as in NumPy. Argsort carries (key, index) pairs through
// the same network, the key an order-preserving uint64 encoding of the value
// (-0 and +0 equal, every NaN last); comparing pairs by key and then by index
// makes it stable, as NumPy's kind='stable'.

// SortArgs are the arguments of the sort kernels.
type SortArgs struct {
	Pairs  bool // chunks hold (key, index) pairs, for argsort
	Offset int  // "sort.local" with Pairs: the index of the block's first element
	High   bool // "sort.merge": keep the high part
}

// keyIndex is one element of argsort's pair chunks: an int64 chunk of shape
// [..., 2].
type keyIndex struct {
	key uint64
	idx int64
}

// batcherNetwork returns the comparators (a, b), a < b, of Batcher's odd-even
// merge sort on p wires, in an order that respects their dependencies: the
// network for the next power of two, without the comparators that touch a
// wire at or past p (those wires would hold +inf, and the comparators would
// move nothing).
func batcherNetwork(p int) [][2]int {
	n := 1
	for n < p {
		n *= 2
	}
	var net [][2]int
	for q := 1; q < n; q *= 2 {
		for k := q; k >= 1; k /= 2 {
			for j := k % q; j < n-k; j += 2 * k {
				for i := 0; i < min(k, n-j-k); i++ {
					if (i+j)/(2*q) == (i+j+k)/(2*q) && i+j+k < p {
						net = append(net, [2]int{i + j, i + j + k})
					}
				}
			}
		}
	}
	return net
}

func tileSort(t *tiler, n *Node) (*TiledTensor, error) {
	if len(n.Inputs) != 1 {
		return nil, fmt.Errorf("need 1 input, have %d", len(n.Inputs))
	}
	x := t.input(n, 0)
	if len(x.Shape) != 1 && len(x.Shape) != 2 {
		return nil, fmt.Errorf("%s of a %d-D tensor: only 1-D and 2-D (along the last axis) are supported", n.Op, len(x.Shape))
	}
	want := x.DType
	if n.Op == OpArgsort {
		want = Int64
	}
	if !slices.Equal(n.Shape, x.Shape) || n.DType != want {
		return nil, fmt.Errorf("node %v%v for an input of %v%v", n.DType, n.Shape, x.DType, x.Shape)
	}
	return t.sortOf(n, n.Op == OpArgsort), nil
}

// sortOf returns the sort (or argsort) of n's input along its last axis,
// emitting it once for all the nodes that need it (sort, percentile and
// median of the same tensor).
func (t *tiler) sortOf(n *Node, arg bool) *TiledTensor {
	family := "sort"
	if arg {
		family = "argsort"
	}
	v, _ := t.sharedFor(family, n, func() (any, error) { return t.sortBlocks(t.input(n, 0), arg), nil })
	return v.(*TiledTensor)
}

// sortBlocks emits the sort (or argsort) of x along its last axis and
// returns the result, cut into equal blocks along that axis.
func (t *tiler) sortBlocks(x *TiledTensor, arg bool) *TiledTensor {
	nd := len(x.Shape)
	last := x.Shape[nd-1]
	size := slices.Max(x.Chunks[nd-1])
	chunks := slices.Clone(x.Chunks)
	if last > 0 {
		chunks[nd-1] = reshapeSplit(last, size)
	}
	x = t.rechunk(x, chunks)
	rows := 1
	if nd == 2 {
		rows = len(chunks[0])
	}
	cols := chunks[nd-1]
	p := len(cols)
	offs := ChunkOffsets(chunks)[nd-1]
	grid := GridShape(chunks)
	blockShape := func(k int) []int {
		s := chunkShape(chunks, grid, k)
		if arg {
			s = append(s, 2)
		}
		return s
	}
	dt := x.DType
	if arg {
		dt = Int64
	}
	// keys[r*p+j] is the current block j of row chunk r.
	keys := make([]uint64, len(x.Keys))
	for k, in := range x.Keys {
		keys[k] = t.emit(&ChunkOp{Kind: "sort.local", Inputs: []int{int(in)}, Shape: blockShape(k), DType: dt, Args: SortArgs{Pairs: arg, Offset: offs[k%p]}})
	}
	for _, c := range batcherNetwork(p) {
		for r := range rows {
			a, b := r*p+c[0], r*p+c[1]
			in := []int{int(keys[a]), int(keys[b])}
			lo := t.emit(&ChunkOp{Kind: "sort.merge", Inputs: in, Shape: blockShape(a), DType: dt, Args: SortArgs{Pairs: arg}})
			hi := t.emit(&ChunkOp{Kind: "sort.merge", Inputs: in, Shape: blockShape(b), DType: dt, Args: SortArgs{Pairs: arg, High: true}})
			keys[a], keys[b] = lo, hi
		}
	}
	out := &TiledTensor{Shape: x.Shape, DType: dt, Chunks: chunks, Keys: keys}
	if arg {
		for k, in := range keys {
			out.Keys[k] = t.emit(&ChunkOp{Kind: "argsort.indices", Inputs: []int{int(in)}, Shape: chunkShape(chunks, grid, k), DType: Int64})
		}
	}
	return out
}

// lessFloat orders floats with NaNs last.
func lessFloat[T float32 | float64](a, b T) bool { return a < b || (b != b && a == a) }

func lessOrdered[T int32 | int64 | uint8](a, b T) bool { return a < b }

func lessPair(a, b keyIndex) bool { return a.key < b.key || (a.key == b.key && a.idx < b.idx) }

// rowsOf is the number of rows of a block of shape (1 for a 1-D block) and
// the length of each; pairs blocks have a trailing axis of 2.
func rowsOf(shape []int, pairs bool) (int, int) {
	if pairs {
		shape = shape[:len(shape)-1]
	}
	if len(shape) == 1 {
		return 1, shape[0]
	}
	return shape[0], shape[1]
}

// sortOrdered sorts each row of d (rows of cols) with the standard library's
// sort of ordered values, which puts NaNs first, and then moves the NaNs to
// the end, where NumPy puts them.
func sortOrdered[T uint8 | int32 | int64 | float32 | float64](d []T, rows, cols int) {
	for r := range rows {
		row := d[r*cols : (r+1)*cols]
		slices.Sort(row)
		nan := 0
		for nan < len(row) && row[nan] != row[nan] {
			nan++
		}
		if nan > 0 {
			nans := slices.Clone(row[:nan])
			copy(row, row[nan:])
			copy(row[len(row)-nan:], nans)
		}
	}
}

// sortKey maps element i of a to a uint64 whose order is NumPy's sort order
// of the values: -0 and +0 map to one key, and every NaN to the largest.
func sortKey(a *Array, i int) uint64 {
	switch a.DType {
	case Bool:
		return uint64(a.Data[i])
	case Int32:
		return uint64(int64(a.Int32s()[i])) ^ 1<<63
	case Int64:
		return uint64(a.Int64s()[i]) ^ 1<<63
	}
	v := a.Float64At(i)
	if v != v {
		return math.MaxUint64
	}
	if v == 0 {
		v = 0
	}
	b := math.Float64bits(v)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

func sortLocalKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(SortArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	x := in[0]
	rows, cols := rowsOf(x.Shape, false)
	if args.Pairs {
		out := NewArray(Int64, op.Shape)
		d := view[keyIndex](out.Data)
		for r := range rows {
			for j := range cols {
				d[r*cols+j] = keyIndex{sortKey(x, r*cols+j), int64(args.Offset + j)}
			}
		}
		for r := range rows {
			slices.SortFunc(d[r*cols:(r+1)*cols], func(a, b keyIndex) int {
				if c := cmp.Compare(a.key, b.key); c != 0 {
					return c
				}
				return cmp.Compare(a.idx, b.idx)
			})
		}
		return out, nil
	}
	out := &Array{DType: x.DType, Shape: slices.Clone(x.Shape), Data: slices.Clone(x.Data)}
	switch x.DType {
	case Bool:
		sortOrdered(out.Data, rows, cols)
	case Int32:
		sortOrdered(out.Int32s(), rows, cols)
	case Int64:
		sortOrdered(out.Int64s(), rows, cols)
	case Float32:
		sortOrdered(out.Float32s(), rows, cols)
	case Float64:
		sortOrdered(out.Float64s(), rows, cols)
	default:
		return nil, fmt.Errorf("invalid dtype %v", x.DType)
	}
	return out, nil
}

// mergeSplit merges the sorted rows a and b into out, which takes the
// len(out) smallest elements (or the largest when high). Ties go to a first,
// so that merging is stable.
func mergeSplit[T any](out, a, b []T, high bool, less func(x, y T) bool) {
	if !high {
		i, j := 0, 0
		for k := range out {
			if j >= len(b) || (i < len(a) && !less(b[j], a[i])) {
				out[k] = a[i]
				i++
			} else {
				out[k] = b[j]
				j++
			}
		}
		return
	}
	i, j := len(a)-1, len(b)-1
	for k := len(out) - 1; k >= 0; k-- {
		if i < 0 || (j >= 0 && !less(b[j], a[i])) {
			out[k] = b[j]
			j--
		} else {
			out[k] = a[i]
			i--
		}
	}
}

func mergeRows[T any](out, a, b []T, rows, ca, cb, co int, high bool, less func(x, y T) bool) {
	for r := range rows {
		mergeSplit(out[r*co:(r+1)*co], a[r*ca:(r+1)*ca], b[r*cb:(r+1)*cb], high, less)
	}
}

func sortMergeKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(SortArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	if len(in) != 2 {
		return nil, fmt.Errorf("%d inputs, want 2", len(in))
	}
	a, b := in[0], in[1]
	rows, ca := rowsOf(a.Shape, args.Pairs)
	rb, cb := rowsOf(b.Shape, args.Pairs)
	ro, co := rowsOf(op.Shape, args.Pairs)
	if rb != rows || ro != rows || co > ca+cb || a.DType != op.DType || b.DType != op.DType {
		return nil, fmt.Errorf("blocks %v%v and %v%v for a block of %v", a.DType, a.Shape, b.DType, b.Shape, op.Shape)
	}
	out := NewArray(op.DType, op.Shape)
	h := args.High
	switch {
	case args.Pairs:
		mergeRows(view[keyIndex](out.Data), view[keyIndex](a.Data), view[keyIndex](b.Data), rows, ca, cb, co, h, lessPair)
	case op.DType == Bool:
		mergeRows(out.Data, a.Data, b.Data, rows, ca, cb, co, h, lessOrdered[uint8])
	case op.DType == Int32:
		mergeRows(out.Int32s(), a.Int32s(), b.Int32s(), rows, ca, cb, co, h, lessOrdered[int32])
	case op.DType == Int64:
		mergeRows(out.Int64s(), a.Int64s(), b.Int64s(), rows, ca, cb, co, h, lessOrdered[int64])
	case op.DType == Float32:
		mergeRows(out.Float32s(), a.Float32s(), b.Float32s(), rows, ca, cb, co, h, lessFloat[float32])
	case op.DType == Float64:
		mergeRows(out.Float64s(), a.Float64s(), b.Float64s(), rows, ca, cb, co, h, lessFloat[float64])
	default:
		return nil, fmt.Errorf("invalid dtype %v", op.DType)
	}
	return out, nil
}

func argsortIndicesKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	src := view[keyIndex](in[0].Data)
	out := NewArray(Int64, op.Shape)
	d := out.Int64s()
	if len(src) != len(d) {
		return nil, fmt.Errorf("%d pairs for %d indices", len(src), len(d))
	}
	for i, p := range src {
		d[i] = p.idx
	}
	return out, nil
}
