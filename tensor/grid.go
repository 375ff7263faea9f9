package tensor

import (
	"fmt"
	"slices"
)

// ChunkShape is the shape of the i-th chunk (C order over grid) of chunks.
func ChunkShape(chunks [][]int, grid []int, i int) []int {
	shape := make([]int, len(chunks))
	for ax := len(chunks) - 1; ax >= 0; ax-- {
		shape[ax] = chunks[ax][i%grid[ax]]
		i /= grid[ax]
	}
	return shape
}

// Unravel turns a C-order flat index into a grid index.
func Unravel(k int, grid []int) []int {
	idx := make([]int, len(grid))
	for ax := len(grid) - 1; ax >= 0; ax-- {
		idx[ax] = k % grid[ax]
		k /= grid[ax]
	}
	return idx
}

// Ravel turns a grid index into a C-order flat index.
func Ravel(idx, grid []int) int {
	k := 0
	for ax := range grid {
		k = k*grid[ax] + idx[ax]
	}
	return k
}

// A TiledTensor is a tensor as a grid of chunks.
type TiledTensor struct {
	Name   string
	Shape  []int
	DType  DType
	Chunks [][]int // chunk sizes along each axis
	// Keys holds one key a chunk, the chunk grid in C order: the chunk at
	// grid index (i, j) of a 2-D tensor is Keys[i*len(Chunks[1])+j].
	// In a chunk.Graph the keys are op keys; in a session they are global
	// chunk IDs.
	Keys []uint64
}

// Broadcasts reports whether shape broadcasts to out (NumPy's rule).
func Broadcasts(shape, out []int) bool {
	if len(shape) > len(out) {
		return false
	}
	off := len(out) - len(shape)
	for ax, s := range shape {
		if s != 1 && s != out[ax+off] {
			return false
		}
	}
	return true
}

// Slice selects Start, Start+Step, ... (Len elements) along one axis; Step may
// be negative. Bounds are resolved against the axis length by the parser.
type Slice struct {
	Start, Step, Len int
}

// CheckPerm reports whether perm is a permutation of 0..nd-1.
func CheckPerm(perm []int, nd int) error {
	if len(perm) != nd {
		return fmt.Errorf("axes %v do not match an array of %d dimensions", perm, nd)
	}
	seen := make([]bool, nd)
	for _, p := range perm {
		if p < 0 || p >= nd || seen[p] {
			return fmt.Errorf("axes %v are not a permutation of %d dimensions", perm, nd)
		}
		seen[p] = true
	}
	return nil
}

// Staged tiling. The length of unique's result, or of bincount's, depends on
// the data, and a chunk graph needs every chunk's shape. As Mars does with
// chunks of unknown shape, such a graph is tiled in stages: the tiler cuts
// every node it can, and for a node whose length the data decides it emits
// the ops that compute the data and a probe, an int64 scalar chunk holding
// the length; nodes that read such a node wait. Once that stage has run, its
// probes give the lengths, the waiting nodes are inferred again with them,
// and the next stage is tiled; its ops read the chunks the earlier stages
// made as stored chunks. A graph without such nodes is one stage.
//
// A length not yet known is Unknown in Node.Shape; shape inference carries
// it through the ops that read it (NumPy would know it: marsfs prints it as
// "?").

// Unknown is the length of an axis that the data decides, in Node.Shape
// until the stage that computes it has run.
const Unknown = -1

// HasUnknown reports whether shape has an axis of Unknown length.
func HasUnknown(shape []int) bool { return slices.Contains(shape, Unknown) }

// GridShape is the number of chunks along each axis of chunks.
func GridShape(chunks [][]int) []int {
	g := make([]int, len(chunks))
	for i, cs := range chunks {
		g[i] = len(cs)
	}
	return g
}

// ChunkOffsets returns, for each axis, the offset of each chunk's first
// element: offsets[ax][i] = sum(chunks[ax][:i]).
func ChunkOffsets(chunks [][]int) [][]int {
	offs := make([][]int, len(chunks))
	for ax, cs := range chunks {
		o := make([]int, len(cs))
		s := 0
		for i, c := range cs {
			o[i] = s
			s += c
		}
		offs[ax] = o
	}
	return offs
}

// UnravelInto is unravel writing the grid index into idx.
func UnravelInto(idx []int, k int, grid []int) {
	for ax := len(grid) - 1; ax >= 0; ax-- {
		idx[ax] = k % grid[ax]
		k /= grid[ax]
	}
}

// ChunkBox is the shape of the chunk at grid index idx of chunks, and the
// index of its first element in the tensor; offs is ChunkOffsets(chunks),
// made once for every chunk of a grid.
func ChunkBox(chunks, offs [][]int, idx []int) (shape, start []int) {
	shape = make([]int, len(idx))
	start = make([]int, len(idx))
	for ax, i := range idx {
		shape[ax] = chunks[ax][i]
		start[ax] = offs[ax][i]
	}
	return shape, start
}
