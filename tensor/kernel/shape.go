package kernel

import (
	"context"
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

func transposeKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.TransposeArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	if len(in) != 1 {
		return nil, fmt.Errorf("%d inputs, want 1", len(in))
	}
	src := in[0]
	if err := tensor.CheckPerm(args.Perm, len(src.Shape)); err != nil {
		return nil, err
	}
	if src.DType != op.DType || len(op.Shape) != len(src.Shape) {
		return nil, fmt.Errorf("input %v%v for output %v%v", src.DType, src.Shape, op.DType, op.Shape)
	}
	for ax, p := range args.Perm {
		if op.Shape[ax] != src.Shape[p] {
			return nil, fmt.Errorf("input shape %v does not transpose by %v to %v", src.Shape, args.Perm, op.Shape)
		}
	}
	out := elem.NewOutputAll(ctx, op) // a permutation of the input sets every element
	if out.Len() == 0 {
		return out, nil
	}
	switch op.DType.Size() {
	case 1:
		transposeInto(tensor.View[uint8](out.Data), tensor.View[uint8](src.Data), src.Shape, args.Perm)
	case 2:
		transposeInto(tensor.View[uint16](out.Data), tensor.View[uint16](src.Data), src.Shape, args.Perm)
	case 4:
		transposeInto(tensor.View[uint32](out.Data), tensor.View[uint32](src.Data), src.Shape, args.Perm)
	case 8:
		transposeInto(tensor.View[uint64](out.Data), tensor.View[uint64](src.Data), src.Shape, args.Perm)
	default:
		return nil, fmt.Errorf("invalid dtype %v", op.DType)
	}
	return out, nil
}

// transposeBlock is the side of the square tiles a transpose copies at a
// time: 32x32 elements of 8 bytes are 8 KiB, so a tile's source lines and
// destination lines both stay in L1.
const transposeBlock = 32

// transposeInto writes src (of shape) transposed by perm to dst, which is
// non-empty.
func transposeInto[T any](dst, src []T, shape, perm []int) {
	nd := len(shape)
	if nd == 0 {
		dst[0] = src[0]
		return
	}
	oshape := make([]int, nd)
	for ax, p := range perm {
		oshape[ax] = shape[p]
	}
	sstr, ostr := tensor.ByteStrides(shape, 1), tensor.ByteStrides(oshape, 1)
	ps := make([]int, nd) // source stride of each output axis
	for ax, p := range perm {
		ps[ax] = sstr[p]
	}
	a := nd - 1 // the output's contiguous axis
	if perm[a] == nd-1 {
		// Rows are contiguous in both: copy them whole.
		tensor.VisitIndices(oshape, []int{a}, func(idx []int) {
			d, s := 0, 0
			for ax, i := range idx {
				d += i * ostr[ax]
				s += i * ps[ax]
			}
			copy(dst[d:d+oshape[a]], src[s:s+oshape[a]])
		})
		return
	}
	b := 0 // the output axis that is contiguous in the source
	for ax, p := range perm {
		if p == nd-1 {
			b = ax
		}
	}
	na, nb, dsb, ssa := oshape[a], oshape[b], ostr[b], ps[a]
	tensor.VisitIndices(oshape, []int{a, b}, func(idx []int) {
		d0, s0 := 0, 0
		for ax, i := range idx {
			d0 += i * ostr[ax]
			s0 += i * ps[ax]
		}
		for i0 := 0; i0 < nb; i0 += transposeBlock {
			i1 := min(i0+transposeBlock, nb)
			for j0 := 0; j0 < na; j0 += transposeBlock {
				j1 := min(j0+transposeBlock, na)
				for i := i0; i < i1; i++ {
					d, s := d0+i*dsb, s0+i
					for j := j0; j < j1; j++ {
						dst[d+j] = src[s+j*ssa]
					}
				}
			}
		}
	})
}

func convertKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("%d inputs, want 1", len(in))
	}
	if !slices.Equal(in[0].Shape, op.Shape) {
		return nil, fmt.Errorf("input shape %v for output %v", in[0].Shape, op.Shape)
	}
	return ConvertChunk(in[0], op.DType), nil
}

// ConvertChunk returns a converted to dt with NumPy's casting (see
// elem.CastInto): nonzero is true, true is 1, floats truncate toward zero
// when cast to integers. It returns a itself when it has dtype dt already.
func ConvertChunk(a *tensor.Array, dt tensor.DType) *tensor.Array { return elem.CastArray(a, dt) }
