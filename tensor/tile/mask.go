package tile

import (
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// Boolean masks, x[m], tile in two stages (stage.go). The first cuts
// every block of x to the rows its block of m selects ("mask.select", a
// chunk of a length the data decides, up to the block's) and counts the
// trues of every block of m ("mask.count"); the counts, gathered into one
// small vector ("mask.lens"), are the probe. The second stage makes the
// result of the selected pieces as they are: the result's chunks along its
// first axis are the counts of the blocks that selected anything, its
// other axes chunked as x's trailing ones. No block of x is read by more
// than one op, and nothing is gathered but the counts.

// maskGrids returns x and m of mask node n, m chunked as x along its axes,
// and the number of blocks of the axes m indexes and of the others.
func (t *tiler) maskGrids(n *spec.Node) (x, m *tensor.TiledTensor, lead, trail int, err error) {
	x, m = t.input(n, 0), t.input(n, 1)
	k := len(m.Shape)
	if len(x.Shape) < k || !slices.Equal(x.Shape[:k], m.Shape) {
		return nil, nil, 0, 0, fmt.Errorf("boolean index of shape %s does not match the indexed array of shape %s", spec.ShapeString(m.Shape), spec.ShapeString(x.Shape))
	}
	// The result is in C order: the axes the mask indexes after the first
	// must be whole in a block, so that blocks follow each other in that
	// order along the first.
	if k > 1 {
		chunks := slices.Clone(x.Chunks)
		for ax := 1; ax < k; ax++ {
			chunks[ax] = []int{x.Shape[ax]}
		}
		x = t.rechunk(x, chunks)
	}
	m = t.rechunk(m, x.Chunks[:k])
	lead = tensor.NumElements(tensor.GridShape(x.Chunks[:k]))
	trail = tensor.NumElements(tensor.GridShape(x.Chunks[k:]))
	return x, m, lead, trail, nil
}

func measureMask(t *tiler, n *spec.Node) ([]uint64, uint64, error) {
	x, m, lead, trail, err := t.maskGrids(n)
	if err != nil {
		return nil, 0, err
	}
	k := len(m.Shape)
	leadGrid, trailGrid := tensor.GridShape(x.Chunks[:k]), tensor.GridShape(x.Chunks[k:])
	counts := make([]int, lead)
	var carry []uint64
	for b := range lead {
		bound := tensor.NumElements(tensor.ChunkShape(x.Chunks[:k], leadGrid, b))
		counts[b] = int(t.emit(&chunk.Op{Kind: chunk.KindMaskCount, Inputs: []int{int(m.Keys[b])}, Shape: []int{}, DType: tensor.Int64}))
		for j := range trail {
			shape := append([]int{bound}, tensor.ChunkShape(x.Chunks[k:], trailGrid, j)...)
			carry = append(carry, t.emit(&chunk.Op{Kind: chunk.KindMaskSelect, Inputs: []int{int(x.Keys[b*trail+j]), int(m.Keys[b])},
				Shape: shape, DType: x.DType, Args: chunk.MaskArgs{}}))
		}
	}
	probe := t.emit(&chunk.Op{Kind: chunk.KindMaskLens, Inputs: counts, Shape: []int{lead}, DType: tensor.Int64})
	return carry, probe, nil
}

// finishMask makes the result of the selected pieces: the blocks that
// selected nothing are left out (an empty result keeps the first).
func finishMask(t *tiler, n *spec.Node, ids []uint64, lens []int) (*tensor.TiledTensor, error) {
	// x's chunks are not carried here (stagedRule.dropsInputs): its grid
	// is an earlier stage's.
	k := len(n.Inputs[1].Shape)
	trailChunks := t.grids[n.Inputs[0].ID].Chunks[k:]
	trail := tensor.NumElements(tensor.GridShape(trailChunks))
	if len(ids) != len(lens)*trail {
		return nil, fmt.Errorf("%d pieces for %d blocks of %d", len(ids), len(lens), trail)
	}
	keep := []int{}
	for b, l := range lens {
		if l > 0 {
			keep = append(keep, b)
		}
	}
	if len(keep) == 0 {
		keep = []int{0}
	}
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: append([][]int{nil}, trailChunks...)}
	trailGrid := tensor.GridShape(trailChunks)
	for _, b := range keep {
		out.Chunks[0] = append(out.Chunks[0], lens[b])
		for j := range trail {
			shape := append([]int{lens[b]}, tensor.ChunkShape(trailChunks, trailGrid, j)...)
			out.Keys = append(out.Keys, t.emit(&chunk.Op{Kind: chunk.KindStored, Stored: ids[b*trail+j], Shape: shape, DType: n.DType}))
		}
	}
	return out, nil
}

// opAt returns the op of key.
func (t *tiler) opAt(key uint64) *chunk.Op {
	k := int(key)
	for _, b := range t.ops {
		if k < len(b) {
			return b[k]
		}
		k -= len(b)
	}
	panic(fmt.Sprintf("tile: no op %d", key))
}
