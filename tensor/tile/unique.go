package tile

import (
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// uniqueTree is the root of the tree of unique ops over one input, shared
// by its values and counts nodes, with the bound of its length and the
// probe of its length.
type uniqueTree struct {
	root, probe uint64
	bound       int
}

func (t *tiler) uniqueTree(n *spec.Node) *uniqueTree {
	v, _ := t.sharedFor("unique", n, func() (any, error) {
		x := t.input(n, 0)
		grid := tensor.GridShape(x.Chunks)
		parts := make([]uint64, len(x.Keys))
		bound := map[uint64]int{}
		for i, k := range x.Keys {
			c := tensor.ChunkShape(x.Chunks, grid, i)[0]
			parts[i] = t.emit(&chunk.Op{Kind: chunk.KindUniqueMap, Inputs: []int{int(k)}, Shape: []int{c, 2}, DType: tensor.Int64, Args: chunk.UniqueArgs{}})
			bound[parts[i]] = c
		}
		root := t.tree(parts, func(inputs []int) uint64 {
			c := 0
			for _, in := range inputs {
				c += bound[uint64(in)]
			}
			key := t.emit(&chunk.Op{Kind: chunk.KindUniqueMerge, Inputs: inputs, Shape: []int{c, 2}, DType: tensor.Int64, Args: chunk.UniqueArgs{}})
			bound[key] = c
			return key
		})
		probe := t.emit(&chunk.Op{Kind: chunk.KindUniqueLen, Inputs: []int{int(root)}, Shape: []int{}, DType: tensor.Int64})
		return &uniqueTree{root: root, probe: probe, bound: bound[root]}, nil
	})
	return v.(*uniqueTree)
}

func measureUnique(t *tiler, n *spec.Node) ([]uint64, uint64, error) {
	x := t.input(n, 0)
	if len(x.Shape) != 1 {
		return nil, 0, fmt.Errorf("input of shape %v is not 1-D", x.Shape)
	}
	u := t.uniqueTree(n)
	kind := chunk.KindUniqueValues
	if n.Op == tensor.OpUniqueCounts {
		kind = chunk.KindUniqueCounts
	}
	key := t.emit(&chunk.Op{Kind: kind, Inputs: []int{int(u.root)}, Shape: []int{u.bound}, DType: n.DType, Args: chunk.UniqueArgs{}})
	return []uint64{key}, u.probe, nil
}

// finishUnique reads the values or counts, now of a known length, and cuts
// them into the default chunks.
func finishUnique(t *tiler, n *spec.Node, ids []uint64, length int) (*tensor.TiledTensor, error) {
	if len(ids) != 1 {
		return nil, fmt.Errorf("%d carried chunks, want 1", len(ids))
	}
	key := t.emit(&chunk.Op{Kind: chunk.KindStored, Stored: ids[0], Shape: []int{length}, DType: n.DType})
	tt := &tensor.TiledTensor{Shape: []int{length}, DType: n.DType, Chunks: [][]int{{length}}, Keys: []uint64{key}}
	return t.rechunk(tt, spec.DefaultChunks(tt.Shape, n.DType)), nil
}

func measureBincount(t *tiler, n *spec.Node) ([]uint64, uint64, error) {
	x := t.input(n, 0)
	if len(x.Shape) != 1 || !(x.DType.IsInt() || x.DType == tensor.Bool) {
		return nil, 0, fmt.Errorf("bincount needs a 1-D array of non-negative integers, not %v%v", x.DType, x.Shape)
	}
	m := n.Attrs.Minlength
	var parts []uint64
	for _, k := range x.Keys {
		parts = append(parts, t.emit(&chunk.Op{Kind: chunk.KindBincountLen, Inputs: []int{int(k)}, Shape: []int{}, DType: tensor.Int64, Args: chunk.BincountLenArgs{Minlength: m}}))
	}
	probe := t.tree(parts, func(inputs []int) uint64 {
		return t.emit(&chunk.Op{Kind: chunk.KindBincountLen, Inputs: inputs, Shape: []int{}, DType: tensor.Int64, Args: chunk.BincountLenArgs{Minlength: m, Combine: true}})
	})
	return nil, probe, nil
}

func finishBincount(t *tiler, n *spec.Node, _ []uint64, length int) (*tensor.TiledTensor, error) {
	return tileBincount(t, n)
}
