package kernel

import (
	"context"
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

func reduceArgs(op *chunk.Op, in []*tensor.Array, nin int) (chunk.ReduceArgs, error) {
	args, ok := op.Args.(chunk.ReduceArgs)
	if !ok {
		return args, fmt.Errorf("bad args %T", op.Args)
	}
	if err := chunk.CheckOp(op); err != nil {
		return args, err
	}
	if nin >= 0 && len(in) != nin {
		return args, fmt.Errorf("takes %d inputs, got %d", nin, len(in))
	}
	if len(in) == 0 {
		return args, fmt.Errorf("no inputs")
	}
	for i, a := range in {
		if a == nil {
			return args, fmt.Errorf("input %d missing", i)
		}
		if err := a.Check(); err != nil {
			return args, fmt.Errorf("input %d: %w", i, err)
		}
	}
	return args, nil
}

func reduceMapKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	if a, ok := op.Args.(chunk.ReduceArgs); len(in) > 1 || ok && a.Gather != nil {
		return meanMapMulti(ctx, op, in)
	}
	return reduceMap(ctx, op, in, nil)
}

// reduceMap makes the partial of map op op over in[0]; share, when not
// nil, holds the sums the maps of one maps op share.
func reduceMap(ctx context.Context, op *chunk.Op, in []*tensor.Array, share *sharedSums) (*tensor.Array, error) {
	args, err := reduceArgs(op, in, 1)
	if err != nil {
		return nil, err
	}
	x := in[0]
	nd := len(x.Shape)
	reduced := make([]bool, nd)
	for _, ax := range args.Axes {
		if ax < 0 || ax >= nd {
			return nil, fmt.Errorf("axis %d out of range for shape %v", ax, x.Shape)
		}
		reduced[ax] = true
	}
	pdt, fields := chunk.PartialSpec(args.Op, x.DType, op.DType)
	pshape := make([]int, nd, nd+1)
	extent := 1
	for ax, s := range x.Shape {
		pshape[ax] = s
		if reduced[ax] {
			pshape[ax] = 1
			extent *= s
		}
	}
	if fields > 1 {
		pshape = append(pshape, fields)
	}
	if pdt != op.DType || !slices.Equal(pshape, op.Shape) || x.DType != args.In {
		return nil, fmt.Errorf("partial of %v%v is %v%v, op says %v%v", x.DType, x.Shape, pdt, pshape, op.DType, op.Shape)
	}
	nout := tensor.NumElements(pshape) / fields
	if extent == 0 && nout > 0 {
		switch args.Op {
		case tensor.OpMin, tensor.OpMax, tensor.OpNanmin, tensor.OpNanmax, tensor.OpArgmin, tensor.OpArgmax:
			return nil, fmt.Errorf("zero-size array to reduction operation %s which has no identity", args.Op)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Every map below sets every element of its partial, which a worker
	// makes in its store (a climate chunk's mean partial is 1 MB).
	out := tensor.AllocArray(ctx, pdt, pshape, false)
	if share == nil {
		share = new(sharedSums)
		defer share.release()
	}
	switch args.Op {
	case tensor.OpArgmin, tensor.OpArgmax:
		err = argMap(ctx, out, x, reduced, args)
	case tensor.OpMean, tensor.OpNanmean:
		err = meanMap(ctx, out, x, reduced, args.Op == tensor.OpNanmean, share)
	case tensor.OpVar, tensor.OpStd:
		err = varMap(ctx, out, x, reduced, share)
	default:
		err = monoidMap(ctx, out, x, reduced, args.Op)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func reduceCombineKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, err := reduceArgs(op, in, -1)
	if err != nil {
		return nil, err
	}
	for i, a := range in {
		if a.DType != op.DType || !slices.Equal(a.Shape, op.Shape) {
			return nil, fmt.Errorf("partial %d is %v%v, want %v%v", i, a.DType, a.Shape, op.DType, op.Shape)
		}
	}
	out := tensor.AllocArray(ctx, op.DType, op.Shape, false)
	copy(out.Data, in[0].Data)
	switch args.Op {
	case tensor.OpArgmin, tensor.OpArgmax:
		for _, p := range in[1:] {
			argCombine(out, p, args.Op == tensor.OpArgmax)
		}
	case tensor.OpVar, tensor.OpStd:
		for _, p := range in[1:] {
			elem.ChanCombine(out.Float64s(), p.Float64s())
		}
	default:
		op := args.Op
		if op == tensor.OpMean || op == tensor.OpNanmean {
			op = tensor.OpSum // sums, and (sum, count) pairs, add
		}
		m, err := elem.MonoidFor(op, out.DType)
		if err != nil {
			return nil, err
		}
		for _, p := range in[1:] {
			m.Outer(out.Data, p.Data)
		}
	}
	return out, nil
}

func reduceFinalKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, err := reduceArgs(op, in, 1)
	if err != nil {
		return nil, err
	}
	p := in[0]
	pdt, fields := chunk.PartialSpec(args.Op, args.In, op.DType)
	if p.DType != pdt || p.Len() != tensor.NumElements(op.Shape)*fields {
		return nil, fmt.Errorf("partial %v%v does not make %v%v", p.DType, p.Shape, op.DType, op.Shape)
	}
	// Every case sets every element: the result is made where it is kept
	// (the store), not copied there.
	out := tensor.AllocArray(ctx, op.DType, op.Shape, false)
	switch args.Op {
	case tensor.OpMean:
		n, ok := chunk.MeanCount(args)
		if !ok {
			return nil, fmt.Errorf("a mean's final of axes %v of an input of shape %v", args.Axes, args.Global)
		}
		v := p.Float64s()
		if out.DType == tensor.Float32 { // the common case, without a call an element
			d := out.Float32s()
			for i := range d {
				d[i] = float32(v[i] / n)
			}
			break
		}
		finalFloats(out, func(i int) float64 { return v[i] / n })
	case tensor.OpNanmean:
		v := p.Float64s()
		finalFloats(out, func(i int) float64 { return v[2*i] / v[2*i+1] })
	case tensor.OpVar, tensor.OpStd:
		v := p.Float64s()
		std := args.Op == tensor.OpStd
		finalFloats(out, func(i int) float64 { return elem.VarianceOf(v[3*i], v[3*i+2], args.Ddof, std) })
	case tensor.OpArgmin, tensor.OpArgmax:
		if op.DType != tensor.Int64 {
			return nil, fmt.Errorf("%s gives int64, not %v", args.Op, op.DType)
		}
		d := out.Int64s()
		if p.DType == tensor.Float64 {
			v := p.Float64s()
			for i := range d {
				d[i] = int64(v[2*i+1])
			}
		} else {
			v := p.Int64s()
			for i := range d {
				d[i] = v[2*i+1]
			}
		}
	default:
		elem.CastInto(out, p)
	}
	return out, nil
}

// finalFloats sets each element i of out to f(i), computed in float64 and
// rounded once to out's dtype: straight into a float32 or float64 result
// (a climate chunk's time mean or std: 6 MB of float32 rather than 12 MB
// of float64 made, cast and copied), through a float64 buffer for the
// others.
func finalFloats(out *tensor.Array, f func(i int) float64) {
	switch out.DType {
	case tensor.Float32:
		d := out.Float32s()
		for i := range d {
			d[i] = float32(f(i))
		}
	case tensor.Float64:
		d := out.Float64s()
		for i := range d {
			d[i] = f(i)
		}
	default:
		res := takeF64(out.Len())
		for i := range res {
			res[i] = f(i)
		}
		elem.CastInto(out, &tensor.Array{DType: tensor.Float64, Data: elem.Float64Bytes(res)})
		putF64(res)
	}
}
