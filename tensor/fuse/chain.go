package fuse

import (
	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// Chains merges the chains of cg into single ops, as Mars does: an op whose
// only input is made by an op that nothing else reads joins that op's chain.
// The head of a chain may have many inputs (ADD of two RANDs), which stay
// apart; so do the chunks of the graph's outputs and stored chunks. Fuse
// returns a new graph with keys renumbered; cg is not modified. The ops
// that keep their key and inputs are shared by both graphs.
func Chains(cg *chunk.Graph) *chunk.Graph {
	n := len(cg.Ops)
	consumers := make([]int32, n) // keys fit in int32, as in FuseExpr
	for _, op := range cg.Ops {
		for _, in := range op.Inputs {
			consumers[in]++
		}
	}
	isOutput := make([]bool, n)
	for _, o := range cg.Outputs {
		for _, k := range o.Keys {
			isOutput[k] = true
		}
	}
	// next[k] is the op that continues k's chain, or -1.
	next := make([]int32, n)
	joins := make([]bool, n) // op continues the chain of its input
	for k := range next {
		next[k] = -1
	}
	for _, op := range cg.Ops {
		if len(op.Inputs) != 1 || op.Stored != 0 || op.Ranges != nil {
			// An op reading part of its input reads it as it is stored.
			continue
		}
		in := op.Inputs[0]
		if consumers[in] == 1 && !isOutput[in] && cg.Ops[in].Stored == 0 {
			next[in] = int32(op.Key)
			joins[op.Key] = true
		}
	}
	out := &chunk.Graph{Ops: make([]*chunk.Op, 0, n)}
	newKey := make([]int32, n)
	var slab chunk.OpSlab
	var ints chunk.IntSlab
	for _, op := range cg.Ops {
		if joins[op.Key] {
			continue // made as part of its chain's head
		}
		tail := op.Key
		for next[tail] >= 0 {
			tail = int(next[tail])
		}
		same := len(out.Ops) == op.Key // keys unchanged so far: so are its inputs'
		var fused *chunk.Op
		var inputs []int
		if !same || tail != op.Key {
			inputs = ints.Take(len(op.Inputs))
			for i, in := range op.Inputs {
				inputs[i] = int(newKey[in])
			}
		}
		if tail == op.Key && same {
			// Nothing changes: the op is shared with cg, which is no less
			// unmodified for it.
			fused = op
		} else if tail == op.Key {
			c := slab.Take()
			*c = *op
			c.Inputs = inputs
			fused = c
		} else {
			var members []chunk.Op
			for k := op.Key; k >= 0; k = int(next[k]) {
				if fa, ok := op.Args.(chunk.FuseArgs); k == op.Key && ok && op.Kind == chunk.KindFuse && op.Ranges == nil {
					// A fuse op Reread or Copies made heads the chain:
					// its members come first, reading its inputs as
					// they did, so that the chain is one flat list.
					members = append(members, fa.Members...)
					continue
				}
				m := *cg.Ops[k]
				if k == op.Key {
					m.Ranges = nil // the fused op reads the ranges
					m.Inputs = make([]int, len(op.Inputs))
					for i := range m.Inputs {
						m.Inputs[i] = i
					}
				} else {
					m.Inputs = []int{0}
				}
				members = append(members, m)
			}
			t := cg.Ops[tail]
			fused = &chunk.Op{Kind: chunk.KindFuse, Inputs: inputs, Shape: t.Shape, DType: t.DType, Node: t.Node, Ranges: op.Ranges, Args: chunk.FuseArgs{Members: members}}
		}
		if fused != op {
			fused.Key = len(out.Ops)
		}
		for k := op.Key; k >= 0; k = int(next[k]) {
			newKey[k] = int32(fused.Key)
		}
		out.Ops = append(out.Ops, fused)
	}
	out.Outputs = remapOutputs(cg.Outputs, newKey)
	return out
}

// remapOutputs returns outputs with each chunk key k replaced by newKey[k],
// for a graph whose ops an optimization renumbered.
func remapOutputs(outputs []tensor.TiledTensor, newKey []int32) []tensor.TiledTensor {
	out := make([]tensor.TiledTensor, len(outputs))
	for j, o := range outputs {
		out[j] = o
		out[j].Keys = make([]uint64, len(o.Keys))
		for i, k := range o.Keys {
			out[j].Keys[i] = uint64(newKey[k])
		}
	}
	return out
}
