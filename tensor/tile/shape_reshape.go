package tile

import (
	"fmt"
	"math"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

func tileReshape(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	if len(n.Inputs) != 1 {
		return nil, fmt.Errorf("need 1 input, have %d", len(n.Inputs))
	}
	in := t.input(n, 0)
	if n.DType != in.DType {
		return nil, fmt.Errorf("node is %v, input %v", n.DType, in.DType)
	}
	for _, s := range n.Shape {
		if s < 0 {
			return nil, fmt.Errorf("negative dimension in shape %v", n.Shape)
		}
	}
	total := tensor.NumElements(in.Shape)
	if tensor.NumElements(n.Shape) != total {
		return nil, fmt.Errorf("cannot reshape array of size %d into shape %v", total, n.Shape)
	}
	if slices.Equal(n.Shape, in.Shape) {
		return in, nil
	}
	if total == 0 || len(in.Keys) == 1 {
		// One output chunk, from the one input chunk or from nothing.
		out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: make([][]int, len(n.Shape))}
		for ax, s := range n.Shape {
			out.Chunks[ax] = []int{s}
		}
		op := &chunk.Op{Kind: chunk.KindReshape, Shape: n.Shape, DType: n.DType, Args: chunk.ReshapeArgs{}}
		if total > 0 {
			op.Inputs = []int{int(in.Keys[0])}
			op.Args = chunk.ReshapeArgs{Runs: []chunk.ReshapeRun{{Len: total, Count: 1}}}
		}
		out.Keys = []uint64{t.emit(op)}
		return out, nil
	}
	if chunks, ok := unitAxesChunks(in, n.Shape); ok {
		// Only axes of length 1 come or go: reshape chunk by chunk. The
		// grid orders are the same, since those axes have one chunk each.
		out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: chunks}
		grid := tensor.GridShape(chunks)
		for k, key := range in.Keys {
			shape := tensor.ChunkShape(chunks, grid, k)
			out.Keys = append(out.Keys, t.emit(&chunk.Op{
				Kind: chunk.KindReshape, Inputs: []int{int(key)}, Shape: shape, DType: n.DType,
				Args: chunk.ReshapeArgs{Runs: []chunk.ReshapeRun{{Len: tensor.NumElements(shape), Count: 1}}},
			}))
		}
		return out, nil
	}
	chunks := reshapeChunks(in, n.Shape)
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: chunks}
	grid := tensor.GridShape(chunks)
	gather := newReshapeGather(in, n.Shape, chunks)
	for k := 0; k < tensor.NumElements(grid); k++ {
		inputs, args := gather.op(tensor.Unravel(k, grid))
		out.Keys = append(out.Keys, t.emit(&chunk.Op{
			Kind: chunk.KindReshape, Inputs: inputs, Shape: tensor.ChunkShape(chunks, grid, k), DType: n.DType, Args: args,
		}))
	}
	return out, nil
}

// unitAxesChunks reports whether reshaping in to shape only inserts or
// removes axes of length 1, and if so returns the output chunking that
// keeps every chunk as it is.
func unitAxesChunks(in *tensor.TiledTensor, shape []int) ([][]int, bool) {
	var kept [][]int
	for ax, s := range in.Shape {
		if s != 1 {
			kept = append(kept, in.Chunks[ax])
		} else if len(in.Chunks[ax]) != 1 {
			return nil, false
		}
	}
	chunks := make([][]int, len(shape))
	i := 0
	for ax, s := range shape {
		if s == 1 {
			chunks[ax] = []int{1}
			continue
		}
		if i == len(kept) || axisLength(kept[i]) != s {
			return nil, false
		}
		chunks[ax] = kept[i]
		i++
	}
	return chunks, i == len(kept)
}

