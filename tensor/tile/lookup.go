package tile

import (
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// tileLookup tiles searchsorted and isin: one op a block of the queries
// (searchsorted's v, isin's element) and a block of the array looked in,
// whose partial answers (counts of the elements before, or whether any is
// equal) a tree adds or ors. The queries' blocks are the result's; each op
// holds one block of each, and the block looked in stays where it is when
// the queries are the smaller.
func tileLookup(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	q, in := t.input(n, 1), t.input(n, 0)
	if n.Op == tensor.OpIsin {
		q, in = in, q
	}
	if n.Op == tensor.OpSearchsorted && len(in.Shape) != 1 {
		return nil, fmt.Errorf("searchsorted in a %d-D array", len(in.Shape))
	}
	grid := tensor.GridShape(q.Chunks)
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: slices.Clone(q.Chunks)}
	args := chunk.LookupArgs{Right: n.Attrs.K == 1}
	for b, qk := range q.Keys {
		shape := tensor.ChunkShape(q.Chunks, grid, b)
		parts := make([]uint64, len(in.Keys))
		for c, ik := range in.Keys {
			op := &chunk.Op{Kind: chunk.Kind(n.Op), Inputs: []int{int(ik), int(qk)}, Shape: shape, DType: n.DType, Args: args}
			if n.Op == tensor.OpIsin {
				op.Inputs = []int{int(qk), int(ik)}
			}
			parts[c] = t.emit(op)
		}
		var key uint64
		if n.Op == tensor.OpSearchsorted {
			key = t.sumTree(parts, shape, tensor.Int64)
		} else {
			key = t.tree(parts, func(inputs []int) uint64 {
				return t.emit(&chunk.Op{Kind: chunk.KindIsinOr, Inputs: inputs, Shape: shape, DType: tensor.Bool})
			})
		}
		out.Keys = append(out.Keys, key)
	}
	return out, nil
}

// tileNonEmpty checks a 0-d reduction's count: one op.
func tileNonEmpty(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	v, cnt := t.input(n, 0), t.input(n, 1)
	if len(cnt.Keys) != 1 {
		return nil, fmt.Errorf("nonempty with a count of %d chunks", len(cnt.Keys))
	}
	// Each chunk of the value passes when the count is not 0.
	out := &tensor.TiledTensor{Shape: v.Shape, DType: n.DType, Chunks: v.Chunks}
	grid := tensor.GridShape(v.Chunks)
	for i, k := range v.Keys {
		out.Keys = append(out.Keys, t.emit(&chunk.Op{Kind: chunk.KindNonempty, Inputs: []int{int(k), int(cnt.Keys[0])},
			Shape: tensor.ChunkShape(v.Chunks, grid, i), DType: n.DType, Args: chunk.NonEmptyArgs{Reduction: n.Attrs.Name}}))
	}
	return out, nil
}
