package tile

import (
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// tileFromNPY cuts a .npy file read in place into "from_npy" ops, one a
// chunk, each reading its block of the file: no byte of it passes through
// the process that tiles.
func tileFromNPY(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	if len(n.Chunks) != len(n.Shape) {
		return nil, fmt.Errorf("%d chunk axes for shape %v", len(n.Chunks), n.Shape)
	}
	a := n.Attrs
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: n.Chunks}
	grid := tensor.GridShape(n.Chunks)
	offs := tensor.ChunkOffsets(n.Chunks)
	idx := make([]int, len(grid))
	for k := range tensor.NumElements(grid) {
		tensor.UnravelInto(idx, k, grid)
		off := make([]int, len(idx))
		shape := make([]int, len(idx))
		for ax, i := range idx {
			off[ax], shape[ax] = offs[ax][i], n.Chunks[ax][i]
		}
		args := chunk.NPYArgs{Path: a.Path, DataOffset: a.FileOffset, FileShape: slices.Clone(n.Shape),
			Fortran: a.Fortran, BigEndian: a.BigEndian, Offset: off}
		out.Keys = append(out.Keys, t.emit(&chunk.Op{Kind: tensor.OpFromNPY, Shape: shape, DType: n.DType, Args: args}))
	}
	return out, nil
}
