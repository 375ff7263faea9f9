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
		tt.Keys = append(tt.Keys, t.emit(&chunk.Op{Kind: chunk.KindStored, Stored: id, Shape: tensor.ChunkShape(src.Chunks, grid, i), DType: src.DType}))
	}
	return tt, nil
}

// rechunk returns src cut into chunks, emitting an assemble op for every new
// chunk that is not already one of src's chunks.
//
// A new chunk reads of each source chunk only the block it needs. Where
// that block is one run of the source chunk's bytes (rows of a chunk cut
// by rows, the (N, 1) to (1, N) case), it reads the run (a chunk.Range),
// and only the run moves. Where it is not, and at least splitFanout new
// chunks read blocks of the source chunk so (the (1, N) to (N, 1) case),
// a shuffle's map op ("rechunk.split") lays the source chunk out block by
// block first, and each new chunk reads its block as a run of that: the
// source chunk is copied once more where it is, rather than moved whole
// to each new chunk's worker. Otherwise the new chunk reads the whole
// source chunk.
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
	// Every new chunk's pieces, each with the flat index of its source
	// chunk.
	type dstChunk struct {
		shape  []int
		pieces []chunk.Piece
		srcs   []int
	}
	n := tensor.NumElements(dstGrid)
	dsts := make([]dstChunk, n)
	for k := 0; k < n; k++ {
		idx := tensor.Unravel(k, dstGrid)
		shape := make([]int, nd)
		for ax := range shape {
			shape[ax] = chunks[ax][idx[ax]]
		}
		d := &dsts[k]
		d.shape = shape
		// Cartesian product of the overlapping source chunks.
		sel := make([]int, nd)
		for {
			pc := chunk.Piece{In: len(d.srcs), Src: make([]tensor.Slice, nd), Dst: make([]int, nd)}
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
			d.srcs = append(d.srcs, tensor.Ravel(srcIdx, srcGrid))
			d.pieces = append(d.pieces, pc)
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
	}
	// How each piece is read: whole, as a run of its source chunk, or as
	// a run of the source chunk's split.
	srcShape := func(i int) []int { return tensor.ChunkShape(src.Chunks, srcGrid, i) }
	scattered := make(map[int]int) // source chunk: new chunks reading a scattered block of it
	for _, d := range dsts {
		for j, pc := range d.pieces {
			if shape := srcShape(d.srcs[j]); !wholeBox(pc.Src, shape) {
				if _, ok := runOf(pc.Src, shape); !ok {
					scattered[d.srcs[j]]++
				}
			}
		}
	}
	split := make(map[int]uint64) // source chunk: its split op
	at := make(map[int]int)       // source chunk: where its next block begins in the split
	var boxes map[int][][]tensor.Slice
	for i, f := range scattered {
		if f >= splitFanout {
			if boxes == nil {
				boxes = make(map[int][][]tensor.Slice)
			}
			boxes[i] = nil
		}
	}
	if boxes != nil {
		for _, d := range dsts {
			for j, pc := range d.pieces {
				if _, ok := boxes[d.srcs[j]]; ok && !wholeBox(pc.Src, srcShape(d.srcs[j])) {
					if _, ok := runOf(pc.Src, srcShape(d.srcs[j])); !ok {
						boxes[d.srcs[j]] = append(boxes[d.srcs[j]], pc.Src)
					}
				}
			}
		}
		for i := range tensor.NumElements(srcGrid) {
			bs, ok := boxes[i]
			if !ok {
				continue
			}
			total := 0
			for _, b := range bs {
				total += boxLen(b)
			}
			split[i] = t.emit(&chunk.Op{Kind: chunk.KindRechunkSplit, Inputs: []int{int(src.Keys[i])}, Shape: []int{total}, DType: src.DType, Args: chunk.SplitArgs{Boxes: bs}})
		}
	}
	for _, d := range dsts {
		inputs := make([]int, len(d.srcs))
		var ranges []chunk.Range
		for j := range d.pieces {
			pc := &d.pieces[j]
			i := d.srcs[j]
			inputs[j] = int(src.Keys[i])
			shape := srcShape(i)
			if wholeBox(pc.Src, shape) {
				continue
			}
			r, ok := runOf(pc.Src, shape)
			if !ok {
				sp, isSplit := split[i]
				if !isSplit {
					continue
				}
				inputs[j] = int(sp)
				r = chunk.Range{Off: at[i], Shape: boxShape(pc.Src)}
				at[i] += boxLen(pc.Src)
			}
			if ranges == nil {
				ranges = make([]chunk.Range, len(d.pieces))
			}
			r.DType = src.DType
			ranges[j] = r
			pc.Src = fullBox(r.Shape)
		}
		key := t.emit(&chunk.Op{Kind: chunk.KindAssemble, Inputs: inputs, Ranges: chunk.RangesOf(ranges), Shape: d.shape, DType: src.DType, Args: chunk.AssembleArgs{Pieces: d.pieces}})
		out.Keys = append(out.Keys, key)
	}
	return out
}

// splitFanout is the number of new chunks reading scattered blocks of a
// source chunk from which a rechunk splits it (see rechunk): below it,
// moving the chunk whole to the few readers costs less than a copy.
const splitFanout = 3

// wholeBox reports whether box selects all of a chunk of shape.
func wholeBox(box []tensor.Slice, shape []int) bool {
	for ax, sl := range box {
		if sl.Start != 0 || sl.Len != shape[ax] {
			return false
		}
	}
	return true
}

// runOf returns the run of a chunk of shape that box selects, when it is
// one: its axes after some axis k whole, those before k of length 1.
func runOf(box []tensor.Slice, shape []int) (chunk.Range, bool) {
	nd := len(shape)
	k := -1
	for ax := nd - 1; ax >= 0; ax-- {
		if box[ax].Start != 0 || box[ax].Len != shape[ax] {
			k = ax
			break
		}
	}
	for ax := 0; ax < k; ax++ {
		if box[ax].Len != 1 {
			return chunk.Range{}, false
		}
	}
	off, stride := 0, 1
	for ax := nd - 1; ax >= 0; ax-- {
		off += box[ax].Start * stride
		stride *= shape[ax]
	}
	return chunk.Range{Off: off, Shape: boxShape(box)}, true
}

func boxShape(box []tensor.Slice) []int {
	shape := make([]int, len(box))
	for ax, sl := range box {
		shape[ax] = sl.Len
	}
	return shape
}

func boxLen(box []tensor.Slice) int { return tensor.NumElements(boxShape(box)) }

func fullBox(shape []int) []tensor.Slice {
	box := make([]tensor.Slice, len(shape))
	for ax, n := range shape {
		box[ax] = tensor.Slice{Start: 0, Step: 1, Len: n}
	}
	return box
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
