package tensor

import (
	"context"
	"fmt"
	"slices"
)

// Reductions tile as trees. For every output chunk, a map op ("sum.map")
// reduces each input chunk that feeds it to a partial over the reduced axes
// (kept as size-1 axes); combine ops ("sum.combine") merge up to
// reduceCombine partials at a time, level by level, and a final op
// ("sum.final") turns the last partial into the result chunk, dropping the
// reduced axes unless keepdims.
//
// A partial is one value per output element for most reductions; mean keeps
// (sum, count), var and std keep (count, mean, M2) and argmin/argmax keep
// (value, global index), stored along a trailing extra axis: float64 for
// float inputs, int64 for integer and bool ones, where an index is exact.
//
// The output chunking keeps the input's chunks along the axes that are not
// reduced; a reduced axis becomes one chunk of size 1 (keepdims) or vanishes.

// reduceCombine is the fan-in of a reduction tree. Four keeps the tree
// shallow (log4 of the number of chunks) while each combine op holds only a
// few partials in memory and can start as soon as four of them exist.
const reduceCombine = 4

// ReduceArgs are the arguments of the reduction kernels (Kind "<op>.map",
// "<op>.combine", "<op>.final").
type ReduceArgs struct {
	Op       string // the reduction, OpSum...
	In       DType  // the dtype of the reduced tensor
	Axes     []int  // the reduced axes of the input (all of them for none)
	Flat     bool   // argmin/argmax over all axes: a flat C-order index
	Keepdims bool
	Ddof     int
	Offset   []int // map: the chunk's offset in the input
	Global   []int // map: the input's shape
}

var reductions = []string{OpSum, OpProd, OpMean, OpVar, OpStd, OpMin, OpMax, OpArgmin, OpArgmax,
	OpAny, OpAll, OpCountNonzero, OpNansum, OpNanmean, OpNanmax, OpNanmin}

// partialSpec is the dtype of op's partials and the length of their extra
// axis (1: no extra axis).
func partialSpec(op string, in, out DType) (DType, int) {
	switch op {
	case OpMean, OpNanmean:
		return Float64, 2
	case OpVar, OpStd:
		return Float64, 3
	case OpArgmin, OpArgmax:
		if in.IsFloat() {
			return Float64, 2
		}
		return Int64, 2
	case OpMin, OpMax, OpNanmin, OpNanmax:
		return in, 1
	case OpAny, OpAll:
		return Bool, 1
	case OpCountNonzero:
		return Int64, 1
	}
	return out, 1 // sum, prod, nansum accumulate in the result dtype
}

func tileReduce(t *tiler, n *Node) (*TiledTensor, error) {
	in := t.input(n, 0)
	nd := len(in.Shape)
	reduced := make([]bool, nd)
	axes := n.Attrs.Axes
	if axes == nil {
		for ax := range reduced {
			reduced[ax] = true
			axes = append(axes, ax)
		}
	}
	for _, ax := range n.Attrs.Axes {
		if ax < 0 || ax >= nd || reduced[ax] {
			return nil, fmt.Errorf("bad axes %v for shape %v", n.Attrs.Axes, in.Shape)
		}
		reduced[ax] = true
	}
	isArg := n.Op == OpArgmin || n.Op == OpArgmax
	if isArg && len(n.Attrs.Axes) > 1 {
		return nil, fmt.Errorf("%s takes one axis or none, got %v", n.Op, n.Attrs.Axes)
	}
	pdt, fields := partialSpec(n.Op, in.DType, n.DType)
	base := ReduceArgs{Op: n.Op, In: in.DType, Axes: axes, Flat: isArg && n.Attrs.Axes == nil,
		Keepdims: n.Attrs.Keepdims, Ddof: n.Attrs.Ddof}

	keepChunks := make([][]int, nd)
	redGrid := make([]int, nd)
	var outChunks [][]int
	for ax := range reduced {
		if reduced[ax] {
			keepChunks[ax] = []int{1}
			redGrid[ax] = len(in.Chunks[ax])
			if n.Attrs.Keepdims {
				outChunks = append(outChunks, []int{1})
			}
			continue
		}
		keepChunks[ax] = in.Chunks[ax]
		redGrid[ax] = 1
		outChunks = append(outChunks, in.Chunks[ax])
	}
	if outChunks == nil {
		outChunks = [][]int{}
	}
	inGrid, keepGrid, outGrid := GridShape(in.Chunks), GridShape(keepChunks), GridShape(outChunks)
	offs := ChunkOffsets(in.Chunks)
	out := &TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: outChunks}
	mapKind, combineKind, finalKind := n.Op+".map", n.Op+".combine", n.Op+".final"
	// The args are boxed once, the map's too but for argmin and argmax,
	// whose maps need their chunk's offset.
	var baseArgs any = base
	mapArgs := base
	mapArgs.Global = in.Shape
	var sharedMapArgs any = mapArgs
	idx, ridx, full := make([]int, nd), make([]int, nd), make([]int, nd)
	nkeep, nred := NumElements(keepGrid), NumElements(redGrid)
	out.Keys = make([]uint64, 0, nkeep)
	var parts, next []int
	cf := t.columns[n.ID] // the fuser of the columns of n's input, if any
	for k := 0; k < nkeep; k++ {
		unravelInto(idx, k, keepGrid)
		pshape := chunkShape(keepChunks, keepGrid, k)
		if fields > 1 {
			pshape = append(pshape, fields)
		}
		parts = parts[:0]
		for r := 0; r < nred; r++ {
			unravelInto(ridx, r, redGrid)
			for ax := range full {
				full[ax] = idx[ax]
				if reduced[ax] {
					full[ax] = ridx[ax]
				}
			}
			args := sharedMapArgs
			if isArg {
				a := mapArgs
				a.Offset = t.ints.take(nd)
				for ax := range full {
					a.Offset[ax] = offs[ax][full[ax]]
				}
				args = a
			}
			if cf != nil {
				key, err := cf.emit(t, ravel(full, inGrid), ChunkOp{Kind: mapKind, Shape: pshape, DType: pdt, Args: args})
				if err != nil {
					return nil, err
				}
				parts = append(parts, int(key))
				continue
			}
			ins := t.ints.take(1)
			ins[0] = int(in.Keys[ravel(full, inGrid)])
			parts = append(parts, int(t.emitOp(ChunkOp{Kind: mapKind, Inputs: ins, Shape: pshape, DType: pdt, Args: args})))
		}
		for len(parts) > 1 {
			next = next[:0]
			for lo := 0; lo < len(parts); lo += reduceCombine {
				group := parts[lo:min(lo+reduceCombine, len(parts))]
				if len(group) == 1 {
					next = append(next, group[0])
					continue
				}
				next = append(next, int(t.emitOp(ChunkOp{Kind: combineKind, Inputs: t.ints.clone(group),
					Shape: pshape, DType: pdt, Args: baseArgs})))
			}
			parts, next = next, parts
		}
		out.Keys = append(out.Keys, t.emitOp(ChunkOp{Kind: finalKind, Inputs: t.ints.clone(parts),
			Shape: chunkShape(outChunks, outGrid, k), DType: n.DType, Args: baseArgs}))
	}
	return out, nil
}

