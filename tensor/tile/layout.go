package tile

import (
	"fmt"
	"math"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// tileDiagonal walks the K-th diagonal of a 2-D input through its chunk
// grid: each run of it inside one block is one "diagonal" op that reads
// that block alone, and the runs are the output's chunks. Blocks the
// diagonal does not cross are not read.
func tileDiagonal(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	x := t.input(n, 0)
	if len(x.Shape) != 2 || len(n.Shape) != 1 {
		return nil, fmt.Errorf("diagonal of %v to %v: it takes a 2-D array to a 1-D one", x.Shape, n.Shape)
	}
	k, l := n.Attrs.K, n.Shape[0]
	r0, c0 := max(-k, 0), max(k, 0)
	offs := tensor.ChunkOffsets(x.Chunks)
	grid := tensor.GridShape(x.Chunks)
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType}
	if l == 0 {
		key := t.emit(&chunk.Op{Kind: chunk.KindDiagonal, Inputs: []int{int(x.Keys[0])}, Shape: []int{0}, DType: n.DType, Args: chunk.DiagonalArgs{}})
		out.Chunks, out.Keys = [][]int{{0}}, []uint64{key}
		return out, nil
	}
	out.Chunks = [][]int{nil}
	for i := 0; i < l; {
		r, c := r0+i, c0+i
		a, b := ChunkAt(offs[0], r), ChunkAt(offs[1], c)
		run := min(offs[0][a]+x.Chunks[0][a]-r, offs[1][b]+x.Chunks[1][b]-c, l-i)
		key := x.Keys[tensor.Ravel([]int{a, b}, grid)]
		out.Keys = append(out.Keys, t.emit(&chunk.Op{Kind: chunk.KindDiagonal, Inputs: []int{int(key)}, Shape: []int{run}, DType: n.DType,
			Args: chunk.DiagonalArgs{Row: r - offs[0][a], Col: c - offs[1][b]}}))
		out.Chunks[0] = append(out.Chunks[0], run)
		i += run
	}
	return out, nil
}

// nanFill is node n as one chunk of NaNs.
func nanFill(t *tiler, n *spec.Node) *tensor.TiledTensor {
	chunks := make([][]int, len(n.Shape))
	for ax, d := range n.Shape {
		chunks[ax] = []int{d}
	}
	key := t.emit(&chunk.Op{Kind: chunk.KindFull, Shape: n.Shape, DType: n.DType,
		Args: chunk.GenArgs{Offset: make([]int, len(n.Shape)), Global: n.Shape, Value: math.NaN()}})
	return &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: chunks, Keys: []uint64{key}}
}

// tileEigh gathers the matrix into one chunk and decomposes it there once
// ("linalg.eigh", the values and vectors packed) for both results, each
// cut out by its own op: NumPy's LAPACK call, too, holds the matrix whole.
func tileEigh(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	a := t.input(n, 0)
	if len(a.Shape) != 2 || a.Shape[0] != a.Shape[1] {
		return nil, fmt.Errorf("eigh of %v: it takes a square matrix", a.Shape)
	}
	size := a.Shape[0]
	// Shared by the values and vectors of one call; the triangle read
	// tells two calls on one matrix apart.
	v, err := t.sharedFor(fmt.Sprintf("eigh%d", n.Attrs.K), n, func() (any, error) {
		whole := t.rechunk(a, [][]int{{size}, {size}})
		return t.emit(&chunk.Op{Kind: chunk.KindEigh, Inputs: []int{int(whole.Keys[0])}, Shape: []int{size + 1, size}, DType: tensor.Float64,
			Args: chunk.EighArgs{Upper: n.Attrs.K == 1}}), nil
	})
	if err != nil {
		return nil, err
	}
	chunks := make([][]int, len(n.Shape))
	for ax, d := range n.Shape {
		chunks[ax] = []int{d}
	}
	key := t.emit(&chunk.Op{Kind: chunk.Kind(n.Op), Inputs: []int{int(v.(uint64))}, Shape: n.Shape, DType: n.DType})
	return &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: chunks, Keys: []uint64{key}}, nil
}

// tileArray cuts a literal array into "const" chunks, as an upload's.
func tileArray(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	a := &tensor.Array{DType: n.DType, Shape: n.Shape, Data: n.Attrs.Data}
	if err := a.Check(); err != nil {
		return nil, err
	}
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: n.Chunks}
	grid := tensor.GridShape(n.Chunks)
	offs := tensor.ChunkOffsets(n.Chunks)
	for k := range tensor.NumElements(grid) {
		idx := tensor.Unravel(k, grid)
		shape := tensor.ChunkShape(n.Chunks, grid, k)
		sel := make([]tensor.Slice, len(shape))
		for ax := range sel {
			sel[ax] = tensor.Slice{Start: offs[ax][idx[ax]], Step: 1, Len: shape[ax]}
		}
		c := tensor.NewArray(n.DType, shape)
		tensor.CopyStrided(c, make([]int, len(shape)), a, sel)
		out.Keys = append(out.Keys, t.emit(&chunk.Op{Kind: chunk.KindConst, Shape: shape, DType: n.DType, Args: chunk.ConstArgs{Data: c.Data}}))
	}
	return out, nil
}
