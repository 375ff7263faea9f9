package tile

import (
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

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

func tileSort(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	if len(n.Inputs) != 1 {
		return nil, fmt.Errorf("need 1 input, have %d", len(n.Inputs))
	}
	x := t.input(n, 0)
	if len(x.Shape) != 1 && len(x.Shape) != 2 {
		return nil, fmt.Errorf("%s of a %d-D tensor: only 1-D and 2-D (along the last axis) are supported", n.Op, len(x.Shape))
	}
	want := x.DType
	if n.Op == tensor.OpArgsort {
		want = tensor.Int64
	}
	if !slices.Equal(n.Shape, x.Shape) || n.DType != want {
		return nil, fmt.Errorf("node %v%v for an input of %v%v", n.DType, n.Shape, x.DType, x.Shape)
	}
	return t.sortOf(n, n.Op == tensor.OpArgsort), nil
}

// sortOf returns the sort (or argsort) of n's input along its last axis,
// emitting it once for all the nodes that need it (sort, percentile and
// median of the same tensor).
func (t *tiler) sortOf(n *spec.Node, arg bool) *tensor.TiledTensor {
	family := "sort"
	if arg {
		family = "argsort"
	}
	v, _ := t.sharedFor(family, n, func() (any, error) { return t.sortBlocks(t.input(n, 0), arg), nil })
	return v.(*tensor.TiledTensor)
}

// sortBlocks emits the sort (or argsort) of x along its last axis and
// returns the result, cut into equal blocks along that axis.
func (t *tiler) sortBlocks(x *tensor.TiledTensor, arg bool) *tensor.TiledTensor {
	nd := len(x.Shape)
	last := x.Shape[nd-1]
	size := slices.Max(x.Chunks[nd-1])
	chunks := slices.Clone(x.Chunks)
	if last > 0 {
		chunks[nd-1] = ReshapeSplit(last, size)
	}
	x = t.rechunk(x, chunks)
	rows := 1
	if nd == 2 {
		rows = len(chunks[0])
	}
	cols := chunks[nd-1]
	p := len(cols)
	offs := tensor.ChunkOffsets(chunks)[nd-1]
	grid := tensor.GridShape(chunks)
	blockShape := func(k int) []int {
		s := tensor.ChunkShape(chunks, grid, k)
		if arg {
			s = append(s, 2)
		}
		return s
	}
	dt := x.DType
	if arg {
		dt = tensor.Int64
	}
	// keys[r*p+j] is the current block j of row chunk r.
	keys := make([]uint64, len(x.Keys))
	for k, in := range x.Keys {
		keys[k] = t.emit(&chunk.Op{Kind: chunk.KindSortLocal, Inputs: []int{int(in)}, Shape: blockShape(k), DType: dt, Args: chunk.SortArgs{Pairs: arg, Offset: offs[k%p]}})
	}
	for _, c := range batcherNetwork(p) {
		for r := range rows {
			a, b := r*p+c[0], r*p+c[1]
			in := []int{int(keys[a]), int(keys[b])}
			lo := t.emit(&chunk.Op{Kind: chunk.KindSortMerge, Inputs: in, Shape: blockShape(a), DType: dt, Args: chunk.SortArgs{Pairs: arg}})
			hi := t.emit(&chunk.Op{Kind: chunk.KindSortMerge, Inputs: in, Shape: blockShape(b), DType: dt, Args: chunk.SortArgs{Pairs: arg, High: true}})
			keys[a], keys[b] = lo, hi
		}
	}
	out := &tensor.TiledTensor{Shape: x.Shape, DType: dt, Chunks: chunks, Keys: keys}
	if arg {
		for k, in := range keys {
			out.Keys[k] = t.emit(&chunk.Op{Kind: chunk.KindArgsortIndices, Inputs: []int{int(in)}, Shape: tensor.ChunkShape(chunks, grid, k), DType: tensor.Int64})
		}
	}
	return out
}