func reduceArgs(op *ChunkOp, in []*Array, nin int) (ReduceArgs, error) {
	args, ok := op.Args.(ReduceArgs)
	if !ok {
		return args, fmt.Errorf("bad args %T", op.Args)
	}
	if err := checkOp(op); err != nil {
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

func reduceMapKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
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
	pdt, fields := partialSpec(args.Op, x.DType, op.DType)
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
	nout := NumElements(pshape) / fields
	if extent == 0 && nout > 0 {
		switch args.Op {
		case OpMin, OpMax, OpNanmin, OpNanmax, OpArgmin, OpArgmax:
			return nil, fmt.Errorf("zero-size array to reduction operation %s which has no identity", args.Op)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := NewArray(pdt, pshape)
	switch args.Op {
	case OpArgmin, OpArgmax:
		err = argMap(ctx, out, x, reduced, args)
	case OpMean, OpNanmean:
		err = meanMap(ctx, out, x, reduced, args.Op == OpNanmean)
	case OpVar, OpStd:
		err = varMap(ctx, out, x, reduced)
	default:
		err = monoidMap(ctx, out, x, reduced, args.Op)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func reduceCombineKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, err := reduceArgs(op, in, -1)
	if err != nil {
		return nil, err
	}
	for i, a := range in {
		if a.DType != op.DType || !slices.Equal(a.Shape, op.Shape) {
			return nil, fmt.Errorf("partial %d is %v%v, want %v%v", i, a.DType, a.Shape, op.DType, op.Shape)
		}
	}
	out := NewArray(op.DType, op.Shape)
	copy(out.Data, in[0].Data)
	switch args.Op {
	case OpArgmin, OpArgmax:
		for _, p := range in[1:] {
			argCombine(out, p, args.Op == OpArgmax)
		}
	case OpVar, OpStd:
		for _, p := range in[1:] {
			chanCombine(out.Float64s(), p.Float64s())
		}
	default:
		op := args.Op
		if op == OpMean || op == OpNanmean {
			op = OpSum // (sum, count) pairs add
		}
		m, err := monoidFor(op, out.DType)
		if err != nil {
			return nil, err
		}
		for _, p := range in[1:] {
			m.outer(out.Data, p.Data)
		}
	}
	return out, nil
}

func reduceFinalKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, err := reduceArgs(op, in, 1)
	if err != nil {
		return nil, err
	}
	p := in[0]
	pdt, fields := partialSpec(args.Op, args.In, op.DType)
	if p.DType != pdt || p.Len() != NumElements(op.Shape)*fields {
		return nil, fmt.Errorf("partial %v%v does not make %v%v", p.DType, p.Shape, op.DType, op.Shape)
	}
	out := NewArray(op.DType, op.Shape)
	switch args.Op {
	case OpMean, OpNanmean:
		v := p.Float64s()
		res := make([]float64, out.Len())
		for i := range res {
			res[i] = v[2*i] / v[2*i+1]
		}
		castInto(out, &Array{DType: Float64, Data: float64Bytes(res)})
	case OpVar, OpStd:
		v := p.Float64s()
		res := make([]float64, out.Len())
		for i := range res {
			res[i] = varianceOf(v[3*i], v[3*i+2], args.Ddof, args.Op == OpStd)
		}
		castInto(out, &Array{DType: Float64, Data: float64Bytes(res)})
	case OpArgmin, OpArgmax:
		if op.DType != Int64 {
			return nil, fmt.Errorf("%s gives int64, not %v", args.Op, op.DType)
		}
		d := out.Int64s()
		if p.DType == Float64 {
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
		castInto(out, p)
	}
	return out, nil
}
