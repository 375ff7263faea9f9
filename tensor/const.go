package tensor

import (
	"context"
	"fmt"
)

// ConstArgs are the arguments of the "const" kernel: the bytes of one chunk of
// an uploaded tensor (C order, little-endian, as Array.Data). The chunk
// travels inside its operand, so an upload needs no other storage until the
// operand has run and its chunk is kept like any other.
type ConstArgs struct {
	Data []byte
}

func constKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(ConstArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	a := &Array{DType: op.DType, Shape: append([]int(nil), op.Shape...), Data: args.Data}
	if err := a.Check(); err != nil {
		return nil, err
	}
	// The chunk aliases the operand's bytes: no kernel modifies its inputs,
	// so a retry or a recomputation after a failure gets the same chunk.
	return a, nil
}

// validateChunks reports whether chunks cut shape: one list an axis, positive
// sizes (a single 0 for an empty axis) summing to the axis length.
func validateChunks(shape []int, chunks [][]int) error {
	if len(chunks) != len(shape) {
		return fmt.Errorf("chunks %v have %d axes, shape %v has %d", chunks, len(chunks), shape, len(shape))
	}
	for ax, cs := range chunks {
		if len(cs) == 0 {
			return fmt.Errorf("chunks %v: no chunks along axis %d", chunks, ax)
		}
		sum := 0
		for _, c := range cs {
			if c < 0 || c == 0 && shape[ax] != 0 {
				return fmt.Errorf("chunks %v: chunk of size %d along axis %d", chunks, c, ax)
			}
			sum += c
		}
		if sum != shape[ax] {
			return fmt.Errorf("chunks %v cover %d elements of axis %d, shape %v has %d", chunks, sum, ax, shape, shape[ax])
		}
		if shape[ax] == 0 && len(cs) != 1 {
			return fmt.Errorf("chunks %v: empty axis %d must have one chunk", chunks, ax)
		}
	}
	return nil
}

// ConstGraph returns a chunk graph that brings a into the cluster as a tensor
// called name: one "const" operand a chunk, cut by chunks (one list of chunk
// sizes an axis; nil for DefaultChunks), and one output. Each operand holds a
// copy of its chunk's bytes, so a may be reused once ConstGraph returns.
func ConstGraph(name string, a *Array, chunks [][]int) (*ChunkGraph, error) {
	if err := a.Check(); err != nil {
		return nil, fmt.Errorf("const %s: %w", name, err)
	}
	if chunks == nil {
		chunks = DefaultChunks(a.Shape, a.DType)
	}
	if err := validateChunks(a.Shape, chunks); err != nil {
		return nil, fmt.Errorf("const %s: %w", name, err)
	}
	cg := &ChunkGraph{}
	out := TiledTensor{Name: name, Shape: append([]int(nil), a.Shape...), DType: a.DType, Chunks: chunks}
	grid := GridShape(chunks)
	offs := ChunkOffsets(chunks)
	n := NumElements(grid)
	for k := 0; k < n; k++ {
		idx := unravel(k, grid)
		shape := chunkShape(chunks, grid, k)
		sel := make([]Slice, len(shape))
		for ax := range sel {
			sel[ax] = Slice{Start: offs[ax][idx[ax]], Step: 1, Len: shape[ax]}
		}
		c := NewArray(a.DType, shape)
		copyStrided(c, make([]int, len(shape)), a, sel)
		op := &ChunkOp{Key: len(cg.Ops), Kind: "const", Shape: shape, DType: a.DType, Args: ConstArgs{Data: c.Data}}
		cg.Ops = append(cg.Ops, op)
		out.Keys = append(out.Keys, uint64(op.Key))
	}
	cg.Outputs = []TiledTensor{out}
	return cg, nil
}
