package kernel

import (
	"context"
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

// ElemBlock is the number of elements a kernel processes between checks of
// its context (and the block size of the full-shape fast path).
const ElemBlock = 1 << 15

func elemKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.ElemArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	if err := chunk.CheckOp(op); err != nil {
		return nil, err
	}
	ct := args.Compute
	for i, a := range in {
		if a == nil {
			return nil, fmt.Errorf("input %d missing", i)
		}
		if err := a.Check(); err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		if len(a.Shape) > len(op.Shape) {
			return nil, fmt.Errorf("input %d of shape %v does not broadcast to %v", i, a.Shape, op.Shape)
		}
		off := len(op.Shape) - len(a.Shape)
		for ax, s := range a.Shape {
			if s != 1 && s != op.Shape[ax+off] {
				return nil, fmt.Errorf("input %d of shape %v does not broadcast to %v", i, a.Shape, op.Shape)
			}
		}
	}
	f, err := elem.ElemFunc(string(op.Kind), ct, op.DType, args.Decimals, len(in))
	if err != nil {
		return nil, err
	}
	want := make([]tensor.DType, len(in))
	for i := range in {
		want[i] = ct
		if op.Kind == tensor.OpWhere && i == 0 {
			want[i] = tensor.Bool
		}
	}
	out := elem.NewOutputAll(ctx, op) // broadcastApply sets every element
	if err := broadcastApply(ctx, out, in, want, f); err != nil {
		return nil, err
	}
	return out, nil
}

// broadcastApply runs f over out, with input i cast to want[i] and the
// inputs broadcast to out's shape. When every input has out's size it works
// block by block, casting each block into a scratch buffer, so that a cast
// never costs a pass over memory of its own.
func broadcastApply(ctx context.Context, out *tensor.Array, in []*tensor.Array, want []tensor.DType, f elem.RowFn) error {
	n := out.Len()
	if n == 0 {
		return nil
	}
	es := out.DType.Size()
	full := true
	for _, a := range in {
		if a.Len() != n {
			full = false
		}
	}
	bufs := make([][]byte, len(in))
	scratch := make([][]byte, len(in))
	if full {
		for lo := 0; lo < n; lo += ElemBlock {
			if err := ctx.Err(); err != nil {
				return err
			}
			hi := min(lo+ElemBlock, n)
			for i, a := range in {
				s := a.DType.Size()
				bufs[i] = a.Data[lo*s : hi*s]
				if a.DType == want[i] {
					continue
				}
				if scratch[i] == nil {
					scratch[i] = make([]byte, min(ElemBlock, n)*want[i].Size())
				}
				dst := &tensor.Array{DType: want[i], Data: scratch[i][:(hi-lo)*want[i].Size()]}
				elem.CastInto(dst, &tensor.Array{DType: a.DType, Data: bufs[i]})
				bufs[i] = dst.Data
			}
			if err := f(out.Data[lo*es:hi*es], bufs); err != nil {
				return err
			}
		}
		return nil
	}
	cast := make([]*tensor.Array, len(in))
	for i, a := range in {
		cast[i] = elem.CastArray(a, want[i])
	}
	return broadcastRows(ctx, out, cast, f)
}

// broadcastRows runs f over out row by row, broadcasting the inputs (already
// of their compute dtypes) to out's shape.
func broadcastRows(ctx context.Context, out *tensor.Array, in []*tensor.Array, f elem.RowFn) error {
	es := out.DType.Size()
	bufs := make([][]byte, len(in))
	shape, strides := broadcastLayout(out.Shape, in)
	nd := len(shape)
	rowLen := shape[nd-1]
	scratch := make([][]byte, len(in))
	idx := make([]int, nd-1)
	done := 0
	for row := 0; ; row++ {
		if done >= ElemBlock {
			if err := ctx.Err(); err != nil {
				return err
			}
			done = 0
		}
		for i, a := range in {
			s := a.DType.Size()
			off := 0
			for ax, ix := range idx {
				off += ix * strides[i][ax]
			}
			if strides[i][nd-1] == 1 {
				bufs[i] = a.Data[off*s : (off+rowLen)*s]
				continue
			}
			if scratch[i] == nil {
				scratch[i] = make([]byte, rowLen*s)
			}
			elem.FillRepeat(scratch[i], a.Data[off*s:(off+1)*s])
			bufs[i] = scratch[i]
		}
		if err := f(out.Data[row*rowLen*es:(row+1)*rowLen*es], bufs); err != nil {
			return err
		}
		done += rowLen
		ax := nd - 2
		for ; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < shape[ax] {
				break
			}
			idx[ax] = 0
		}
		if ax < 0 {
			return nil
		}
	}
}

// broadcastLayout returns out's shape with axes merged where every input
// steps the same way, and each input's element strides over it (0 where the
// input is broadcast). The result has at least one axis.
func broadcastLayout(outShape []int, in []*tensor.Array) ([]int, [][]int) {
	nd := len(outShape)
	full := make([][]int, len(in))
	for i, a := range in {
		st := make([]int, nd)
		off := nd - len(a.Shape)
		s := 1
		for ax := len(a.Shape) - 1; ax >= 0; ax-- {
			if a.Shape[ax] != 1 {
				st[ax+off] = s
			}
			s *= a.Shape[ax]
		}
		full[i] = st
	}
	var shape []int
	strides := make([][]int, len(in))
	for ax := 0; ax < nd; ax++ {
		if outShape[ax] == 1 {
			continue
		}
		merge := len(shape) > 0
		if merge {
			last := len(shape) - 1
			for i := range in {
				// Axis ax-... merges into the previous one when stepping over the
				// whole of ax equals one step of the previous axis.
				if strides[i][last] != full[i][ax]*outShape[ax] {
					merge = false
					break
				}
			}
		}
		if merge {
			last := len(shape) - 1
			shape[last] *= outShape[ax]
			for i := range in {
				strides[i][last] = full[i][ax]
			}
			continue
		}
		shape = append(shape, outShape[ax])
		for i := range in {
			strides[i] = append(strides[i], full[i][ax])
		}
	}
	if len(shape) == 0 {
		shape = []int{1}
		for i := range in {
			strides[i] = []int{0}
		}
	}
	return shape, strides
}
