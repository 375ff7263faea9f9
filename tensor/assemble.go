package tensor

import (
	"context"
	"fmt"
	"slices"
)

// AssembleArgs are the arguments of the "assemble" kernel, which builds one
// output chunk from strided blocks of its input chunks. Rechunking, slicing,
// concatenation and the alignment of elementwise operands all tile to it, so
// only the blocks a chunk needs ever move.
type AssembleArgs struct {
	Pieces []Piece
}

// A Piece copies a strided block of input chunk In (an index into
// ChunkOp.Inputs) to offset Dst of the output chunk. Src holds one Slice an
// axis in the input chunk's own coordinates.
type Piece struct {
	In  int
	Src []Slice
	Dst []int
}

func tileRechunk(t *tiler, n *Node) (*TiledTensor, error) {
	return t.rechunk(t.input(n, 0), n.Chunks), nil
}

func tileInput(t *tiler, n *Node) (*TiledTensor, error) {
	if t.env == nil {
		return nil, fmt.Errorf("no session tensors to name %q", n.Attrs.Name)
	}
	src, ok := t.env.Lookup(n.Attrs.Name)
	if !ok {
		return nil, fmt.Errorf("unknown tensor %q", n.Attrs.Name)
	}
	tt := &TiledTensor{Shape: src.Shape, DType: src.DType, Chunks: src.Chunks}
	grid := GridShape(src.Chunks)
	for i, id := range src.Keys {
		tt.Keys = append(tt.Keys, t.emit(&ChunkOp{Kind: "stored", Stored: id, Shape: chunkShape(src.Chunks, grid, i), DType: src.DType}))
	}
	return tt, nil
}

// chunkShape is the shape of the i-th chunk (C order over grid) of chunks.
func chunkShape(chunks [][]int, grid []int, i int) []int {
	shape := make([]int, len(chunks))
	for ax := len(chunks) - 1; ax >= 0; ax-- {
		shape[ax] = chunks[ax][i%grid[ax]]
		i /= grid[ax]
	}
	return shape
}

// rechunk returns src cut into chunks, emitting an assemble op for every new
// chunk that is not already one of src's chunks.
func (t *tiler) rechunk(src *TiledTensor, chunks [][]int) *TiledTensor {
	if sameChunks(src.Chunks, chunks) {
		return src
	}
	nd := len(chunks)
	out := &TiledTensor{Shape: src.Shape, DType: src.DType, Chunks: chunks}
	srcOffs, dstOffs := ChunkOffsets(src.Chunks), ChunkOffsets(chunks)
	srcGrid, dstGrid := GridShape(src.Chunks), GridShape(chunks)
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
	n := NumElements(dstGrid)
	for k := 0; k < n; k++ {
		idx := unravel(k, dstGrid)
		shape := make([]int, nd)
		for ax := range shape {
			shape[ax] = chunks[ax][idx[ax]]
		}
		// Cartesian product of the overlapping source chunks.
		var pieces []Piece
		var inputs []int
		sel := make([]int, nd)
		for {
			pc := Piece{In: len(inputs), Src: make([]Slice, nd), Dst: make([]int, nd)}
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
				pc.Src[ax] = Slice{Start: sp.from, Step: 1, Len: sp.n}
				pc.Dst[ax] = sp.dst
			}
			if empty {
				break
			}
			inputs = append(inputs, int(src.Keys[ravel(srcIdx, srcGrid)]))
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
		key := t.emit(&ChunkOp{Kind: "assemble", Inputs: inputs, Shape: shape, DType: src.DType, Args: AssembleArgs{Pieces: pieces}})
		out.Keys = append(out.Keys, key)
	}
	return out
}

func sameChunks(a, b [][]int) bool {
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

// unravel turns a C-order flat index into a grid index.
func unravel(k int, grid []int) []int {
	idx := make([]int, len(grid))
	for ax := len(grid) - 1; ax >= 0; ax-- {
		idx[ax] = k % grid[ax]
		k /= grid[ax]
	}
	return idx
}

// ravel turns a grid index into a C-order flat index.
func ravel(idx, grid []int) int {
	k := 0
	for ax := range grid {
		k = k*grid[ax] + idx[ax]
	}
	return k
}

func assembleKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(AssembleArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	out := newOutput(ctx, op)
	for _, p := range args.Pieces {
		if p.In < 0 || p.In >= len(in) {
			return nil, fmt.Errorf("piece reads input %d of %d", p.In, len(in))
		}
		copyStrided(out, p.Dst, in[p.In], p.Src)
	}
	return out, nil
}

// copyStrided copies the block of src selected by sel (one Slice an axis) to
// dst at offset off.
func copyStrided(dst *Array, off []int, src *Array, sel []Slice) {
	nd := len(dst.Shape)
	es := dst.DType.Size()
	if nd == 0 {
		copy(dst.Data, src.Data[:es])
		return
	}
	lens := make([]int, nd)
	for ax, s := range sel {
		lens[ax] = s.Len
	}
	if NumElements(lens) == 0 {
		return
	}
	dstStr, srcStr := byteStrides(dst.Shape, es), byteStrides(src.Shape, es)
	idx := make([]int, nd-1)
	last := sel[nd-1]
	for {
		so, do := last.Start*srcStr[nd-1], off[nd-1]*dstStr[nd-1]
		for ax := 0; ax < nd-1; ax++ {
			so += (sel[ax].Start + idx[ax]*sel[ax].Step) * srcStr[ax]
			do += (off[ax] + idx[ax]) * dstStr[ax]
		}
		if last.Step == 1 {
			copy(dst.Data[do:do+last.Len*es], src.Data[so:so+last.Len*es])
		} else {
			step := last.Step * es
			for i := 0; i < last.Len; i++ {
				copy(dst.Data[do+i*es:do+(i+1)*es], src.Data[so+i*step:so+i*step+es])
			}
		}
		ax := nd - 2
		for ; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < lens[ax] {
				break
			}
			idx[ax] = 0
		}
		if ax < 0 {
			return
		}
	}
}

// byteStrides are the C-order strides in bytes of an array of shape.
func byteStrides(shape []int, es int) []int {
	st := make([]int, len(shape))
	s := es
	for ax := len(shape) - 1; ax >= 0; ax-- {
		st[ax] = s
		s *= shape[ax]
	}
	return st
}

// whole selects every element of an array of shape.
func whole(shape []int) []Slice {
	sel := make([]Slice, len(shape))
	for ax, n := range shape {
		sel[ax] = Slice{Start: 0, Step: 1, Len: n}
	}
	return sel
}
