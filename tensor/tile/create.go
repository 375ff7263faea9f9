package tile

import (
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// tileCreate emits one generator op a chunk of n.Chunks.
func tileCreate(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	if len(n.Chunks) != len(n.Shape) {
		return nil, fmt.Errorf("%d chunk axes for shape %v", len(n.Chunks), n.Shape)
	}
	kind := createKind(n)
	if kind == tensor.OpEye && len(n.Shape) != 2 {
		return nil, fmt.Errorf("eye needs 2 axes, got shape %v", n.Shape)
	}
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: n.Chunks}
	grid := tensor.GridShape(n.Chunks)
	offs := tensor.ChunkOffsets(n.Chunks)
	nk := tensor.NumElements(grid)
	out.Keys = make([]uint64, 0, nk)
	idx := make([]int, len(grid))
	shape := make([]int, len(grid))
	all := createArgs(n)
	for k := 0; k < nk; k++ {
		tensor.UnravelInto(idx, k, grid)
		off := t.ints.Take(len(idx))
		for ax, i := range idx {
			off[ax] = offs[ax][i]
			shape[ax] = n.Chunks[ax][i]
		}
		args := all
		args.Offset = off
		out.Keys = append(out.Keys, t.emitOp(chunk.Op{Kind: kind, Shape: t.shapes.Shape(shape), DType: n.DType, Args: args}))
	}
	return out, nil
}

// createKind is the kernel of the chunks of generator node n.
func createKind(n *spec.Node) chunk.Kind {
	if n.Op == tensor.OpScalar {
		return chunk.KindFull
	}
	return chunk.Kind(n.Op)
}

// createArgs are the arguments of the chunks of generator node n, but for
// their Offset.
func createArgs(n *spec.Node) chunk.GenArgs {
	a := &n.Attrs
	return chunk.GenArgs{Global: n.Shape, Value: a.Value, IntValue: a.IntValue,
		Start: a.Start, Step: a.Step, Low: a.Low, High: a.High, K: a.K, Seed: a.Seed}
}
