package tile

import (
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// Integer-array indexing, x[i] along x's first axis, tiles in two stages
// (stage.go). The first marks, for each block of i, the blocks of x its
// indices fall in ("take.touch"; the marks gathered into one vector, the
// probe, B blocks of i by C of x). The second shuffles: for each block of
// i and each block of x it touches, a map op ("take.piece") cuts from the
// block of x the rows the indices name, in their order; one reduce op a
// block of i ("take") places the rows of its pieces. A piece is a chunk
// like any other (kept, spilled, made again from lineage), and each op
// holds at most its block of x and its own rows: no op reads all of x,
// and the bytes moved are those of the rows taken. The ops number the
// touched pairs, B·C at worst (Mars' fancy indexing shuffles so too); an
// index block within one block of x reads that block directly.

func measureTake(t *tiler, n *spec.Node) ([]uint64, uint64, error) {
	x, idx := t.input(n, 0), t.input(n, 1)
	if len(x.Shape) == 0 || idx.DType != tensor.Int64 {
		return nil, 0, fmt.Errorf("take of %v%v by %v indices", x.DType, x.Shape, idx.DType)
	}
	offs := append(slices.Clone(tensor.ChunkOffsets(x.Chunks)[0]), x.Shape[0])
	var marks []int
	for _, k := range idx.Keys {
		marks = append(marks, int(t.emit(&chunk.Op{Kind: chunk.KindTakeTouch, Inputs: []int{int(k)}, Shape: []int{len(x.Chunks[0])}, DType: tensor.Int64,
			Args: chunk.TakeArgs{Offs: offs}})))
	}
	probe := t.emit(&chunk.Op{Kind: chunk.KindTakeTouches, Inputs: marks, Shape: []int{len(marks) * len(x.Chunks[0])}, DType: tensor.Int64})
	return nil, probe, nil
}

func finishTake(t *tiler, n *spec.Node, _ []uint64, marks []int) (*tensor.TiledTensor, error) {
	x, idx := t.input(n, 0), t.input(n, 1)
	nc := len(x.Chunks[0])
	if len(marks) != len(idx.Keys)*nc {
		return nil, fmt.Errorf("%d marks for %d index blocks of %d", len(marks), len(idx.Keys), nc)
	}
	offs := tensor.ChunkOffsets(x.Chunks)[0]
	trail := x.Chunks[1:]
	trailGrid := tensor.GridShape(trail)
	nt := tensor.NumElements(trailGrid)
	idxGrid := tensor.GridShape(idx.Chunks)
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: append(slices.Clone(idx.Chunks), trail...)}
	for b, ik := range idx.Keys {
		ishape := tensor.ChunkShape(idx.Chunks, idxGrid, b)
		for j := range nt {
			op := &chunk.Op{Kind: chunk.KindTake, Inputs: []int{int(ik)}, Shape: append(slices.Clone(ishape), tensor.ChunkShape(trail, trailGrid, j)...), DType: n.DType}
			args := chunk.TakeArgs{Len: x.Shape[0]}
			var touched []int
			for c := range nc {
				if marks[b*nc+c] != 0 {
					touched = append(touched, c)
				}
			}
			for _, c := range touched {
				in := int(x.Keys[c*nt+j])
				if len(touched) > 1 {
					// The piece holds the rows it gives, from row 0.
					xshape := tensor.ChunkShape(x.Chunks, tensor.GridShape(x.Chunks), c*nt+j)
					in = int(t.emit(&chunk.Op{Kind: chunk.KindTakePiece, Inputs: []int{int(ik), in}, Shape: append([]int{tensor.NumElements(ishape)}, xshape[1:]...),
						DType: n.DType, Args: chunk.TakePieceArgs{Off: offs[c], Len: x.Shape[0]}}))
					args.Piece = true
				}
				op.Inputs = append(op.Inputs, in)
				args.Offs = append(args.Offs, offs[c])
			}
			op.Args = args
			out.Keys = append(out.Keys, t.emit(op))
		}
	}
	return out, nil
}
