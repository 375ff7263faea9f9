package kernel

import (
	"context"
	"fmt"
	"unsafe"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

func fuseKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	fa, ok := op.Args.(chunk.FuseArgs)
	if !ok || len(fa.Members) == 0 {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	if p, ok := streamable(op, fa.Members); ok {
		if out, ok, err := streamReduce(ctx, op, p); ok {
			return out, err
		}
	}
	var out, held *tensor.Array // held: the scratch buffer out is in, if any
	last := len(fa.Members) - 1
	// step runs member i by run, its chunk in a scratch buffer when a
	// later member reads it, and gives back the buffer the member before
	// it made once the member has read it.
	step := func(i int, run func(context.Context) (*tensor.Array, error)) error {
		mctx, made := ctx, (*tensor.Array)(nil)
		if i < last {
			// The chunks a chain passes on live until the next member has
			// read them: large ones go to reused scratch buffers, whose
			// pages are mapped already, rather than to the store.
			mctx = tensor.WithAlloc(ctx, func(dt tensor.DType, shape []int, zero bool) *tensor.Array {
				if made != nil || tensor.NumElements(shape)*dt.Size() < minScratchBytes {
					return nil
				}
				made = scratch.take(dt, shape)
				if zero {
					clear(made.Data)
				}
				return made
			})
		}
		res, err := run(mctx)
		if held != nil && (err != nil || !sharesMemory(res, held)) {
			// The member read held's chunk and made its own: held is free.
			// (One that returned a view of it keeps it, for the collector.)
			scratch.put(held)
		}
		held = nil
		if err != nil {
			if made != nil {
				scratch.put(made)
			}
			return err
		}
		out = res
		if made != nil && sharesMemory(out, made) {
			held = made
		} else if made != nil {
			scratch.put(made)
		}
		return nil
	}
	first := 0
	h, streams := streamExprHead(fa.Members)
	if streams {
		// Read, computed and written a block at a time, when it is a
		// store chunk's write.
		if ok, err := streamWrite(ctx, h, fa.Members, in); ok {
			if err != nil {
				return nil, err
			}
			return done(), nil
		}
	}
	if streams {
		// A store chunk an expr program reads block by block: the two
		// members run as one, the chunk never made whole.
		streamed := false
		err := step(1, func(mctx context.Context) (*tensor.Array, error) {
			out, ok, err := streamExpr(mctx, h, fa.Members, in)
			streamed = ok
			return out, err
		})
		if err != nil {
			return nil, err
		}
		if streamed {
			first = 2
		}
	}
	for i := first; i <= last; i++ {
		m := &fa.Members[i]
		cur, err := memberInputs(m, i, in, out)
		if err != nil {
			return nil, err
		}
		if err := step(i, func(mctx context.Context) (*tensor.Array, error) { return Run(mctx, m, cur) }); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// memberInputs returns the inputs of member i of a fuse op whose inputs
// are in: the head's are the op's, as its Inputs index them; a later
// member's first is prev, the chunk of the member before it, and its
// others the op's inputs Inputs[j]-1.
func memberInputs(m *chunk.Op, i int, in []*tensor.Array, prev *tensor.Array) ([]*tensor.Array, error) {
	if i == 0 && len(m.Inputs) == len(in) {
		return in, nil // the common head: the op's inputs in order
	}
	ins := make([]*tensor.Array, len(m.Inputs))
	for j, k := range m.Inputs {
		switch {
		case i > 0 && j == 0:
			ins[j] = prev
			continue
		case i > 0:
			k--
		}
		if k < 0 || k >= len(in) {
			return nil, fmt.Errorf("member %d (%s) reads input %d of %d", i, m.Kind, k, len(in))
		}
		ins[j] = in[k]
	}
	return ins, nil
}

// minScratchBytes is the least chunk a fused chain passes on in a scratch
// buffer: smaller ones cost the heap less than the pool's lock.
const minScratchBytes = 64 << 10

// sharesMemory reports whether a's data lies in b's buffer.
func sharesMemory(a, b *tensor.Array) bool {
	if a == nil || len(a.Data) == 0 || cap(b.Data) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b.Data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(a.Data)))
	return p >= lo && p < lo+uintptr(cap(b.Data))
}

func partKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.PartArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	if err := chunk.CheckOp(op); err != nil {
		return nil, err
	}
	if len(in) != 1 || in[0] == nil {
		return nil, fmt.Errorf("takes 1 input, got %d", len(in))
	}
	src := in[0]
	if err := src.Check(); err != nil {
		return nil, fmt.Errorf("input 0: %w", err)
	}
	n := tensor.NumElements(op.Shape)
	if src.DType != op.DType || args.Offset < 0 || args.Offset > src.Len() || n > src.Len()-args.Offset {
		return nil, fmt.Errorf("%d elements at %d of an input of %v%v, want %v", n, args.Offset, src.DType, src.Shape, op.DType)
	}
	out := tensor.NewArray(op.DType, op.Shape)
	es := op.DType.Size()
	copy(out.Data, src.Data[args.Offset*es:(args.Offset+n)*es])
	return out, nil
}
