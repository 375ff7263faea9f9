package tensor

import (
	"context"
	"fmt"
	"slices"
	"sort"
)

// Tile rules and kernels for transpose, slicing and concatenation. Reshape
// lives in shape_reshape.go. None of these ops computes anything: they move
// elements, and their rules take care that an element only leaves its chunk
// when the output chunking makes it necessary.

// TransposeArgs are the arguments of the "transpose" kernel: axis ax of the
// output chunk is axis Perm[ax] of the input chunk.
type TransposeArgs struct {
	Perm []int
}

// checkPerm reports whether perm is a permutation of 0..nd-1.
func checkPerm(perm []int, nd int) error {
	if len(perm) != nd {
		return fmt.Errorf("axes %v do not match an array of %d dimensions", perm, nd)
	}
	seen := make([]bool, nd)
	for _, p := range perm {
		if p < 0 || p >= nd || seen[p] {
			return fmt.Errorf("axes %v are not a permutation of %d dimensions", perm, nd)
		}
		seen[p] = true
	}
	return nil
}

// tileTranspose transposes every chunk on its own: the chunk grid is
// permuted like the axes, so no element changes chunk.
func tileTranspose(t *tiler, n *Node) (*TiledTensor, error) {
	if len(n.Inputs) != 1 {
		return nil, fmt.Errorf("need 1 input, have %d", len(n.Inputs))
	}
	in := t.input(n, 0)
	nd := len(in.Shape)
	perm := n.Attrs.Perm
	if err := checkPerm(perm, nd); err != nil {
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
	out := &TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: chunks}
	grid, inGrid := GridShape(chunks), GridShape(in.Chunks)
	src := make([]int, nd)
	args := TransposeArgs{Perm: append([]int(nil), perm...)}
	for k := 0; k < NumElements(grid); k++ {
		for ax, i := range unravel(k, grid) {
			src[perm[ax]] = i
		}
		key := in.Keys[ravel(src, inGrid)]
		out.Keys = append(out.Keys, t.emit(&ChunkOp{
			Kind: "transpose", Inputs: []int{int(key)},
			Shape: chunkShape(chunks, grid, k), DType: n.DType, Args: args,
		}))
	}
	return out, nil
}

func transposeKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(TransposeArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	if len(in) != 1 {
		return nil, fmt.Errorf("%d inputs, want 1", len(in))
	}
	src := in[0]
	if err := checkPerm(args.Perm, len(src.Shape)); err != nil {
		return nil, err
	}
	if src.DType != op.DType || len(op.Shape) != len(src.Shape) {
		return nil, fmt.Errorf("input %v%v for output %v%v", src.DType, src.Shape, op.DType, op.Shape)
	}
	for ax, p := range args.Perm {
		if op.Shape[ax] != src.Shape[p] {
			return nil, fmt.Errorf("input shape %v does not transpose by %v to %v", src.Shape, args.Perm, op.Shape)
		}
	}
	out := newOutputAll(ctx, op) // a permutation of the input sets every element
	if out.Len() == 0 {
		return out, nil
	}
	switch op.DType.Size() {
	case 1:
		transposeInto(view[uint8](out.Data), view[uint8](src.Data), src.Shape, args.Perm)
	case 4:
		transposeInto(view[uint32](out.Data), view[uint32](src.Data), src.Shape, args.Perm)
	case 8:
		transposeInto(view[uint64](out.Data), view[uint64](src.Data), src.Shape, args.Perm)
	default:
		return nil, fmt.Errorf("invalid dtype %v", op.DType)
	}
	return out, nil
}

// transposeBlock is the side of the square tiles a transpose copies at a
// time: 32x32 elements of 8 bytes are 8 KiB, so a tile's source lines and
// destination lines both stay in L1.
const transposeBlock = 32

