package tile

import (
	"fmt"
	"slices"
	"sort"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// tileTranspose transposes every chunk on its own: the chunk grid is
// permuted like the axes, so no element changes chunk.
func tileTranspose(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	if len(n.Inputs) != 1 {
		return nil, fmt.Errorf("need 1 input, have %d", len(n.Inputs))
	}
	in := t.input(n, 0)
	nd := len(in.Shape)
	perm := n.Attrs.Perm
	if err := tensor.CheckPerm(perm, nd); err != nil {
		return nil, err
	}
	if len(n.Shape) != nd || n.DType != in.DType {
		return nil, fmt.Errorf("node is %v%v, input %v%v", n.DType, n.Shape, in.DType, in.Shape)
	}
	identity := true
	chunks := make([][]int, nd)
	for ax, p := range perm {
		if n.Shape[ax] != in.Shape[p] {
			return nil, fmt.Errorf("shape %v is not %v transposed by %v", n.Shape, in.Shape, perm)
		}
		chunks[ax] = in.Chunks[p]
		identity = identity && p == ax
	}
	if identity {
		return in, nil
	}
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: chunks}
	grid, inGrid := tensor.GridShape(chunks), tensor.GridShape(in.Chunks)
	src := make([]int, nd)
	args := chunk.TransposeArgs{Perm: append([]int(nil), perm...)}
	for k := 0; k < tensor.NumElements(grid); k++ {
		for ax, i := range tensor.Unravel(k, grid) {
			src[perm[ax]] = i
		}
		key := in.Keys[tensor.Ravel(src, inGrid)]
		out.Keys = append(out.Keys, t.emit(&chunk.Op{
			Kind: chunk.KindTranspose, Inputs: []int{int(key)},
			Shape: tensor.ChunkShape(chunks, grid, k), DType: n.DType, Args: args,
		}))
	}
	return out, nil
}

// A sliceSeg is the part of one input chunk a slice selects along one axis:
// Len elements of chunk Chunk from its local index Start.
type sliceSeg struct {
	chunk, start, n int
}

// sliceSegments splits the elements sl selects from an axis chunked as
// chunks (with offsets offs) into runs that each lie in one chunk, in output
// order. An empty selection is one empty segment of no chunk.
func sliceSegments(sl tensor.Slice, chunks, offs []int) []sliceSeg {
	if sl.Len == 0 {
		return []sliceSeg{{chunk: -1}}
	}
	var segs []sliceSeg
	for k := 0; k < sl.Len; {
		x := sl.Start + k*sl.Step
		c := ChunkAt(offs, x)
		var cnt int
		if sl.Step > 0 {
			cnt = (offs[c] + chunks[c] - x + sl.Step - 1) / sl.Step
		} else {
			cnt = (x-offs[c])/-sl.Step + 1
		}
		cnt = min(cnt, sl.Len-k)
		segs = append(segs, sliceSeg{chunk: c, start: x - offs[c], n: cnt})
		k += cnt
	}
	return segs
}

// ChunkAt returns the chunk holding element x of an axis whose chunks start
// at offs. It is the last chunk starting at or before x, which skips empty
// chunks.
func ChunkAt(offs []int, x int) int {
	return sort.Search(len(offs), func(i int) bool { return offs[i] > x }) - 1
}

// tileSlice cuts the output along the input's chunk boundaries: each output
// chunk is what the slice selects from one input chunk, so every op reads
// exactly one input chunk, and a chunk selected whole is reused as it is.
func tileSlice(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	if len(n.Inputs) != 1 {
		return nil, fmt.Errorf("need 1 input, have %d", len(n.Inputs))
	}
	in := t.input(n, 0)
	nd := len(in.Shape)
	sls := n.Attrs.Slices
	if len(sls) != nd {
		return nil, fmt.Errorf("%d slices for %d dimensions", len(sls), nd)
	}
	if n.DType != in.DType || len(n.Shape) != nd {
		return nil, fmt.Errorf("node is %v%v, input %v%v", n.DType, n.Shape, in.DType, in.Shape)
	}
	offs := tensor.ChunkOffsets(in.Chunks)
	segs := make([][]sliceSeg, nd)
	chunks := make([][]int, nd)
	for ax, sl := range sls {
		size := in.Shape[ax]
		if sl.Len < 0 || sl.Step == 0 {
			return nil, fmt.Errorf("axis %d: bad slice start %d step %d length %d", ax, sl.Start, sl.Step, sl.Len)
		}
		if last := sl.Start + (sl.Len-1)*sl.Step; sl.Len > 0 && (sl.Start < 0 || sl.Start >= size || last < 0 || last >= size) {
			return nil, fmt.Errorf("axis %d: slice start %d step %d length %d is out of bounds for size %d", ax, sl.Start, sl.Step, sl.Len, size)
		}
		if n.Shape[ax] != sl.Len {
			return nil, fmt.Errorf("axis %d: slice of length %d for node shape %v", ax, sl.Len, n.Shape)
		}
		segs[ax] = sliceSegments(sl, in.Chunks[ax], offs[ax])
		for _, s := range segs[ax] {
			chunks[ax] = append(chunks[ax], s.n)
		}
	}
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: chunks}
	grid, inGrid := tensor.GridShape(chunks), tensor.GridShape(in.Chunks)
	src := make([]int, nd)
	for k := 0; k < tensor.NumElements(grid); k++ {
		idx := tensor.Unravel(k, grid)
		shape := make([]int, nd)
		sel := make([]tensor.Slice, nd)
		empty, whole := false, true
		for ax, i := range idx {
			s := segs[ax][i]
			shape[ax] = s.n
			if s.chunk < 0 {
				empty = true
				continue
			}
			src[ax] = s.chunk
			sel[ax] = tensor.Slice{Start: s.start, Step: sls[ax].Step, Len: s.n}
			whole = whole && s.start == 0 && s.n == in.Chunks[ax][s.chunk] && (s.n == 1 || sls[ax].Step == 1)
		}
		if empty {
			// Nothing to read: an empty chunk.
			out.Keys = append(out.Keys, t.emit(&chunk.Op{Kind: chunk.KindAssemble, Shape: shape, DType: n.DType, Args: chunk.AssembleArgs{}}))
			continue
		}
		key := in.Keys[tensor.Ravel(src, inGrid)]
		if whole {
			out.Keys = append(out.Keys, key)
			continue
		}
		out.Keys = append(out.Keys, t.emit(&chunk.Op{
			Kind: chunk.KindAssemble, Inputs: []int{int(key)}, Shape: shape, DType: n.DType,
			Args: chunk.AssembleArgs{Pieces: []chunk.Piece{{In: 0, Src: sel, Dst: make([]int, nd)}}},
		}))
	}
	return out, nil
}

