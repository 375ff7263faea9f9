package tile

import (
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

func tileRechunk(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	return t.rechunk(t.input(n, 0), n.Chunks), nil
}

func tileInput(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	if t.env == nil {
		return nil, fmt.Errorf("no session tensors to name %q", n.Attrs.Name)
	}
	src, ok := t.env.Lookup(n.Attrs.Name)
	if !ok {
		return nil, fmt.Errorf("unknown tensor %q", n.Attrs.Name)
	}
	tt := &tensor.TiledTensor{Shape: src.Shape, DType: src.DType, Chunks: src.Chunks}
	grid := tensor.GridShape(src.Chunks)
	for i, id := range src.Keys {
		tt.Keys = append(tt.Keys, t.emit(&chunk.Op{Kind: "stored", Stored: id, Shape: tensor.ChunkShape(src.Chunks, grid, i), DType: src.DType}))
	}
	return tt, nil
}

// rechunk returns src cut into chunks, emitting an assemble op for every new
// chunk that is not already one of src's chunks.
func (t *tiler) rechunk(src *tensor.TiledTensor, chunks [][]int) *tensor.TiledTensor {
	if SameChunks(src.Chunks, chunks) {
		return src
	}
	nd := len(chunks)
	out := &tensor.TiledTensor{Shape: src.Shape, DType: src.DType, Chunks: chunks}
	srcOffs, dstOffs := tensor.ChunkOffsets(src.Chunks), tensor.ChunkOffsets(chunks)
	srcGrid, dstGrid := tensor.GridShape(src.Chunks), tensor.GridShape(chunks)
	// For each axis and each new chunk, the source chunks it overlaps.
	type span struct{ chunk, from, n, dst int }
	overlaps := make([][][]span, nd)
	for ax := 0; ax < nd; ax++ {
		overlaps[ax] = make([][]span, len(chunks[ax]))
		for j, size := range chunks[ax] {
			lo, hi := dstOffs[ax][j], dstOffs[ax][j]+size
			for i, c := range src.Chunks[ax] {
				s, e := max(lo, srcOffs[ax][i]), min(hi, srcOffs[ax][i]+c)
				if s < e || (size == 0 && c == 0 && lo == srcOffs[ax][i]) {
					overlaps[ax][j] = append(overlaps[ax][j], span{i, s - srcOffs[ax][i], e - s, s - lo})
				}
			}
		}
	}
	n := tensor.NumElements(dstGrid)
	for k := 0; k < n; k++ {
		idx := tensor.Unravel(k, dstGrid)
		shape := make([]int, nd)
		for ax := range shape {
			shape[ax] = chunks[ax][idx[ax]]
		}
		// Cartesian product of the overlapping source chunks.
		var pieces []chunk.Piece
		var inputs []int
		sel := make([]int, nd)
		for {
			pc := chunk.Piece{In: len(inputs), Src: make([]tensor.Slice, nd), Dst: make([]int, nd)}
			srcIdx := make([]int, nd)
			empty := false
			for ax := 0; ax < nd; ax++ {
				ov := overlaps[ax][idx[ax]]
				if len(ov) == 0 {
					empty = true
					break
				}
				sp := ov[sel[ax]]
				srcIdx[ax] = sp.chunk
				pc.Src[ax] = tensor.Slice{Start: sp.from, Step: 1, Len: sp.n}
				pc.Dst[ax] = sp.dst
			}
			if empty {
				break
			}
			inputs = append(inputs, int(src.Keys[tensor.Ravel(srcIdx, srcGrid)]))
			pieces = append(pieces, pc)
			ax := nd - 1
			for ; ax >= 0; ax-- {
				if sel[ax]++; sel[ax] < len(overlaps[ax][idx[ax]]) {
					break
				}
				sel[ax] = 0
			}
			if ax < 0 {
				break
			}
		}
		key := t.emit(&chunk.Op{Kind: "assemble", Inputs: inputs, Shape: shape, DType: src.DType, Args: chunk.AssembleArgs{Pieces: pieces}})
		out.Keys = append(out.Keys, key)
	}
	return out
}

func SameChunks(a, b [][]int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