// transposeInto writes src (of shape) transposed by perm to dst, which is
// non-empty.
func transposeInto[T any](dst, src []T, shape, perm []int) {
	nd := len(shape)
	if nd == 0 {
		dst[0] = src[0]
		return
	}
	oshape := make([]int, nd)
	for ax, p := range perm {
		oshape[ax] = shape[p]
	}
	sstr, ostr := byteStrides(shape, 1), byteStrides(oshape, 1)
	ps := make([]int, nd) // source stride of each output axis
	for ax, p := range perm {
		ps[ax] = sstr[p]
	}
	a := nd - 1 // the output's contiguous axis
	if perm[a] == nd-1 {
		// Rows are contiguous in both: copy them whole.
		visitIndices(oshape, []int{a}, func(idx []int) {
			d, s := 0, 0
			for ax, i := range idx {
				d += i * ostr[ax]
				s += i * ps[ax]
			}
			copy(dst[d:d+oshape[a]], src[s:s+oshape[a]])
		})
		return
	}
	b := 0 // the output axis that is contiguous in the source
	for ax, p := range perm {
		if p == nd-1 {
			b = ax
		}
	}
	na, nb, dsb, ssa := oshape[a], oshape[b], ostr[b], ps[a]
	visitIndices(oshape, []int{a, b}, func(idx []int) {
		d0, s0 := 0, 0
		for ax, i := range idx {
			d0 += i * ostr[ax]
			s0 += i * ps[ax]
		}
		for i0 := 0; i0 < nb; i0 += transposeBlock {
			i1 := min(i0+transposeBlock, nb)
			for j0 := 0; j0 < na; j0 += transposeBlock {
				j1 := min(j0+transposeBlock, na)
				for i := i0; i < i1; i++ {
					d, s := d0+i*dsb, s0+i
					for j := j0; j < j1; j++ {
						dst[d+j] = src[s+j*ssa]
					}
				}
			}
		}
	})
}

// visitIndices calls f with every index of shape in C order, holding the
// axes in skip at 0. f must not keep idx.
func visitIndices(shape, skip []int, f func(idx []int)) {
	nd := len(shape)
	idx := make([]int, nd)
	free := make([]int, 0, nd)
	for ax := 0; ax < nd; ax++ {
		skipped := false
		for _, s := range skip {
			skipped = skipped || s == ax
		}
		if !skipped {
			if shape[ax] == 0 {
				return
			}
			free = append(free, ax)
		}
	}
	for {
		f(idx)
		i := len(free) - 1
		for ; i >= 0; i-- {
			ax := free[i]
			if idx[ax]++; idx[ax] < shape[ax] {
				break
			}
			idx[ax] = 0
		}
		if i < 0 {
			return
		}
	}
}

// A sliceSeg is the part of one input chunk a slice selects along one axis:
// Len elements of chunk Chunk from its local index Start.
type sliceSeg struct {
	chunk, start, n int
}

