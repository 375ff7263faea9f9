package tile

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// Matmul of A (m x k) by B (k x n) tiles by blocks: with A cut into chunks
// (i, l) and B into chunks (l, j) along a common chunking of k, output chunk
// (i, j) is the sum over l of the block products A(i, l) B(l, j). One
// "matmul" op computes a group of up to matmulCombine consecutive terms of
// that sum, accumulating each block product into its output in place (a
// DGEMM with beta 1), so that no partial product of the group is stored,
// sent or added on its own. When k has more chunks than one group takes,
// the groups' sums are added in a tree of "matmul.sum" ops.
//
// Two rules bound the memory a product takes on a worker. Output blocks
// are no larger than the largest input chunk (or the default chunk size):
// x.T @ x, with x in bands of rows, would otherwise be one output block of
// cols x cols, and every group's partial sum as large; such rows and
// columns are cut finer. And a group's inputs hold about as much as four
// pairs of square blocks: thin blocks along k (a band of 417 rows against
// output blocks of 1250) are taken more to a group, so fewer partial sums
// of the output's size are made.
//
// x.T @ x and x @ x.T are symmetric: only the blocks on and above the
// diagonal are products, those below are transposes of them (see
// symmetricProduct), and the kernel makes the diagonal blocks with half
// the flops. NumPy, through BLAS' syrk, does the same.

// MatmulCombine is how many block products one "matmul" op accumulates and
// how many partial sums one "matmul.sum" op adds. Four keeps the inputs an
// op holds at once few (eight blocks) and the tree short (log4 of the
// number of chunks along k); a common chunking of a square product, four
// chunks along each axis, needs no sum op at all.
const MatmulCombine = 4

// matmulBlockElems is the least bound on an output block's elements: the
// default chunk size of a creator (4 Mi elements).
const matmulBlockElems = 4 << 20

func tileMatmul(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	if len(n.Inputs) != 2 {
		return nil, fmt.Errorf("need 2 inputs, have %d", len(n.Inputs))
	}
	a, b := t.input(n, 0), t.input(n, 1)
	if len(a.Shape) != 2 || len(b.Shape) != 2 {
		return nil, fmt.Errorf("operands of shapes %v and %v are not both 2-D", a.Shape, b.Shape)
	}
	if a.Shape[1] != b.Shape[0] {
		return nil, fmt.Errorf("shapes %v and %v do not align: %d != %d", a.Shape, b.Shape, a.Shape[1], b.Shape[0])
	}
	if !slices.Equal(n.Shape, []int{a.Shape[0], b.Shape[1]}) {
		return nil, fmt.Errorf("node shape %v for operands %v and %v", n.Shape, a.Shape, b.Shape)
	}
	if !n.DType.Valid() {
		return nil, fmt.Errorf("invalid dtype %v", n.DType)
	}
	kc := refineChunks(a.Chunks[1], b.Chunks[0])
	va, vb := t.matmulOperand(n, 0), t.matmulOperand(n, 1)
	limit := max(matmulBlockElems, largestChunk(a), largestChunk(b))
	rows, cols := outputBlocks(a.Chunks[0], b.Chunks[1], limit)
	if gramPair(va, vb) && slices.Equal(a.Chunks[0], b.Chunks[1]) && !slices.Equal(rows, cols) {
		// x.T @ x cut alike along both axes, square blocks, so that it is
		// tiled as symmetric: x in bands of rows (417 x 10000) would
		// otherwise have its output cut 8 x 3 and every block made.
		side := max(1, int(math.Sqrt(float64(limit))))
		rows = splitChunks(a.Chunks[0], side)
		cols = rows
	}
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{rows, cols}}
	groups := matmulGroups(len(kc), matmulGroupSize(longest(rows), longest(cols), longest(kc)))
	if !va.trans && !vb.trans && slices.Equal(rows, a.Chunks[0]) && slices.Equal(kc, a.Chunks[1]) &&
		slices.Equal(kc, b.Chunks[0]) && slices.Equal(cols, b.Chunks[1]) {
		// Every block is a whole chunk: plain products, which fusion
		// may draw random blocks into.
		va, vb = nil, nil
	}
	rowOffs, colOffs, kOffs := offsets(rows), offsets(cols), offsets(kc)
	sym := symmetricProduct(va, vb, rows, cols)
	for i, m := range rows {
		for j, c := range cols {
			shape := []int{m, c}
			if sym && i > j {
				// Below the diagonal: the transpose of the block above,
				// emitted (with its key) before this one.
				above := out.Keys[j*len(cols)+i]
				out.Keys = append(out.Keys, t.emit(&chunk.Op{Kind: chunk.KindTranspose, Inputs: []int{int(above)},
					Shape: shape, DType: n.DType, Args: chunk.TransposeArgs{Perm: []int{1, 0}}}))
				continue
			}
			var parts []uint64
			for g := range groups[:len(groups)-1] {
				var inputs []int
				var views []chunk.BlockView
				for l := groups[g]; l < groups[g+1]; l++ {
					if va == nil {
						inputs = append(inputs, int(a.Keys[i*len(kc)+l]), int(b.Keys[l*len(cols)+j]))
						continue
					}
					ka, viewA := va.block(rowOffs[i], rows[i], kOffs[l], kc[l])
					kb, viewB := vb.block(kOffs[l], kc[l], colOffs[j], cols[j])
					inputs = append(inputs, int(ka), int(kb))
					views = append(views, viewA, viewB)
				}
				op := &chunk.Op{Kind: chunk.KindMatmul, Inputs: inputs, Shape: shape, DType: n.DType}
				if views != nil {
					op.Args = chunk.MatmulArgs{Views: views}
				}
				parts = append(parts, t.emit(op))
			}
			out.Keys = append(out.Keys, t.sumTree(parts, shape, n.DType))
		}
	}
	return out, nil
}

