package kernel

import (
	"context"
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// A blockSource gives a matmul op the blocks it multiplies: its inputs, when
// it draws none, else its inputs and the drawn blocks in the order of
// args.Blocks. A drawn block is made only when get is called, into a buffer
// of the scratch pool that get's release gives back.
type blockSource struct {
	ctx  context.Context
	in   []*tensor.Array
	args *chunk.MatmulArgs
	at   []int // the input of each block, or -1 for a drawn one
}

func newBlockSource(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*blockSource, int, error) {
	s := &blockSource{ctx: ctx, in: in}
	a, ok := op.Args.(chunk.MatmulArgs)
	if !ok {
		if op.Args != nil {
			return nil, 0, fmt.Errorf("bad args %T", op.Args)
		}
		return s, len(in), nil
	}
	s.args = &a
	s.at = make([]int, len(a.Blocks))
	next := 0
	for i := range a.Blocks {
		b := &a.Blocks[i]
		if b.Kind == "" {
			if next >= len(in) {
				return nil, 0, fmt.Errorf("%d inputs for %d read blocks", len(in), next+1)
			}
			s.at[i] = next
			next++
			continue
		}
		if !chunk.IsGenOp(b) || !chunk.RedrawnGens[b.Kind] || len(b.Shape) != 2 {
			return nil, 0, fmt.Errorf("block %d: %s of shape %v is no random 2-D block", i, b.Kind, b.Shape)
		}
		s.at[i] = -1
	}
	if next != len(in) {
		return nil, 0, fmt.Errorf("%d inputs for %d read blocks", len(in), next)
	}
	return s, len(a.Blocks), nil
}

// shape returns the shape of block i without making it.
func (s *blockSource) shape(i int) []int {
	if s.args == nil || s.at[i] >= 0 {
		return s.in[s.inputOf(i)].Shape
	}
	return s.args.Blocks[i].Shape
}

func (s *blockSource) inputOf(i int) int {
	if s.args == nil {
		return i
	}
	return s.at[i]
}

// get returns block i, drawing it into a scratch buffer when it is drawn;
// release gives the buffer back once the block is no longer read.
func (s *blockSource) get(i int) (a *tensor.Array, release func(), err error) {
	if s.args == nil || s.at[i] >= 0 {
		return s.in[s.inputOf(i)], func() {}, nil
	}
	g := &s.args.Blocks[i]
	buf := scratch.take(g.DType, g.Shape)
	ctx := tensor.WithAlloc(s.ctx, func(dt tensor.DType, shape []int, zero bool) *tensor.Array {
		if dt != buf.DType || tensor.NumElements(shape) != buf.Len() {
			return nil
		}
		if zero {
			clear(buf.Data)
		}
		return buf
	})
	a, err = Run(ctx, g, nil)
	if err != nil {
		scratch.put(buf)
		return nil, nil, err
	}
	return a, func() { scratch.put(buf) }, nil
}
