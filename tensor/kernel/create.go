package kernel

import (
	"context"
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

// genArgs checks op's arguments against its shape.
func genArgs(op *chunk.Op, in []*tensor.Array) (chunk.GenArgs, error) {
	args, ok := op.Args.(chunk.GenArgs)
	if !ok {
		return args, fmt.Errorf("bad args %T", op.Args)
	}
	if len(in) != 0 {
		return args, fmt.Errorf("takes no inputs, got %d", len(in))
	}
	if err := chunk.CheckOp(op); err != nil {
		return args, err
	}
	if len(args.Offset) != len(op.Shape) || len(args.Global) != len(op.Shape) {
		return args, fmt.Errorf("offset %v and shape %v do not match chunk shape %v", args.Offset, args.Global, op.Shape)
	}
	for ax, s := range op.Shape {
		if s < 0 || args.Offset[ax] < 0 || args.Offset[ax]+s > args.Global[ax] {
			return args, fmt.Errorf("chunk %v at %v lies outside %v", op.Shape, args.Offset, args.Global)
		}
	}
	return args, nil
}

func fullKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, err := genArgs(op, in)
	if err != nil {
		return nil, err
	}
	out := elem.NewOutputAll(ctx, op)
	switch op.DType {
	case tensor.Bool:
		elem.FillSlice(out.Data, elem.B2u(args.IntValue != 0))
	case tensor.Int32:
		elem.FillSlice(out.Int32s(), int32(args.IntValue))
	case tensor.Int64:
		elem.FillSlice(out.Int64s(), args.IntValue)
	case tensor.Uint64:
		elem.FillSlice(out.Uint64s(), uint64(args.IntValue))
	case tensor.Float32:
		elem.FillSlice(out.Float32s(), float32(args.Value))
	case tensor.Float64:
		elem.FillSlice(out.Float64s(), args.Value)
	}
	return out, nil
}

// rangeKernel fills a 1-D chunk with Start + i*delta, i the global index.
// As in NumPy's arange, delta is (Start+Step) - Start, and integer dtypes
// step in integers.
func rangeKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, err := genArgs(op, in)
	if err != nil {
		return nil, err
	}
	if len(op.Shape) != 1 {
		return nil, fmt.Errorf("shape %v is not 1-D", op.Shape)
	}
	out := elem.NewOutput(ctx, op)
	off := args.Offset[0]
	if op.DType.IsInteger() && op.Kind == tensor.OpArange {
		start := int64(args.Start)
		step := int64(args.Start+args.Step) - start
		switch op.DType {
		case tensor.Int32:
			d := out.Int32s()
			for i := range d {
				d[i] = int32(start + int64(off+i)*step)
			}
		case tensor.Uint64:
			d := out.Uint64s()
			for i := range d {
				d[i] = uint64(start + int64(off+i)*step)
			}
		default:
			d := out.Int64s()
			for i := range d {
				d[i] = start + int64(off+i)*step
			}
		}
		return out, nil
	}
	if op.DType == tensor.Float32 && op.Kind == tensor.OpArange {
		// NumPy fills a float32 arange in float32.
		start := float32(args.Start)
		delta := float32(args.Start+args.Step) - start
		d := out.Float32s()
		for i := range d {
			d[i] = start + float32(off+i)*delta
		}
		return out, nil
	}
	delta := args.Step
	if op.Kind == tensor.OpArange {
		delta = (args.Start + args.Step) - args.Start
	}
	vals := make([]float64, out.Len())
	for i := range vals {
		vals[i] = args.Start + float64(off+i)*delta
	}
	elem.CastInto(out, &tensor.Array{DType: tensor.Float64, Shape: op.Shape, Data: elem.Float64Bytes(vals)})
	return out, nil
}

func eyeKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, err := genArgs(op, in)
	if err != nil {
		return nil, err
	}
	if len(op.Shape) != 2 {
		return nil, fmt.Errorf("eye chunk %v is not 2-D", op.Shape)
	}
	one := &tensor.Array{DType: tensor.Float64, Shape: []int{1}, Data: elem.Float64Bytes([]float64{1})}
	o := elem.CastArray(one, op.DType)
	es := op.DType.Size()
	out := tensor.NewArray(op.DType, op.Shape)
	rows, cols := op.Shape[0], op.Shape[1]
	for r := 0; r < rows; r++ {
		c := args.Offset[0] + r + args.K - args.Offset[1]
		if c >= 0 && c < cols {
			copy(out.Data[(r*cols+c)*es:], o.Data)
		}
	}
	return out, nil
}
