package kernel

import (
	"context"
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// mapsKernel runs the map ops of a "maps" op (chunk.MapsArgs) over its one
// input and packs their partials, one after the other, into its chunk.
// The members share the input's float64 sums over their axes: the mean's
// partial is made of them, and the variance's first pass is them, so that
// x.mean(axis=0) and x.var(axis=0) read a chunk twice, not three times,
// and every partial is the one its map op alone makes, to the bit.
func mapsKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	a, ok := op.Args.(chunk.MapsArgs)
	if !ok || len(a.Members) == 0 {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	if err := chunk.CheckOp(op); err != nil {
		return nil, err
	}
	if len(in) != 1 || in[0] == nil {
		return nil, fmt.Errorf("takes 1 input, got %d", len(in))
	}
	total := 0
	for i := range a.Members {
		m := &a.Members[i]
		if m.DType != op.DType || len(m.Inputs) != 1 || m.Inputs[0] != 0 || m.Ranges != nil {
			return nil, fmt.Errorf("member %d (%s) is no map op of the maps op's input making %v", i, m.Kind, op.DType)
		}
		total += tensor.NumElements(m.Shape)
	}
	if len(op.Shape) != 1 || op.Shape[0] != total {
		return nil, fmt.Errorf("a chunk of %v for partials of %d elements", op.Shape, total)
	}
	out := tensor.AllocArray(ctx, op.DType, op.Shape, false) // the members' partials fill it
	share := new(sharedSums)
	defer share.release()
	at := 0
	for i := range a.Members {
		m := &a.Members[i]
		if _, ok := m.Args.(chunk.ReduceArgs); !ok || m.Kind != chunk.StepKind(m.Args.(chunk.ReduceArgs).Op, chunk.StepMap) {
			return nil, fmt.Errorf("member %d (%s) is no map op", i, m.Kind)
		}
		p, err := reduceMap(ctx, m, in, share)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Kind, err)
		}
		at += copy(out.Data[at:], p.Data)
	}
	return out, nil
}

// sharedSums keeps the float64 sums of one chunk over one set of axes,
// made by the first map that needs them, for the next. A nil
// *sharedSums keeps nothing.
type sharedSums struct {
	reduced []bool
	sums    []float64
}

// sum returns the sums of a (the chunk, as float64) over the reduced
// axes; the caller must not modify them.
func (s *sharedSums) sum(ctx context.Context, a *tensor.Array, reduced []bool) ([]float64, error) {
	if s == nil {
		return sumFloat64(ctx, a, reduced)
	}
	if s.sums != nil && slices.Equal(s.reduced, reduced) {
		return s.sums, nil
	}
	sums, err := sumFloat64(ctx, a, reduced)
	if err != nil {
		return nil, err
	}
	putF64(s.sums)
	s.reduced, s.sums = slices.Clone(reduced), sums
	return sums, nil
}

// release gives the sums kept back to the map kernels' buffers; s may be
// nil.
func (s *sharedSums) release() {
	if s != nil && s.sums != nil {
		putF64(s.sums)
		s.sums = nil
	}
}