// axisLength is the length of an axis chunked as xs.
func axisLength(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// reshapeChunks chooses the output chunking of a reshape of a non-empty in
// to shape. The axes of length other than 1 fall into groups that reshape
// among themselves (input axes whose product equals the product of output
// axes, as {2, 3} and {6} in (2, 3, 4) -> (6, 4)). An output axis alone in a
// group with one input axis of its length keeps that axis' chunks. The axes
// of a larger group get chunks holding about as many elements as the input
// chunks of the group, filling the trailing axes first so that the output
// chunks are long contiguous runs.
func reshapeChunks(in *tensor.TiledTensor, shape []int) [][]int {
	var ia, oa []int
	for ax, s := range in.Shape {
		if s != 1 {
			ia = append(ia, ax)
		}
	}
	chunks := make([][]int, len(shape))
	for ax, s := range shape {
		if s != 1 {
			oa = append(oa, ax)
		} else {
			chunks[ax] = []int{1}
		}
	}
	for i, j := 0, 0; i < len(ia) && j < len(oa); {
		gi, gj := []int{ia[i]}, []int{oa[j]}
		pi, pj := in.Shape[ia[i]], shape[oa[j]]
		i, j = i+1, j+1
		for pi != pj {
			if pi < pj {
				gi = append(gi, ia[i])
				pi *= in.Shape[ia[i]]
				i++
			} else {
				gj = append(gj, oa[j])
				pj *= shape[oa[j]]
				j++
			}
		}
		if len(gi) == 1 && len(gj) == 1 {
			chunks[gj[0]] = in.Chunks[gi[0]]
			continue
		}
		blocks := 1
		for _, ax := range gi {
			blocks *= len(in.Chunks[ax])
		}
		target := float64(pi) / float64(blocks)
		for q := len(gj) - 1; q >= 0; q-- {
			d := shape[gj[q]]
			c := min(max(int(math.Round(target)), 1), d)
			chunks[gj[q]] = ReshapeSplit(d, c)
			target /= float64(c)
		}
	}
	return chunks
}

// ReshapeSplit cuts an axis of length d into chunks of c, the last one ragged.
func ReshapeSplit(d, c int) []int {
	var cs []int
	for ; d > c; d -= c {
		cs = append(cs, c)
	}
	return append(cs, d)
}

// A reshapeGather finds the runs of the ops of a reshape of a non-empty
// tensor in to shape cut into chunks. It holds what every op needs, computed
// once.
type reshapeGather struct {
	in              *tensor.TiledTensor
	shape           []int
	chunks          [][]int
	outOffs, inOffs [][]int
	outStr, inGrid  []int
	slot            []int // by input chunk (C-order grid index): 1 + its index in the op's inputs, or 0
}

func newReshapeGather(in *tensor.TiledTensor, shape []int, chunks [][]int) *reshapeGather {
	return &reshapeGather{
		in: in, shape: shape, chunks: chunks,
		outOffs: tensor.ChunkOffsets(chunks), inOffs: tensor.ChunkOffsets(in.Chunks),
		outStr: tensor.ByteStrides(shape, 1), inGrid: tensor.GridShape(in.Chunks),
		slot: make([]int, len(in.Keys)),
	}
}

// op returns the inputs and runs of the op that makes the output chunk at
// grid index idx.
func (g *reshapeGather) op(idx []int) ([]int, chunk.ReshapeArgs) {
	in, shape := g.in, g.shape
	nd, m := len(shape), len(in.Shape)
	cshape := make([]int, nd)
	for ax, i := range idx {
		cshape[ax] = g.chunks[ax][i]
	}
	// The chunk is contiguous in the output from axis p on: its rows of
	// runLen elements are contiguous in both the output and the chunk.
	p := 0
	for ax := nd - 1; ax >= 0; ax-- {
		if cshape[ax] != shape[ax] {
			p = ax
			break
		}
	}
	runLen := tensor.NumElements(cshape[p:])
	chunkStr := tensor.ByteStrides(cshape, 1)
	b := runBuilder{slot: g.slot}
	u, c, l, ishape := make([]int, m), make([]int, m), make([]int, m), make([]int, m)
	tensor.VisitIndices(cshape, axesFrom(p, nd), func(loc []int) {
		f, dst := 0, 0
		for ax := range nd {
			f += (g.outOffs[ax][idx[ax]] + loc[ax]) * g.outStr[ax]
			dst += loc[ax] * chunkStr[ax]
		}
		for rem := runLen; rem > 0; {
			// The input chunk holding flat element f, and f's place in it.
			r := f
			for ax := m - 1; ax >= 0; ax-- {
				u[ax] = r % in.Shape[ax]
				r /= in.Shape[ax]
			}
			for ax := range m {
				c[ax] = ChunkAt(g.inOffs[ax], u[ax])
				l[ax] = u[ax] - g.inOffs[ax][c[ax]]
				ishape[ax] = in.Chunks[ax][c[ax]]
			}
			// How far the flat order stays in that chunk and contiguous in
			// it: to the end of the row, and further over every trailing
			// axis the chunk spans whole, from its start.
			ext, inner := ishape[m-1]-l[m-1], 1
			for ax := m - 1; ax > 0 && l[ax] == 0 && ishape[ax] == in.Shape[ax]; ax-- {
				inner *= in.Shape[ax]
				ext = inner * (ishape[ax-1] - l[ax-1])
			}
			n := min(ext, rem)
			src, s := 0, 1
			for ax := m - 1; ax >= 0; ax-- {
				src += l[ax] * s
				s *= ishape[ax]
			}
			b.add(tensor.Ravel(c, g.inGrid), src, dst, n)
			f, dst, rem = f+n, dst+n, rem-n
		}
	})
	inputs := make([]int, len(b.chunks))
	for i, k := range b.chunks {
		inputs[i] = int(in.Keys[k])
		g.slot[k] = 0
	}
	return inputs, chunk.ReshapeArgs{Runs: b.runs}
}

// axesFrom lists the axes p..nd-1.
func axesFrom(p, nd int) []int {
	axes := make([]int, 0, nd-p)
	for ax := p; ax < nd; ax++ {
		axes = append(axes, ax)
	}
	return axes
}

// A runBuilder collects the runs of one reshape op, merging each new run
// into the last run from the same input when they form a regular sequence.
type runBuilder struct {
	chunks []int // the input chunks read, as grid indices, in input order
	last   []int // by input: its latest run
	runs   []chunk.ReshapeRun
	slot   []int // by input chunk: 1 + its input index, or 0
}

func (b *runBuilder) add(ci, src, dst, n int) {
	in := b.slot[ci] - 1
	if in < 0 {
		in = len(b.chunks)
		b.slot[ci] = in + 1
		b.chunks = append(b.chunks, ci)
		b.last = append(b.last, -1)
	}
	if i := b.last[in]; i >= 0 {
		r := &b.runs[i]
		switch {
		case r.Len != n:
		case r.Count == 1:
			r.SrcStride, r.DstStride, r.Count = src-r.Src, dst-r.Dst, 2
			return
		case src == r.Src+r.Count*r.SrcStride && dst == r.Dst+r.Count*r.DstStride:
			r.Count++
			return
		}
	}
	b.last[in] = len(b.runs)
	b.runs = append(b.runs, chunk.ReshapeRun{In: in, Src: src, Dst: dst, Len: n, Count: 1})
}
