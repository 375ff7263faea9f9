package tile

import (
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// elemArgs are the arguments of the chunks of elementwise node n.
func elemArgs(n *spec.Node) chunk.ElemArgs {
	return chunk.ElemArgs{Compute: computeDType(n), Decimals: n.Attrs.Decimals}
}

// computeDType is the dtype n's kernel casts its inputs to.
func computeDType(n *spec.Node) tensor.DType {
	switch {
	case tensor.IsComparison(n.Op):
		return comparisonDType(n.Inputs[0], n.Inputs[1])
	case n.Op == tensor.OpLogicalAnd || n.Op == tensor.OpLogicalOr:
		return tensor.Bool
	case n.Op == tensor.OpLogicalNot || n.Op == tensor.OpAstype || tensor.IsClassify(n.Op):
		return n.Inputs[0].DType
	}
	return n.DType
}

// comparisonDType is the dtype NumPy 1.24 compares a and b in: their
// result type, with Python scalars yielding by value (f32 < 70000 compares in
// float64, where the value does not fit float32 exactly).
func comparisonDType(a, b *spec.Node) tensor.DType {
	if dt, err := spec.ResultType(a, b); err == nil {
		return dt
	}
	return tensor.Promote(a.DType, b.DType)
}

func tileElementwise(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	nd := len(n.Shape)
	ins := make([]*tensor.TiledTensor, len(n.Inputs))
	for i := range n.Inputs {
		ins[i] = t.input(n, i)
		if len(ins[i].Shape) > nd {
			return nil, fmt.Errorf("input %d has more axes (%v) than the result %v", i, ins[i].Shape, n.Shape)
		}
	}
	chunks := make([][]int, nd)
	for ax := 0; ax < nd; ax++ {
		size := n.Shape[ax]
		if size == 0 {
			chunks[ax] = []int{0}
			continue
		}
		var same []int // the chunks every input has along ax, if they agree
		agree := true
		for _, in := range ins {
			if iax := ax - (nd - len(in.Shape)); iax >= 0 && in.Shape[iax] == size {
				if same == nil {
					same = in.Chunks[iax]
				} else if !slices.Equal(same, in.Chunks[iax]) {
					agree = false
				}
			}
		}
		if agree && same != nil && !slices.Contains(same, 0) {
			chunks[ax] = same // what cutting them again would make
			continue
		}
		var cuts []int
		for _, in := range ins {
			if iax := ax - (nd - len(in.Shape)); iax >= 0 && in.Shape[iax] == size {
				s := 0
				for _, c := range in.Chunks[iax] {
					cuts = append(cuts, s)
					s += c
				}
			}
		}
		chunks[ax] = cutsToChunks(cuts, size)
	}
	// Align each input to the output's chunking.
	aligned := make([]*tensor.TiledTensor, len(ins))
	for i, in := range ins {
		off := nd - len(in.Shape)
		want := make([][]int, len(in.Shape))
		for iax, s := range in.Shape {
			if s != n.Shape[iax+off] {
				if s != 1 {
					return nil, fmt.Errorf("input %d of shape %v does not broadcast to %v", i, in.Shape, n.Shape)
				}
				want[iax] = []int{1}
			} else {
				want[iax] = chunks[iax+off]
			}
		}
		aligned[i] = t.rechunk(in, want)
	}
	// The args are boxed once: every chunk's op shares them.
	var args any = elemArgs(n)
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: chunks}
	grid := tensor.GridShape(chunks)
	nk := tensor.NumElements(grid)
	out.Keys = make([]uint64, 0, nk)
	inGrids := make([][]int, len(aligned))
	for i, in := range aligned {
		inGrids[i] = tensor.GridShape(in.Chunks)
	}
	idx, sub, shape := make([]int, nd), make([]int, nd), make([]int, nd)
	for k := 0; k < nk; k++ {
		tensor.UnravelInto(idx, k, grid)
		for ax, i := range idx {
			shape[ax] = chunks[ax][i]
		}
		keys := t.ints.Take(len(aligned))
		for i, in := range aligned {
			off := nd - len(in.Shape)
			sub := sub[:len(in.Shape)]
			for iax := range sub {
				sub[iax] = 0
				if in.Shape[iax] == n.Shape[iax+off] {
					sub[iax] = idx[iax+off]
				}
			}
			keys[i] = int(in.Keys[tensor.Ravel(sub, inGrids[i])])
		}
		out.Keys = append(out.Keys, t.emitOp(chunk.Op{Kind: chunk.Kind(n.Op), Inputs: keys, Shape: t.shapes.Shape(shape), DType: n.DType, Args: args}))
	}
	return out, nil
}

// cutsToChunks turns chunk start offsets, in any order and with repeats,
// into chunk sizes covering size.
func cutsToChunks(cuts []int, size int) []int {
	offs := []int{0}
	for _, o := range cuts {
		if o < size {
			offs = append(offs, o)
		}
	}
	slices.Sort(offs)
	offs = slices.Compact(offs)
	sizes := make([]int, len(offs))
	for i, o := range offs {
		end := size
		if i+1 < len(offs) {
			end = offs[i+1]
		}
		sizes[i] = end - o
	}
	return sizes
}
