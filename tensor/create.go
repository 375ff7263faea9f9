package tensor

import (
	"context"
	"fmt"
	"unsafe"
)

// Creation ops tile to one op a chunk of Node.Chunks. Every op carries its
// chunk's global offset and the tensor's global shape, so that the value of
// an element depends only on its global index: the same tensor comes out of
// any chunking, and any chunk can be recomputed alone.

// GenArgs are the arguments of the creation and random kernels ("full",
// "arange", "linspace", "eye", "rand", "randn", "randint", "uniform",
// "normal").
type GenArgs struct {
	Offset   []int // the chunk's first element, per axis
	Global   []int // the whole tensor's shape
	Value    float64
	IntValue int64
	Start    float64
	Step     float64
	Low      int64
	High     int64
	K        int
	Seed     uint64
}

// tileCreate emits one generator op a chunk of n.Chunks.
func tileCreate(t *tiler, n *Node) (*TiledTensor, error) {
	if len(n.Chunks) != len(n.Shape) {
		return nil, fmt.Errorf("%d chunk axes for shape %v", len(n.Chunks), n.Shape)
	}
	kind := createKind(n)
	if kind == OpEye && len(n.Shape) != 2 {
		return nil, fmt.Errorf("eye needs 2 axes, got shape %v", n.Shape)
	}
	out := &TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: n.Chunks}
	grid := GridShape(n.Chunks)
	offs := ChunkOffsets(n.Chunks)
	nk := NumElements(grid)
	out.Keys = make([]uint64, 0, nk)
	idx := make([]int, len(grid))
	shape := make([]int, len(grid))
	all := createArgs(n)
	for k := 0; k < nk; k++ {
		unravelInto(idx, k, grid)
		off := t.ints.take(len(idx))
		for ax, i := range idx {
			off[ax] = offs[ax][i]
			shape[ax] = n.Chunks[ax][i]
		}
		args := all
		args.Offset = off
		out.Keys = append(out.Keys, t.emitOp(ChunkOp{Kind: kind, Shape: t.shapes.shape(shape), DType: n.DType, Args: args}))
	}
	return out, nil
}

// createKind is the kernel of the chunks of generator node n.
func createKind(n *Node) string {
	if n.Op == OpScalar {
		return OpFull
	}
	return n.Op
}

// createArgs are the arguments of the chunks of generator node n, but for
// their Offset.
func createArgs(n *Node) GenArgs {
	a := &n.Attrs
	return GenArgs{Global: n.Shape, Value: a.Value, IntValue: a.IntValue,
		Start: a.Start, Step: a.Step, Low: a.Low, High: a.High, K: a.K, Seed: a.Seed}
}

// genArgs checks op's arguments against its shape.
func genArgs(op *ChunkOp, in []*Array) (GenArgs, error) {
	args, ok := op.Args.(GenArgs)
	if !ok {
		return args, fmt.Errorf("bad args %T", op.Args)
	}
	if len(in) != 0 {
		return args, fmt.Errorf("takes no inputs, got %d", len(in))
	}
	if err := checkOp(op); err != nil {
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

func fullKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, err := genArgs(op, in)
	if err != nil {
		return nil, err
	}
	out := newOutputAll(ctx, op)
	switch op.DType {
	case Bool:
		fillSlice(out.Data, b2u(args.IntValue != 0))
	case Int32:
		fillSlice(out.Int32s(), int32(args.IntValue))
	case Int64:
		fillSlice(out.Int64s(), args.IntValue)
	case Float32:
		fillSlice(out.Float32s(), float32(args.Value))
	case Float64:
		fillSlice(out.Float64s(), args.Value)
	}
	return out, nil
}

func fillSlice[T any](d []T, v T) {
	for i := range d {
		d[i] = v
	}
}

// rangeKernel fills a 1-D chunk with Start + i*delta, i the global index.
// As in NumPy's arange, delta is (Start+Step) - Start, and integer dtypes
// step in integers.
func rangeKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, err := genArgs(op, in)
	if err != nil {
		return nil, err
	}
	if len(op.Shape) != 1 {
		return nil, fmt.Errorf("shape %v is not 1-D", op.Shape)
	}
	out := newOutput(ctx, op)
	off := args.Offset[0]
	if op.DType.IsInt() && op.Kind == OpArange {
		start := int64(args.Start)
		step := int64(args.Start+args.Step) - start
		if op.DType == Int32 {
			d := out.Int32s()
			for i := range d {
				d[i] = int32(start + int64(off+i)*step)
			}
		} else {
			d := out.Int64s()
			for i := range d {
				d[i] = start + int64(off+i)*step
			}
		}
		return out, nil
	}
	if op.DType == Float32 && op.Kind == OpArange {
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
	if op.Kind == OpArange {
		delta = (args.Start + args.Step) - args.Start
	}
	vals := make([]float64, out.Len())
	for i := range vals {
		vals[i] = args.Start + float64(off+i)*delta
	}
	castInto(out, &Array{DType: Float64, Shape: op.Shape, Data: float64Bytes(vals)})
	return out, nil
}

// float64Bytes views vals as bytes.
func float64Bytes(vals []float64) []byte {
	if len(vals) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(vals))), len(vals)*8)
}

func eyeKernel(_ context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, err := genArgs(op, in)
	if err != nil {
		return nil, err
	}
	if len(op.Shape) != 2 {
		return nil, fmt.Errorf("eye chunk %v is not 2-D", op.Shape)
	}
	one := &Array{DType: Float64, Shape: []int{1}, Data: float64Bytes([]float64{1})}
	o := castArray(one, op.DType)
	es := op.DType.Size()
	out := NewArray(op.DType, op.Shape)
	rows, cols := op.Shape[0], op.Shape[1]
	for r := 0; r < rows; r++ {
		c := args.Offset[0] + r + args.K - args.Offset[1]
		if c >= 0 && c < cols {
			copy(out.Data[(r*cols+c)*es:], o.Data)
		}
	}
	return out, nil
}
