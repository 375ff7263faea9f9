package kernel

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

// weightedSumOp is the expr program of the global mean's
// (x * w[:, None]).sum(axis=(1, 2)) over a chunk of dt and shape (t, lat,
// lon), w of shape (lat, 1): x loaded (and widened to float64 when
// float32), w broadcast, their product summed over the trailing axes.
func weightedSumOp(dt tensor.DType, shape []int) *chunk.Op {
	code := []chunk.ExprInstr{{Op: chunk.ExprLoad, Dst: 0, Input: 0, DType: dt}}
	x := 0
	if dt != tensor.Float64 {
		code = append(code, chunk.ExprInstr{Op: chunk.ExprCast, Dst: 1, Src: []int{0}, DType: tensor.Float64})
		x = 1
	}
	code = append(code,
		chunk.ExprInstr{Op: chunk.ExprBcast, Dst: 2, Input: 1, DType: tensor.Float64},
		chunk.ExprInstr{Op: chunk.ExprElem, Kind: tensor.OpMultiply, Dst: 3, Src: []int{x, 2}, DType: tensor.Float64,
			Elem: chunk.ElemArgs{Compute: tensor.Float64}},
		chunk.ExprInstr{Op: chunk.ExprReduce, Kind: tensor.OpSum, Dst: -1, Src: []int{3}, DType: tensor.Float64, Axes: []int{1, 2}})
	keep, _ := elem.KeepShape(shape, []bool{false, true, true})
	return &chunk.Op{Kind: chunk.KindExpr, Inputs: []int{0, 1}, Shape: keep, DType: tensor.Float64,
		Args: chunk.ExprArgs{Shape: slices.Clone(shape), Block: 4096, Regs: 4, Code: code, Members: []string{"multiply", "sum.map"}}}
}

// TestStreamExpr runs fuse(from_zarr+expr) of blosc chunks (float32 and
// float64, a climate chunk of 12 blosc blocks, chunks whose blocks are
// no multiple of the program's) by streamExpr and checks its chunk
// against the general path's (the chunk read, then the program) to the
// bit; a zstd chunk and a missing file are declined, and the fuse op
// still runs by the general path.
func TestStreamExpr(t *testing.T) {
	dir, ctx := dataDir(t)
	seed := uint64(40)
	for _, c := range []struct {
		dt         tensor.DType
		shape      []int
		compressor string
		streams    bool
	}{
		{tensor.Float32, []int{24, 181, 360}, "blosc", true},
		{tensor.Float32, []int{7, 13, 29}, "blosc", true},
		{tensor.Float32, []int{3, 37, 1891}, "blosc", true}, // pieces that split the program's blocks
		{tensor.Float64, []int{5, 31, 677}, "blosc", true},
		{tensor.Float32, []int{6, 10, 100}, "zstd", false},
		{tensor.Float32, []int{6, 10, 100}, "missing", false},
	} {
		seed++
		what := fmt.Sprintf("%v%v %s", c.dt, c.shape, c.compressor)
		comp := c.compressor
		if comp == "missing" {
			comp = "blosc"
		}
		read := streamStore(t, dir, c.dt, c.shape, comp, 2, seed)
		if c.compressor == "missing" {
			za := read.Args.(chunk.ZarrArgs)
			za.Path = "missing.zarr"
			read.Args = za
		}
		w := tensor.NewArray(tensor.Float64, []int{c.shape[1], 1})
		for i := range w.Float64s() {
			w.Float64s()[i] = math.Cos(float64(i) * 0.1)
		}
		e := weightedSumOp(c.dt, c.shape)
		x, err := Run(ctx, read, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Run(ctx, e, []*tensor.Array{x, w})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		me := *e
		me.Inputs = []int{0, 1} // the chunk before it, and the fuse op's input 0
		op := &chunk.Op{Kind: chunk.KindFuse, Inputs: []int{0}, Shape: e.Shape, DType: e.DType,
			Args: chunk.FuseArgs{Members: []chunk.Op{*read, me}}}
		members := op.Args.(chunk.FuseArgs).Members
		h, ok := streamExprHead(members)
		var got *tensor.Array
		if ok {
			got, ok, err = streamExpr(ctx, h, members, []*tensor.Array{w})
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		if ok != c.streams {
			t.Fatalf("%s: streamed %v, want %v", what, ok, c.streams)
		}
		if ok && !slices.Equal(got.Data, want.Data) {
			t.Errorf("%s: streamed %v, general path %v", what, got.Float64s()[:3], want.Float64s()[:3])
		}
		viaRun, err := Run(ctx, op, []*tensor.Array{w})
		if err != nil {
			t.Fatalf("%s: fuse op: %v", what, err)
		}
		if !slices.Equal(viaRun.Data, want.Data) {
			t.Errorf("%s: the fuse op made %v, the general path %v", what, viaRun.Float64s()[:3], want.Float64s()[:3])
		}
	}
}
