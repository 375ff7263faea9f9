package fuse

import (
	"slices"

	"marsfs/tensor/chunk"
)

// A block product reads each of its blocks once and does 2n flops with each
// element (n the other extent of the product), some n/20 ns at this
// machine's DGEMM rate; drawing a random element costs about a nanosecond
// into memory already mapped. Storing a random block, on the other hand,
// writes it to fresh pages (slower than drawing it on a VM), holds it until
// its last reader runs, and may send it to another worker. So a random
// block that only matmul ops read is drawn again by each of them, as
// expression fusion redraws the random chunks of elementwise groups, and
// never stored: the matmul ops that read only random blocks then depend on
// nothing and all start at once.

// maxMatmulDraws bounds the matmul ops that draw one random block: past
// it, reading a stored block costs less even against the products. A block
// of A is read by one op a chunk column of B and a group of matmulCombine
// chunks along k.
const maxMatmulDraws = 16

// DrawMatmulBlocks returns cg with the random blocks (rand and uniform
// chunks) that only matmul ops read, at most maxMatmulDraws of them and
// none an output of the graph, drawn by each of those ops rather than
// stored: the blocks' ops leave the graph, and keys are renumbered. cg is
// returned as it is when no block qualifies; it is never modified.
func DrawMatmulBlocks(cg *chunk.Graph) *chunk.Graph {
	if !slices.ContainsFunc(cg.Ops, func(op *chunk.Op) bool { return op.Kind == chunk.KindMatmul }) {
		return cg // most graphs: no product, nothing to count
	}
	n := len(cg.Ops)
	uses := make([]int32, n)
	others := make([]bool, n) // read by an op that is no plain matmul
	for _, op := range cg.Ops {
		plain := op.Kind == chunk.KindMatmul && op.Args == nil && op.Stored == 0
		for _, in := range op.Inputs {
			uses[in]++
			others[in] = others[in] || !plain
		}
	}
	for _, o := range cg.Outputs {
		for _, k := range o.Keys {
			others[k] = true
		}
	}
	drawn := make([]bool, n)
	found := false
	for k, op := range cg.Ops {
		if uses[k] > 0 && uses[k] <= maxMatmulDraws && !others[k] && chunk.IsGenOp(op) && chunk.RedrawnGens[op.Kind] {
			drawn[k], found = true, true
		}
	}
	if !found {
		return cg
	}
	out := &chunk.Graph{Ops: make([]*chunk.Op, 0, n)}
	newKey := make([]int32, n)
	for k, op := range cg.Ops {
		if drawn[k] {
			newKey[k] = -1
			continue
		}
		c := *op
		c.Key = len(out.Ops)
		newKey[k] = int32(c.Key)
		c.Inputs = make([]int, 0, len(op.Inputs))
		var blocks []chunk.Op
		for i, in := range op.Inputs {
			if drawn[in] {
				if blocks == nil {
					blocks = make([]chunk.Op, len(op.Inputs))
				}
				g := *cg.Ops[in]
				g.Key, g.Inputs = 0, nil
				blocks[i] = g
				continue
			}
			c.Inputs = append(c.Inputs, int(newKey[in]))
		}
		if blocks != nil {
			c.Args = chunk.MatmulArgs{Blocks: blocks}
		}
		out.Ops = append(out.Ops, &c)
	}
	out.Outputs = remapOutputs(cg.Outputs, newKey)
	return out
}
