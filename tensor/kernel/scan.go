package kernel

import (
	"context"
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

func scanArgs(op *chunk.Op, in []*tensor.Array) (chunk.ScanArgs, error) {
	args, ok := op.Args.(chunk.ScanArgs)
	if !ok {
		return args, fmt.Errorf("bad args %T", op.Args)
	}
	if err := chunk.CheckOp(op); err != nil {
		return args, err
	}
	if args.Axis < 0 || args.Axis >= len(op.Shape) {
		return args, fmt.Errorf("axis %d out of range for %v", args.Axis, op.Shape)
	}
	if args.Op != tensor.OpCumsum && args.Op != tensor.OpCumprod {
		return args, fmt.Errorf("unknown scan %q", args.Op)
	}
	for i, a := range in {
		if a == nil {
			return args, fmt.Errorf("input %d missing", i)
		}
		if err := a.Check(); err != nil {
			return args, fmt.Errorf("input %d: %w", i, err)
		}
		if len(a.Shape) != len(op.Shape) {
			return args, fmt.Errorf("input %d has shape %v, want %d axes", i, a.Shape, len(op.Shape))
		}
	}
	return args, nil
}

// split3 views shape as (outer, n, inner) around axis.
func split3(shape []int, axis int) (outer, n, inner int) {
	return tensor.NumElements(shape[:axis]), shape[axis], tensor.NumElements(shape[axis+1:])
}

func scanLocalKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, err := scanArgs(op, in)
	if err != nil {
		return nil, err
	}
	if len(in) != 1 || !slices.Equal(in[0].Shape, op.Shape) {
		return nil, fmt.Errorf("local scan of %d inputs to %v", len(in), op.Shape)
	}
	out := tensor.NewArray(op.DType, op.Shape)
	elem.CastInto(out, in[0])
	o, n, m := split3(op.Shape, args.Axis)
	mul := args.Op == tensor.OpCumprod
	if args.Half && op.DType == tensor.Float32 {
		d := tensor.View[float32](out.Data)
		for b := range o {
			scanHalf(d[b*n*m:(b+1)*n*m], nil, n, m, mul)
		}
		return out, nil
	}
	err = byNumber(op.DType, func(data []byte) { scanT(tensor.View[uint8](data), o, n, m, mul) },
		func(data []byte) { scanT(tensor.View[int32](data), o, n, m, mul) },
		func(data []byte) { scanT(tensor.View[int64](data), o, n, m, mul) },
		func(data []byte) { scanT(tensor.View[uint64](data), o, n, m, mul) },
		func(data []byte) { scanT(tensor.View[float32](data), o, n, m, mul) },
		func(data []byte) { scanT(tensor.View[float64](data), o, n, m, mul) })(out.Data)
	return out, err
}

// byNumber returns the function for dt among one per dtype a kernel
// computes in (see tensor.DType.Compute).
func byNumber(dt tensor.DType, b, i32, i64, u64, f32, f64 func([]byte)) func([]byte) error {
	var f func([]byte)
	switch dt {
	case tensor.Bool:
		f = b
	case tensor.Int32:
		f = i32
	case tensor.Int64:
		f = i64
	case tensor.Uint64:
		f = u64
	case tensor.Float32:
		f = f32
	case tensor.Float64:
		f = f64
	}
	return func(data []byte) error {
		if f == nil {
			return fmt.Errorf("invalid dtype %v", dt)
		}
		f(data)
		return nil
	}
}

// scanT scans d, viewed as (o, n, m), in place along its middle axis.
func scanT[T elem.ElemType](d []T, o, n, m int, mul bool) {
	for b := 0; b < o; b++ {
		blk := d[b*n*m : (b+1)*n*m]
		for i := 1; i < n; i++ {
			prev, cur := blk[(i-1)*m:i*m], blk[i*m:(i+1)*m]
			if mul {
				for j := range cur {
					cur[j] *= prev[j]
				}
			} else {
				elem.AddLoop(cur, cur, prev)
			}
		}
	}
}

// scanHalf scans blk, viewed as (n, m), in place along its first axis,
// each partial result rounded to float16 as NumPy's float16 loops round
// it; seed, when not nil, is the (1, m) running result before blk's first
// row.
func scanHalf(blk, seed []float32, n, m int, mul bool) {
	for i := range n {
		cur := blk[i*m : (i+1)*m]
		prev := seed
		if i > 0 {
			prev = blk[(i-1)*m : i*m]
		}
		for j := range cur {
			v := cur[j]
			if prev != nil {
				if mul {
					v *= prev[j]
				} else {
					v += prev[j]
				}
			}
			cur[j] = tensor.HalfFromFloat32(v).Float32()
		}
	}
}

