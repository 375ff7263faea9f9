package tile

import (
	"fmt"
	"slices"

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

// MatmulCombine is how many block products one "matmul" op accumulates and
// how many partial sums one "matmul.sum" op adds. Four keeps the inputs an
// op holds at once few (eight blocks) and the tree short (log4 of the
// number of chunks along k); a common chunking of a square product, four
// chunks along each axis, needs no sum op at all.
const MatmulCombine = 4

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
	a = t.rechunk(a, [][]int{a.Chunks[0], kc})
	b = t.rechunk(b, [][]int{kc, b.Chunks[1]})
	rows, cols := a.Chunks[0], b.Chunks[1]
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{rows, cols}}
	groups := matmulGroups(len(kc))
	for i, m := range rows {
		for j, c := range cols {
			shape := []int{m, c}
			var parts []uint64
			for g := range groups[:len(groups)-1] {
				var inputs []int
				for l := groups[g]; l < groups[g+1]; l++ {
					inputs = append(inputs, int(a.Keys[i*len(kc)+l]), int(b.Keys[l*len(cols)+j]))
				}
				parts = append(parts, t.emit(&chunk.Op{Kind: "matmul", Inputs: inputs, Shape: shape, DType: n.DType}))
			}
			out.Keys = append(out.Keys, t.sumTree(parts, shape, n.DType))
		}
	}
	return out, nil
}

// matmulGroups cuts k block products into groups of at most matmulCombine,
// as even as can be, and returns their bounds: group g is [b[g], b[g+1]).
// No chunk along k (an empty sum) is one empty group.
func matmulGroups(k int) []int {
	n := max(1, (k+MatmulCombine-1)/MatmulCombine)
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
			next = append(next, t.emit(&chunk.Op{Kind: "matmul.sum", Inputs: inputs, Shape: shape, DType: dt}))
		}
		parts = next
	}
	return parts[0]
}
