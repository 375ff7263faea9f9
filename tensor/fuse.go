package tensor

import (
	"context"
	"fmt"
	"strings"
	"unsafe"
)

// FuseArgs are the arguments of a "fuse" op: a chain of ops run one after
// the other in one kernel call. Members[0] reads the fuse op's inputs (its
// Inputs index them); every later member reads the one before it.
type FuseArgs struct {
	Members []ChunkOp
}

// Name is how the op is shown in plans and operand tables: its kind, and
// for a fused op the kinds of its members, "fuse(add+sum.map)" or
// "expr(rand+rand+add+sum.map)".
func (op *ChunkOp) Name() string {
	if s, ok := exprMembers(op); ok {
		return s
	}
	if s, ok := drawnName(op); ok {
		return s
	}
	fa, ok := op.Args.(FuseArgs)
	if op.Kind != "fuse" || !ok {
		return op.Kind
	}
	kinds := make([]string, len(fa.Members))
	for i := range fa.Members {
		kinds[i] = fa.Members[i].Name()
	}
	return "fuse(" + strings.Join(kinds, "+") + ")"
}

// Fuse merges the chains of cg into single ops, as Mars does: an op whose
// only input is made by an op that nothing else reads joins that op's chain.
// The head of a chain may have many inputs (ADD of two RANDs), which stay
// apart; so do the chunks of the graph's outputs and stored chunks. Fuse
// returns a new graph with keys renumbered; cg is not modified. The ops
// that keep their key and inputs are shared by both graphs.
func Fuse(cg *ChunkGraph) *ChunkGraph {
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
		if len(op.Inputs) != 1 || op.Stored != 0 {
			continue
		}
		in := op.Inputs[0]
		if consumers[in] == 1 && !isOutput[in] && cg.Ops[in].Stored == 0 {
			next[in] = int32(op.Key)
			joins[op.Key] = true
		}
	}
	out := &ChunkGraph{Ops: make([]*ChunkOp, 0, n)}
	newKey := make([]int32, n)
	var slab opSlab
	var ints intSlab
	for _, op := range cg.Ops {
		if joins[op.Key] {
			continue // made as part of its chain's head
		}
		tail := op.Key
		for next[tail] >= 0 {
			tail = int(next[tail])
		}
		same := len(out.Ops) == op.Key // keys unchanged so far: so are its inputs'
		var fused *ChunkOp
		var inputs []int
		if !same || tail != op.Key {
			inputs = ints.take(len(op.Inputs))
			for i, in := range op.Inputs {
				inputs[i] = int(newKey[in])
			}
		}
		if tail == op.Key && same {
			// Nothing changes: the op is shared with cg, which is no less
			// unmodified for it.
			fused = op
		} else if tail == op.Key {
			c := slab.take()
			*c = *op
			c.Inputs = inputs
			fused = c
		} else {
			var members []ChunkOp
			for k := op.Key; k >= 0; k = int(next[k]) {
				m := *cg.Ops[k]
				if k == op.Key {
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
			fused = &ChunkOp{Kind: "fuse", Inputs: inputs, Shape: t.Shape, DType: t.DType, Node: t.Node, Args: FuseArgs{Members: members}}
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

func fuseKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	fa, ok := op.Args.(FuseArgs)
	if !ok || len(fa.Members) == 0 {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	cur := in
	var out, held *Array // held: the scratch buffer cur is in, if any
	last := len(fa.Members) - 1
	for i := range fa.Members {
		m := &fa.Members[i]
		mctx, made := ctx, (*Array)(nil)
		if i < last {
			// The chunks a chain passes on live until the next member has
			// read them: large ones go to reused scratch buffers, whose
			// pages are mapped already, rather than to the store.
			mctx = WithAlloc(ctx, func(dt DType, shape []int, zero bool) *Array {
				if made != nil || NumElements(shape)*dt.Size() < minScratchBytes {
					return nil
				}
				made = scratch.take(dt, shape)
				if zero {
					clear(made.Data)
				}
				return made
			})
		}
		var err error
		out, err = Run(mctx, m, cur)
		if held != nil && (err != nil || !sharesMemory(out, held)) {
			// The member read held's chunk and made its own: held is free.
			// (One that returned a view of it keeps it, for the collector.)
			scratch.put(held)
		}
		if err != nil {
			if made != nil {
				scratch.put(made)
			}
			return nil, err
		}
		held = nil
		if made != nil && sharesMemory(out, made) {
			held = made
		} else if made != nil {
			scratch.put(made)
		}
		cur = []*Array{out}
	}
	return out, nil
}

// minScratchBytes is the least chunk a fused chain passes on in a scratch
// buffer: smaller ones cost the heap less than the pool's lock.
const minScratchBytes = 64 << 10

// sharesMemory reports whether a's data lies in b's buffer.
func sharesMemory(a, b *Array) bool {
	if a == nil || len(a.Data) == 0 || cap(b.Data) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b.Data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(a.Data)))
	return p >= lo && p < lo+uintptr(cap(b.Data))
}

// remapOutputs returns outputs with each chunk key k replaced by newKey[k],
// for a graph whose ops an optimization renumbered.
func remapOutputs(outputs []TiledTensor, newKey []int32) []TiledTensor {
	out := make([]TiledTensor, len(outputs))
	for j, o := range outputs {
		out[j] = o
		out[j].Keys = make([]uint64, len(o.Keys))
		for i, k := range o.Keys {
			out[j].Keys[i] = uint64(newKey[k])
		}
	}
	return out
}
