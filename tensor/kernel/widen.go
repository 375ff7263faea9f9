package kernel

import (
	"fmt"
	"math"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

// The kernels are written for bool, int32, int64, uint64, float32 and
// float64. The other dtypes run through them widened, as NumPy's own loops
// compute them (tensor.DType.Compute): an op of int8, int16, uint8, uint16
// or uint32 runs in int32 or int64 and its result is narrowed back, which
// wraps exactly as NumPy's narrow integers do; an op of float16 runs in
// float32 and each result is rounded to float16, as NumPy's float16 loops
// do. widen is that adapter, applied by Run.

// runsAsIs are the kinds that take every dtype as it is: those that only
// move elements; astype and convert, which cast between any two dtypes
// directly (a float64 narrowed to float16 through float32 would round
// twice); a fused chain, which runs each member through Run (which widens
// it); and an expr op, whose program casts what it loads (the fusers take
// no op that computes in a narrow dtype).
var runsAsIs = map[chunk.Kind]bool{
	chunk.KindDiagonal: true, chunk.KindMaskSelect: true, chunk.KindTake: true, chunk.KindTakePiece: true, chunk.KindNonempty: true, // they move elements (layout.go, mask.go, take.go)
	chunk.KindAssemble: true, chunk.KindRechunkSplit: true, chunk.KindTranspose: true, chunk.KindReshape: true, chunk.KindConst: true,
	chunk.KindConvert: true, tensor.OpAstype: true, chunk.KindFuse: true, chunk.KindExpr: true,
	// The kernels of files read and write their dtype's bytes.
	chunk.KindFromNPY: true, chunk.KindFromZarr: true, chunk.KindToNPYCreate: true, chunk.KindToNPYWrite: true, chunk.KindToNPYCommit: true,
	chunk.KindToZarrCreate: true, chunk.KindToZarrWrite: true, chunk.KindToZarrCommit: true,
}

// widen returns op and its inputs as the kernels run them: op itself when
// nothing in it needs widening, else a copy computing in the dtypes'
// Compute, and its inputs cast to theirs.
func widen(op *chunk.Op, in []*tensor.Array) (*chunk.Op, []*tensor.Array, bool) {
	if runsAsIs[op.Kind] || !needsWidening(op, in) {
		return op, in, false
	}
	w := *op
	w.DType = op.DType.Compute()
	switch a := op.Args.(type) {
	case chunk.ElemArgs:
		a.Compute = a.Compute.Compute()
		w.Args = a
	case chunk.ReduceArgs:
		a.In = a.In.Compute()
		w.Args = a
	case chunk.HistArgs:
		a.Edges = a.Edges.Compute()
		w.Args = a
	case chunk.ScanArgs:
		a.Half = op.DType == tensor.Float16
		w.Args = a
	}
	wide := make([]*tensor.Array, len(in))
	for i, x := range in {
		if x == nil || x.Check() != nil {
			wide[i] = x // the kernel says what is wrong with it
			continue
		}
		wide[i] = elem.CastArray(x, x.DType.Compute())
	}
	return &w, wide, true
}

func needsWidening(op *chunk.Op, in []*tensor.Array) bool {
	narrow := func(d tensor.DType) bool { return d.Valid() && d.Compute() != d }
	if narrow(op.DType) {
		return true
	}
	for _, x := range in {
		if x != nil && narrow(x.DType) {
			return true
		}
	}
	switch a := op.Args.(type) {
	case chunk.ElemArgs:
		return narrow(a.Compute)
	case chunk.ReduceArgs:
		return narrow(a.In)
	case chunk.HistArgs:
		return narrow(a.Edges)
	}
	return false
}

// roundHalf is round with decimals on float16, as NumPy computes it: the
// scaling, the rounding and the scaling back each in float16, each step
// rounded (in float32 the scaled value would not be rounded before rint,
// and -4.949 to one decimal would give -4.9, where NumPy gives -5).
func roundHalf(op *chunk.Op, in []*tensor.Array) (*tensor.Array, bool, error) {
	args, ok := op.Args.(chunk.ElemArgs)
	if op.Kind != tensor.OpRound || op.DType != tensor.Float16 || !ok || args.Decimals == 0 {
		return nil, false, nil
	}
	if len(in) != 1 || in[0] == nil || in[0].DType != tensor.Float16 || in[0].Check() != nil || in[0].Len() != tensor.NumElements(op.Shape) {
		return nil, true, fmt.Errorf("round of float16 takes one float16 input of shape %v", op.Shape)
	}
	d := args.Decimals
	f := float64(tensor.HalfFromFloat64(math.Pow(10, math.Abs(float64(d)))).Float32())
	half := func(x float64) float64 { return float64(tensor.HalfFromFloat64(x).Float32()) }
	out := tensor.NewArray(tensor.Float16, op.Shape)
	o := out.Halves()
	for i, h := range in[0].Halves() {
		x := float64(h.Float32())
		if d > 0 {
			x = half(math.RoundToEven(half(x*f)) / f)
		} else {
			x = half(math.RoundToEven(half(x/f)) * f)
		}
		o[i] = tensor.HalfFromFloat64(x)
	}
	return out, true, nil
}
