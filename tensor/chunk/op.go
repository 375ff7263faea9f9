package chunk

import "marsfs/tensor"

// A Graph is a spec.Graph cut into chunk operands by the tiler. Every operand
// produces exactly one chunk; an operand's key is its index in Ops.
type Graph struct {
	// Ops in topological order: every op's inputs have smaller keys.
	Ops []*Op
	// Outputs are the graph's fetched tensors, as grids of chunk keys.
	Outputs []tensor.TiledTensor
	// Notes are the optimizer's choices, a line each, for the plan file.
	Notes []string
}

// An Op is one operand: a kernel applied to the chunks of its inputs.
type Op struct {
	Key    int   // index in Graph.Ops
	Kind   Kind  // the kernel, e.g. "rand", "add", "sum.map", "assemble"
	Inputs []int // keys of the ops whose chunks the kernel reads, in order
	Shape  []int // the output chunk's shape
	// Args are the kernel's parameters: a value of one of the argument types
	// this package registers with encoding/gob (gob.go), so an op can be sent to
	// a worker process as it is.
	Args any
	// Stored, when non-zero, marks an op that computes nothing: its chunk
	// already exists in the cluster under this global chunk ID (a tensor kept
	// by an earlier graph of the session). Stored ops have no inputs.
	Stored uint64
	// Node is the ID of the graph node this op was tiled from: an int32,
	// next to DType, so that the two share one word (a graph of 10^7 ops
	// holds 10^7 of these structs).
	Node  int32
	DType tensor.DType // the output chunk's dtype
	// Ranges, when not nil, has one entry an input: a Range with a nil
	// Shape reads the whole chunk; any other reads only that contiguous
	// run of it (a shuffle's piece of a block, see range.go). Few ops
	// have them: the slice is kept out of line, a pointer in the op
	// rather than a slice header (RangeList reads it, RangesOf makes it).
	Ranges *[]Range
}

// NBytes is the size of the op's output chunk.
func (op *Op) NBytes() int { return tensor.NumElements(op.Shape) * op.DType.Size() }

// ScratchBytes is the memory op's kernel holds besides its inputs and its
// output: for a matmul op that draws blocks (alone or in a fused chain),
// the largest pair it draws, which it holds while multiplying them. A
// pair of rand blocks multiplied by gemm.DgemmFilled is not held (its
// values are made as they are packed) but still counted: the reservation
// stays on the safe side, and exec/core's units take the drawn bytes for
// the time a product takes (opCost).
func (op *Op) ScratchBytes() int64 {
	switch a := op.Args.(type) {
	case FuseArgs:
		var most int64
		for i := range a.Members {
			most = max(most, a.Members[i].ScratchBytes())
		}
		return most
	case MatmulArgs:
		var most int64
		for p := 0; p+1 < len(a.Blocks); p += 2 {
			var pair int64
			for _, b := range a.Blocks[p : p+2] {
				if b.Kind != "" {
					pair += int64(b.NBytes())
				}
			}
			most = max(most, pair)
		}
		return most
	}
	return 0
}