// refineChunks returns the common refinement of chunkings of one axis: a
// chunk boundary wherever any of them has one. All must cover the same
// length; a zero length gives one empty chunk.
func refineChunks(lists ...[]int) []int {
	var bounds []int
	total := 0
	for _, cs := range lists {
		s := 0
		for _, c := range cs {
			s += c
			bounds = append(bounds, s)
		}
		total = s
	}
	if total == 0 {
		return []int{0}
	}
	sort.Ints(bounds)
	var out []int
	prev := 0
	for _, b := range bounds {
		if b > prev {
			out = append(out, b-prev)
			prev = b
		}
	}
	return out
}

// tileConcat lays the inputs' chunks one after another along the axis, after
// rechunking the inputs to a common refinement of their chunks on the other
// axes. Inputs of another dtype than the node's are converted chunk by chunk.
func tileConcat(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	if len(n.Inputs) == 0 {
		return nil, fmt.Errorf("need at least 1 input")
	}
	if len(n.Attrs.Axes) != 1 {
		return nil, fmt.Errorf("need one axis, have %v", n.Attrs.Axes)
	}
	first := t.input(n, 0)
	nd := len(first.Shape)
	axis := n.Attrs.Axes[0]
	if axis < 0 {
		axis += nd
	}
	if axis < 0 || axis >= nd {
		return nil, fmt.Errorf("axis %d is out of bounds for %d dimensions", axis, nd)
	}
	length := 0
	for i := range n.Inputs {
		in := t.input(n, i)
		if len(in.Shape) != nd {
			return nil, fmt.Errorf("input %d has %d dimensions, input 0 has %d", i, len(in.Shape), nd)
		}
		for ax := range nd {
			if ax != axis && in.Shape[ax] != first.Shape[ax] {
				return nil, fmt.Errorf("input %d has shape %v, input 0 has %v: sizes differ on axis %d", i, in.Shape, first.Shape, ax)
			}
		}
		length += in.Shape[axis]
	}
	want := append([]int(nil), first.Shape...)
	want[axis] = length
	if !slices.Equal(n.Shape, want) {
		return nil, fmt.Errorf("node shape %v, inputs concatenate to %v", n.Shape, want)
	}
	common := make([][]int, nd)
	for ax := range nd {
		if ax == axis {
			continue
		}
		var lists [][]int
		for i := range n.Inputs {
			lists = append(lists, t.input(n, i).Chunks[ax])
		}
		common[ax] = refineChunks(lists...)
	}
	// The inputs that contribute along the axis, aligned and converted.
	var parts []*tensor.TiledTensor
	for i := range n.Inputs {
		in := t.input(n, i)
		if in.Shape[axis] == 0 && (length > 0 || len(parts) > 0) {
			continue
		}
		chunks := append([][]int(nil), common...)
		chunks[axis] = in.Chunks[axis]
		parts = append(parts, t.convert(t.rechunk(in, chunks), n.DType))
	}
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: append([][]int(nil), common...)}
	// Along the axis: which part, and which of its chunks.
	type ref struct{ part, chunk int }
	var along []ref
	for p, pt := range parts {
		for c, size := range pt.Chunks[axis] {
			out.Chunks[axis] = append(out.Chunks[axis], size)
			along = append(along, ref{p, c})
		}
	}
	grid := tensor.GridShape(out.Chunks)
	for k := 0; k < tensor.NumElements(grid); k++ {
		idx := tensor.Unravel(k, grid)
		r := along[idx[axis]]
		pt := parts[r.part]
		idx[axis] = r.chunk
		out.Keys = append(out.Keys, pt.Keys[tensor.Ravel(idx, tensor.GridShape(pt.Chunks))])
	}
	return out, nil
}

// convert returns src with every chunk converted to dt (src itself when it
// has that dtype already).
func (t *tiler) convert(src *tensor.TiledTensor, dt tensor.DType) *tensor.TiledTensor {
	if src.DType == dt {
		return src
	}
	out := &tensor.TiledTensor{Shape: src.Shape, DType: dt, Chunks: src.Chunks}
	grid := tensor.GridShape(src.Chunks)
	for k, key := range src.Keys {
		out.Keys = append(out.Keys, t.emit(&chunk.Op{Kind: chunk.KindConvert, Inputs: []int{int(key)}, Shape: tensor.ChunkShape(src.Chunks, grid, k), DType: dt}))
	}
	return out
}
