package tile

import (
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

func tileScan(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	in := t.input(n, 0)
	nd := len(in.Shape)
	if len(n.Attrs.Axes) != 1 || n.Attrs.Axes[0] < 0 || n.Attrs.Axes[0] >= nd {
		return nil, fmt.Errorf("bad axis %v for shape %v", n.Attrs.Axes, in.Shape)
	}
	ax := n.Attrs.Axes[0]
	args := chunk.ScanArgs{Op: n.Op, Axis: ax}
	grid := tensor.GridShape(in.Chunks)
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: in.Chunks, Keys: make([]uint64, len(in.Keys))}
	if n.DType == tensor.Float16 && in.DType == tensor.Float16 {
		return tileScanSeeded(t, n, in, args, grid, out), nil
	}
	local := make([]uint64, len(in.Keys))
	for k, key := range in.Keys {
		local[k] = t.emit(&chunk.Op{Kind: chunk.StepKind(n.Op, chunk.StepLocal), Inputs: []int{int(key)}, Shape: tensor.ChunkShape(in.Chunks, grid, k), DType: n.DType, Args: args})
	}
	// Walk each line of chunks along the axis: the chunks whose grid index
	// along ax is 0 start the lines.
	for k := range in.Keys {
		idx := tensor.Unravel(k, grid)
		if idx[ax] != 0 {
			continue
		}
		var carry []int
		for c := 0; c < grid[ax]; c++ {
			idx[ax] = c
			ck := tensor.Ravel(idx, grid)
			shape := tensor.ChunkShape(in.Chunks, grid, ck)
			if c == 0 {
				out.Keys[ck] = local[ck]
			} else {
				out.Keys[ck] = t.emit(&chunk.Op{Kind: chunk.StepKind(n.Op, chunk.StepOffset), Inputs: []int{int(local[ck]), carry[0]}, Shape: shape, DType: n.DType, Args: args})
			}
			if c+1 < grid[ax] {
				cshape := append([]int(nil), shape...)
				cshape[ax] = 1
				inputs := append(carry, int(local[ck]))
				carry = []int{int(t.emit(&chunk.Op{Kind: chunk.StepKind(n.Op, chunk.StepCarry), Inputs: inputs, Shape: cshape, DType: n.DType, Args: args}))}
			}
		}
	}
	return out, nil
}

// tileScanSeeded tiles a float16 scan, whose running result NumPy rounds to
// float16 after every addition: a local scan plus the carry of the chunks
// before would round differently (3,000 additions of 0.1 stall at 256 in
// NumPy, and would not here), so along each line of chunks each chunk is
// scanned from the last row of the chunk before it, one after the other.
func tileScanSeeded(t *tiler, n *spec.Node, in *tensor.TiledTensor, args chunk.ScanArgs, grid []int, out *tensor.TiledTensor) *tensor.TiledTensor {
	ax := args.Axis
	seeded := args
	seeded.Seeded = true
	for k := range in.Keys {
		idx := tensor.Unravel(k, grid)
		if idx[ax] != 0 {
			continue
		}
		carry := -1
		for c := 0; c < grid[ax]; c++ {
			idx[ax] = c
			ck := tensor.Ravel(idx, grid)
			shape := tensor.ChunkShape(in.Chunks, grid, ck)
			if c == 0 {
				out.Keys[ck] = t.emit(&chunk.Op{Kind: chunk.StepKind(n.Op, chunk.StepLocal), Inputs: []int{int(in.Keys[ck])}, Shape: shape, DType: n.DType, Args: args})
			} else {
				out.Keys[ck] = t.emit(&chunk.Op{Kind: chunk.StepKind(n.Op, chunk.StepOffset), Inputs: []int{int(in.Keys[ck]), carry}, Shape: shape, DType: n.DType, Args: seeded})
			}
			if c+1 < grid[ax] && (shape[ax] > 0 || carry < 0) {
				cshape := append([]int(nil), shape...)
				cshape[ax] = 1
				// The carry is the last row of the chunk's result (an
				// empty chunk passes the one before it on).
				carry = int(t.emit(&chunk.Op{Kind: chunk.StepKind(n.Op, chunk.StepCarry), Inputs: []int{int(out.Keys[ck])}, Shape: cshape, DType: n.DType, Args: args}))
			}
		}
	}
	return out
}
