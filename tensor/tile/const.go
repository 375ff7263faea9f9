package tile

import (
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// validateChunks reports whether chunks cut shape: one list an axis, positive
// sizes (a single 0 for an empty axis) summing to the axis length.
func validateChunks(shape []int, chunks [][]int) error {
	if len(chunks) != len(shape) {
		return fmt.Errorf("chunks %v have %d axes, shape %v has %d", chunks, len(chunks), shape, len(shape))
	}
	for ax, cs := range chunks {
		if len(cs) == 0 {
			return fmt.Errorf("chunks %v: no chunks along axis %d", chunks, ax)
		}
		sum := 0
		for _, c := range cs {
			if c < 0 || c == 0 && shape[ax] != 0 {
				return fmt.Errorf("chunks %v: chunk of size %d along axis %d", chunks, c, ax)
			}
			sum += c
		}
		if sum != shape[ax] {
			return fmt.Errorf("chunks %v cover %d elements of axis %d, shape %v has %d", chunks, sum, ax, shape, shape[ax])
		}
		if shape[ax] == 0 && len(cs) != 1 {
			return fmt.Errorf("chunks %v: empty axis %d must have one chunk", chunks, ax)
		}
	}
	return nil
}

// Const returns a chunk graph that brings a into the cluster as a tensor
// called name: one "const" operand a chunk, cut by chunks (one list of chunk
// sizes an axis; nil for DefaultChunks), and one output. Each operand holds a
// copy of its chunk's bytes, so a may be reused once ConstGraph returns.
func Const(name string, a *tensor.Array, chunks [][]int) (*chunk.Graph, error) {
	if err := a.Check(); err != nil {
		return nil, fmt.Errorf("const %s: %w", name, err)
	}
	if chunks == nil {
		chunks = spec.DefaultChunks(a.Shape, a.DType)
	}
	if err := validateChunks(a.Shape, chunks); err != nil {
		return nil, fmt.Errorf("const %s: %w", name, err)
	}
	cg := &chunk.Graph{}
	out := tensor.TiledTensor{Name: name, Shape: append([]int(nil), a.Shape...), DType: a.DType, Chunks: chunks}
	grid := tensor.GridShape(chunks)
	offs := tensor.ChunkOffsets(chunks)
	n := tensor.NumElements(grid)
	for k := 0; k < n; k++ {
		idx := tensor.Unravel(k, grid)
		shape := tensor.ChunkShape(chunks, grid, k)
		sel := make([]tensor.Slice, len(shape))
		for ax := range sel {
			sel[ax] = tensor.Slice{Start: offs[ax][idx[ax]], Step: 1, Len: shape[ax]}
		}
		c := tensor.NewArray(a.DType, shape)
		tensor.CopyStrided(c, make([]int, len(shape)), a, sel)
		op := &chunk.Op{Key: len(cg.Ops), Kind: chunk.KindConst, Shape: shape, DType: a.DType, Args: chunk.ConstArgs{Data: c.Data}}
		cg.Ops = append(cg.Ops, op)
		out.Keys = append(out.Keys, uint64(op.Key))
	}
	cg.Outputs = []tensor.TiledTensor{out}
	return cg, nil
}