// sliceSegments splits the elements sl selects from an axis chunked as
// chunks (with offsets offs) into runs that each lie in one chunk, in output
// order. An empty selection is one empty segment of no chunk.
func sliceSegments(sl Slice, chunks, offs []int) []sliceSeg {
	if sl.Len == 0 {
		return []sliceSeg{{chunk: -1}}
	}
	var segs []sliceSeg
	for k := 0; k < sl.Len; {
		x := sl.Start + k*sl.Step
		c := chunkAt(offs, x)
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

// chunkAt returns the chunk holding element x of an axis whose chunks start
// at offs. It is the last chunk starting at or before x, which skips empty
// chunks.
func chunkAt(offs []int, x int) int {
	return sort.Search(len(offs), func(i int) bool { return offs[i] > x }) - 1
}

// tileSlice cuts the output along the input's chunk boundaries: each output
// chunk is what the slice selects from one input chunk, so every op reads
// exactly one input chunk, and a chunk selected whole is reused as it is.
func tileSlice(t *tiler, n *Node) (*TiledTensor, error) {
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
	offs := ChunkOffsets(in.Chunks)
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
	out := &TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: chunks}
	grid, inGrid := GridShape(chunks), GridShape(in.Chunks)
	src := make([]int, nd)
	for k := 0; k < NumElements(grid); k++ {
		idx := unravel(k, grid)
		shape := make([]int, nd)
		sel := make([]Slice, nd)
		empty, whole := false, true
		for ax, i := range idx {
			s := segs[ax][i]
			shape[ax] = s.n
			if s.chunk < 0 {
				empty = true
				continue
			}
			src[ax] = s.chunk
			sel[ax] = Slice{Start: s.start, Step: sls[ax].Step, Len: s.n}
			whole = whole && s.start == 0 && s.n == in.Chunks[ax][s.chunk] && (s.n == 1 || sls[ax].Step == 1)
		}
		if empty {
			// Nothing to read: an empty chunk.
			out.Keys = append(out.Keys, t.emit(&ChunkOp{Kind: "assemble", Shape: shape, DType: n.DType, Args: AssembleArgs{}}))
			continue
		}
		key := in.Keys[ravel(src, inGrid)]
		if whole {
			out.Keys = append(out.Keys, key)
			continue
		}
		out.Keys = append(out.Keys, t.emit(&ChunkOp{
			Kind: "assemble", Inputs: []int{int(key)}, Shape: shape, DType: n.DType,
			Args: AssembleArgs{Pieces: []Piece{{In: 0, Src: sel, Dst: make([]int, nd)}}},
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
func tileConcat(t *tiler, n *Node) (*TiledTensor, error) {
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
	var parts []*TiledTensor
	for i := range n.Inputs {
		in := t.input(n, i)
		if in.Shape[axis] == 0 && (length > 0 || len(parts) > 0) {
			continue
		}
		chunks := append([][]int(nil), common...)
		chunks[axis] = in.Chunks[axis]
		parts = append(parts, t.convert(t.rechunk(in, chunks), n.DType))
	}
	out := &TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: append([][]int(nil), common...)}
	// Along the axis: which part, and which of its chunks.
	type ref struct{ part, chunk int }
	var along []ref
	for p, pt := range parts {
		for c, size := range pt.Chunks[axis] {
			out.Chunks[axis] = append(out.Chunks[axis], size)
			along = append(along, ref{p, c})
		}
	}
	grid := GridShape(out.Chunks)
	for k := 0; k < NumElements(grid); k++ {
		idx := unravel(k, grid)
		r := along[idx[axis]]
		pt := parts[r.part]
		idx[axis] = r.chunk
		out.Keys = append(out.Keys, pt.Keys[ravel(idx, GridShape(pt.Chunks))])
	}
	return out, nil
}

// convert returns src with every chunk converted to dt (src itself when it
// has that dtype already).
func (t *tiler) convert(src *TiledTensor, dt DType) *TiledTensor {
	if src.DType == dt {
		return src
	}
	out := &TiledTensor{Shape: src.Shape, DType: dt, Chunks: src.Chunks}
	grid := GridShape(src.Chunks)
	for k, key := range src.Keys {
		out.Keys = append(out.Keys, t.emit(&ChunkOp{Kind: "convert", Inputs: []int{int(key)}, Shape: chunkShape(src.Chunks, grid, k), DType: dt}))
	}
	return out
}

func convertKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("%d inputs, want 1", len(in))
	}
	if !slices.Equal(in[0].Shape, op.Shape) {
		return nil, fmt.Errorf("input shape %v for output %v", in[0].Shape, op.Shape)
	}
	return convertChunk(in[0], op.DType), nil
}

// convertChunk returns a converted to dt with NumPy's casting: nonzero is
// true, true is 1, floats truncate toward zero when cast to integers. It
// returns a itself when it has dtype dt already.
func convertChunk(a *Array, dt DType) *Array {
	if a.DType == dt {
		return a
	}
	out := NewArray(dt, a.Shape)
	switch a.DType {
	case Bool:
		convertFrom(out, view[uint8](a.Data))
	case Int32:
		convertFrom(out, a.Int32s())
	case Int64:
		convertFrom(out, a.Int64s())
	case Float32:
		convertFrom(out, a.Float32s())
	case Float64:
		convertFrom(out, a.Float64s())
	}
	return out
}

type convertible interface {
	uint8 | int32 | int64 | float32 | float64
}

func convertFrom[S convertible](dst *Array, src []S) {
	switch dst.DType {
	case Bool:
		for i, v := range src {
			if v != 0 {
				dst.Data[i] = 1
			}
		}
	case Int32:
		convertSlice(dst.Int32s(), src)
	case Int64:
		convertSlice(dst.Int64s(), src)
	case Float32:
		convertSlice(dst.Float32s(), src)
	case Float64:
		convertSlice(dst.Float64s(), src)
	}
}

func convertSlice[D, S convertible](dst []D, src []S) {
	for i, v := range src {
		dst[i] = D(v)
	}
}
