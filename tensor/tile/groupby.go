package tile

import (
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// tileGroupBy tiles a group-by reduction as flox does with Dask: for
// every block of x's chunks across the other axes, each chunk along the
// axis is reduced by its labels to a partial ("groupby.map", reading the
// chunk and its piece of the labels, rechunked to x's chunks along the
// axis), the partials are combined in a tree (tiler.tree)
// ("groupby.combine"), and a final op makes the result's chunk, whose axis
// is one chunk of Groups ("groupby.final"). A partial holds a group's
// accumulators for every element around the axis, so it is about Groups/n
// the size of a chunk of n rows along the axis, and a climatology of
// twelve months over chunks of a month or more makes partials no larger
// than its input.
func tileGroupBy(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	x, lab := t.input(n, 0), t.input(n, 1)
	if len(n.Attrs.Axes) != 1 {
		return nil, fmt.Errorf("groupby takes one axis, got %v", n.Attrs.Axes)
	}
	axis, G := n.Attrs.Axes[0], n.Attrs.Groups
	nd := len(x.Shape)
	if axis < 0 || axis >= nd || len(lab.Shape) != 1 || lab.Shape[0] != x.Shape[axis] {
		return nil, fmt.Errorf("groupby of %v along axis %d with labels of %v", x.Shape, axis, lab.Shape)
	}
	if !SameChunks(lab.Chunks, [][]int{x.Chunks[axis]}) {
		lab = t.rechunk(lab, [][]int{x.Chunks[axis]})
	}
	acc := chunk.GroupByAcc(n.Attrs.Func, x.DType)
	args := chunk.GroupByArgs{Func: n.Attrs.Func, Axis: axis, Groups: G, Ddof: n.Attrs.Ddof, In: x.DType, Acc: acc}
	var boxed any = args
	outChunks := make([][]int, nd)
	keepGrid := make([]int, nd)
	for ax := range nd {
		outChunks[ax], keepGrid[ax] = x.Chunks[ax], len(x.Chunks[ax])
	}
	outChunks[axis], keepGrid[axis] = []int{G}, 1
	inGrid, outGrid := tensor.GridShape(x.Chunks), tensor.GridShape(outChunks)
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: outChunks}
	nkeep := tensor.NumElements(keepGrid)
	out.Keys = make([]uint64, 0, nkeep)
	idx := make([]int, nd)
	for k := range nkeep {
		tensor.UnravelInto(idx, k, keepGrid)
		oshape := tensor.ChunkShape(outChunks, outGrid, k)
		outer, inner := 1, 1
		for ax, d := range oshape {
			switch {
			case ax < axis:
				outer *= d
			case ax > axis:
				inner *= d
			}
		}
		pshape := []int{chunk.GroupByPartialLen(n.Attrs.Func, outer, G, inner)}
		parts := make([]uint64, 0, len(x.Chunks[axis]))
		for r := range len(x.Chunks[axis]) {
			idx[axis] = r
			ins := t.ints.Take(2)
			ins[0], ins[1] = int(x.Keys[tensor.Ravel(idx, inGrid)]), int(lab.Keys[r])
			parts = append(parts, t.emitOp(chunk.Op{Kind: chunk.KindGroupByMap, Inputs: ins, Shape: pshape, DType: acc, Args: boxed}))
		}
		idx[axis] = 0
		root := t.tree(parts, func(inputs []int) uint64 {
			return t.emitOp(chunk.Op{Kind: chunk.KindGroupByCombine, Inputs: inputs, Shape: pshape, DType: acc, Args: boxed})
		})
		out.Keys = append(out.Keys, t.emitOp(chunk.Op{Kind: chunk.KindGroupByFinal, Inputs: []int{int(root)},
			Shape: oshape, DType: n.DType, Args: boxed}))
	}
	return out, nil
}