// symmetricProduct says whether the product of a and b is x.T @ x or
// x @ x.T of one tensor x, with the rows and columns of its output cut
// alike: a symmetric matrix, whose blocks below the diagonal are tiled as
// transposes of those above, so that only about half the flops are made
// (the kernel computes the diagonal blocks' pairs, xᵢᵀ xᵢ, as symmetric
// rank-k updates: half of theirs too).
func symmetricProduct(a, b *matmulOperand, rows, cols []int) bool {
	return gramPair(a, b) && slices.Equal(rows, cols)
}

// gramPair says whether a and b are one tensor and its transpose: their
// product is x.T @ x or x @ x.T.
func gramPair(a, b *matmulOperand) bool {
	return a != nil && b != nil && a.src == b.src && a.trans != b.trans
}

// A matmulOperand is an operand of a product as the chunks its blocks are
// views of: the operand's own, or, for the transpose of a 2-D tensor, that
// tensor's, read transposed. x.T @ x thus reads x's chunks, and no
// transposed copy of them is made (the transpose's ops, if nothing else
// reads them, leave the graph).
type matmulOperand struct {
	src   *tensor.TiledTensor
	trans bool
	offs  [][]int // the source's chunk offsets along each axis
}

func (t *tiler) matmulOperand(n *spec.Node, i int) *matmulOperand {
	in := n.Inputs[i]
	o := &matmulOperand{src: t.tiled[in.ID]}
	if in.Op == tensor.OpTranspose && len(in.Inputs) == 1 && slices.Equal(in.Attrs.Perm, []int{1, 0}) {
		if src := t.tiled[in.Inputs[0].ID]; src != nil && len(src.Keys) > 0 {
			o.src, o.trans = src, true
		}
	}
	o.offs = [][]int{offsets(o.src.Chunks[0]), offsets(o.src.Chunks[1])}
	return o
}

// block returns the chunk holding the operand's rows [r, r+nr) and columns
// [c, c+nc), which lie in one chunk, and the view of it they are.
func (o *matmulOperand) block(r, nr, c, nc int) (uint64, chunk.BlockView) {
	if o.trans {
		r, nr, c, nc = c, nc, r, nr
	}
	ci, cj := chunkAt(o.offs[0], r), chunkAt(o.offs[1], c)
	r0, c0 := r-o.offs[0][ci], c-o.offs[1][cj]
	key := o.src.Keys[ci*len(o.src.Chunks[1])+cj]
	return key, chunk.BlockView{Trans: o.trans, R0: r0, R1: r0 + nr, C0: c0, C1: c0 + nc}
}