// combineT sets d[b, i, j] = c[b, j] op d[b, i, j] for d viewed as (o, n, m)
// and c as (o, 1, m).
func combineT[T elem.ElemType](d, c []T, o, n, m int, mul bool) {
	for b := 0; b < o; b++ {
		cr := c[b*m : (b+1)*m]
		for i := 0; i < n; i++ {
			row := d[(b*n+i)*m : (b*n+i+1)*m]
			if mul {
				for j := range row {
					row[j] *= cr[j]
				}
			} else {
				elem.AddLoop(row, row, cr)
			}
		}
	}
}

func scanCombine(dt tensor.DType, d, c []byte, o, n, m int, mul bool) error {
	return byNumber(dt, func(d []byte) { combineT(tensor.View[uint8](d), tensor.View[uint8](c), o, n, m, mul) },
		func(d []byte) { combineT(tensor.View[int32](d), tensor.View[int32](c), o, n, m, mul) },
		func(d []byte) { combineT(tensor.View[int64](d), tensor.View[int64](c), o, n, m, mul) },
		func(d []byte) { combineT(tensor.View[uint64](d), tensor.View[uint64](c), o, n, m, mul) },
		func(d []byte) { combineT(tensor.View[float32](d), tensor.View[float32](c), o, n, m, mul) },
		func(d []byte) { combineT(tensor.View[float64](d), tensor.View[float64](c), o, n, m, mul) })(d)
}

// scanCarryKernel makes the total of a line of chunks so far: the last slice
// of the local scan (its input 1, or 0 for the first chunk), combined with
// the previous carry (input 0) if there is one.
func scanCarryKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, err := scanArgs(op, in)
	if err != nil {
		return nil, err
	}
	if len(in) < 1 || len(in) > 2 || op.Shape[args.Axis] != 1 {
		return nil, fmt.Errorf("carry of %d inputs to %v", len(in), op.Shape)
	}
	local := in[len(in)-1]
	want := append([]int(nil), local.Shape...)
	want[args.Axis] = 1
	if !slices.Equal(want, op.Shape) || local.DType != op.DType {
		return nil, fmt.Errorf("carry of %v%v is not %v%v", local.DType, local.Shape, op.DType, op.Shape)
	}
	mul := args.Op == tensor.OpCumprod
	out := tensor.NewArray(op.DType, op.Shape)
	o, n, m := split3(local.Shape, args.Axis)
	es := op.DType.Size()
	if n == 0 {
		// An empty chunk adds nothing: start from the identity.
		if mul {
			elem.CastInto(out, &tensor.Array{DType: tensor.Float64, Data: elem.Float64Bytes(ones64(out.Len()))})
		}
	} else {
		for b := 0; b < o; b++ {
			copy(out.Data[b*m*es:(b+1)*m*es], local.Data[((b*n+n-1)*m)*es:((b*n+n)*m)*es])
		}
	}
	if len(in) == 2 {
		prev := in[0]
		if prev.DType != op.DType || !slices.Equal(prev.Shape, op.Shape) {
			return nil, fmt.Errorf("previous carry %v%v is not %v%v", prev.DType, prev.Shape, op.DType, op.Shape)
		}
		if err := scanCombine(op.DType, out.Data, prev.Data, o, 1, m, mul); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func ones64(n int) []float64 {
	s := make([]float64, n)
	elem.FillSlice(s, 1)
	return s
}

func scanOffsetKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, err := scanArgs(op, in)
	if err != nil {
		return nil, err
	}
	if len(in) != 2 {
		return nil, fmt.Errorf("offset takes 2 inputs, got %d", len(in))
	}
	local, carry := in[0], in[1]
	want := append([]int(nil), op.Shape...)
	want[args.Axis] = 1
	if local.DType != op.DType || carry.DType != op.DType || !slices.Equal(local.Shape, op.Shape) || !slices.Equal(carry.Shape, want) {
		return nil, fmt.Errorf("offset of %v%v by %v%v is not %v%v", local.DType, local.Shape, carry.DType, carry.Shape, op.DType, op.Shape)
	}
	out := tensor.NewArray(op.DType, op.Shape)
	copy(out.Data, local.Data)
	o, n, m := split3(op.Shape, args.Axis)
	if args.Seeded {
		// local is the chunk itself: scan it from the carry.
		if op.DType != tensor.Float32 || !args.Half {
			return nil, fmt.Errorf("a seeded scan runs on float16, not %v", op.DType)
		}
		d, c := tensor.View[float32](out.Data), tensor.View[float32](carry.Data)
		for b := range o {
			scanHalf(d[b*n*m:(b+1)*n*m], c[b*m:(b+1)*m], n, m, args.Op == tensor.OpCumprod)
		}
		return out, nil
	}
	if err := scanCombine(op.DType, out.Data, carry.Data, o, n, m, args.Op == tensor.OpCumprod); err != nil {
		return nil, err
	}
	return out, nil
}