// offsets returns where each chunk of cs starts.
func offsets(cs []int) []int {
	offs := make([]int, len(cs))
	s := 0
	for i, c := range cs {
		offs[i] = s
		s += c
	}
	return offs
}

// chunkAt is the chunk, of those starting at offs, that holds index x: the
// last one starting at or before it (empty chunks are skipped over).
func chunkAt(offs []int, x int) int {
	return max(0, sort.SearchInts(offs, x+1)-1)
}

// outputBlocks refines the row chunks and column chunks of a product so
// that a block holds at most limit elements: the longer side of the
// largest block is halved until it fits, then widened back as far as
// the limit allows, and every chunk longer than that
// side is cut evenly. Chunks already within it are kept, so the inputs'
// chunks are only split, never merged.
func outputBlocks(rows, cols []int, limit int) ([]int, []int) {
	r, c := max(1, longest(rows)), max(1, longest(cols))
	if r*c <= limit {
		return rows, cols
	}
	r0, c0 := r, c
	for r*c > limit && (r > 1 || c > 1) {
		if r >= c {
			r = (r + 1) / 2
		} else {
			c = (c + 1) / 2
		}
	}
	// Halving overshoots: widen each side back to what the limit allows.
	c = min(c0, max(c, limit/r))
	r = min(r0, max(r, limit/c))
	return splitChunks(rows, r), splitChunks(cols, c)
}

// splitChunks cuts each chunk longer than limit into the fewest even
// pieces no longer than limit.
func splitChunks(cs []int, limit int) []int {
	var out []int
	for _, c := range cs {
		if c <= limit {
			out = append(out, c)
			continue
		}
		n := (c + limit - 1) / limit
		for i := range n {
			out = append(out, (i+1)*c/n-i*c/n)
		}
	}
	return out
}

// largestChunk is the most elements of a chunk of t.
func largestChunk(t *tensor.TiledTensor) int {
	n := 1
	for _, cs := range t.Chunks {
		n *= max(1, longest(cs))
	}
	return n
}

// longest is the longest chunk of cs, 0 for none.
func longest(cs []int) int {
	n := 0
	for _, c := range cs {
		n = max(n, c)
	}
	return n
}

// matmulGroupSize is how many block products one "matmul" op takes for
// output blocks of m x n and chunks of k along the contracted axis:
// MatmulCombine for square blocks, more in proportion as k is thinner, so
// that an op's inputs stay about 4 (m + n) min(m, n) elements.
func matmulGroupSize(m, n, k int) int {
	return max(MatmulCombine, MatmulCombine*min(m, n)/max(k, 1))
}

// matmulGroups cuts k block products into groups of at most size, as even
// as can be, and returns their bounds: group g is [b[g], b[g+1]). No chunk
// along k (an empty sum) is one empty group.
func matmulGroups(k, size int) []int {
	n := max(1, (k+size-1)/size)
	bounds := make([]int, n+1)
	for g := range bounds {
		bounds[g] = g * k / n
	}
	return bounds
}

// sumTree adds the chunks parts (of one shape and dtype) in a tree of
// "matmul.sum" ops of fan-in matmulCombine and returns the key of the sum.
func (t *tiler) sumTree(parts []uint64, shape []int, dt tensor.DType) uint64 {
	for len(parts) > 1 {
		var next []uint64
		for s := 0; s < len(parts); s += MatmulCombine {
			group := parts[s:min(s+MatmulCombine, len(parts))]
			if len(group) == 1 {
				next = append(next, group[0])
				continue
			}
			inputs := make([]int, len(group))
			for i, k := range group {
				inputs[i] = int(k)
			}
			next = append(next, t.emit(&chunk.Op{Kind: chunk.KindMatmulSum, Inputs: inputs, Shape: shape, DType: dt}))
		}
		parts = next
	}
	return parts[0]
}
