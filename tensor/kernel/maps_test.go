package kernel

import (
	"context"
	"math"
	"slices"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// mapsOp is a maps op of the mean, var and std maps over axes of a
// float64 chunk of shape.
func mapsOp(shape []int, axes []int) *chunk.Op {
	pshape := slices.Clone(shape)
	for _, ax := range axes {
		pshape[ax] = 1
	}
	var members []chunk.Op
	total := 0
	for _, c := range []struct {
		op     string
		fields int
	}{{tensor.OpMean, 1}, {tensor.OpVar, 3}, {tensor.OpStd, 3}} {
		s := slices.Clone(pshape)
		if c.fields > 1 {
			s = append(s, c.fields)
		}
		members = append(members, chunk.Op{Kind: chunk.StepKind(c.op, chunk.StepMap), Inputs: []int{0}, Shape: s, DType: tensor.Float64,
			Args: chunk.ReduceArgs{Op: c.op, In: tensor.Float64, Axes: axes, Global: shape}})
		total += tensor.NumElements(s)
	}
	return &chunk.Op{Kind: chunk.KindMaps, Inputs: []int{0}, Shape: []int{total}, DType: tensor.Float64, Args: chunk.MapsArgs{Members: members}}
}

// The maps op's partials are its members' own, to the bit, packed in
// order, along every axis.
func TestMapsKernelPacksMembers(t *testing.T) {
	shape := []int{37, 5, 11}
	x := tensor.NewArray(tensor.Float64, shape)
	for i, v := range x.Float64s() {
		x.Float64s()[i] = v + 1e4 + 3*math.Sin(float64(i))
	}
	for _, axes := range [][]int{{0}, {1}, {2}, {0, 2}} {
		op := mapsOp(shape, axes)
		got, err := Run(context.Background(), op, []*tensor.Array{x})
		if err != nil {
			t.Fatal(err)
		}
		at := 0
		for i := range op.Args.(chunk.MapsArgs).Members {
			m := op.Args.(chunk.MapsArgs).Members[i]
			want, err := Run(context.Background(), &m, []*tensor.Array{x})
			if err != nil {
				t.Fatal(err)
			}
			n := len(want.Data)
			if !slices.Equal(got.Data[at:at+n], want.Data) {
				t.Errorf("axes %v: member %s differs from its map op", axes, m.Kind)
			}
			at += n
		}
		if at != len(got.Data) {
			t.Errorf("axes %v: %d bytes of partials in a chunk of %d", axes, at, len(got.Data))
		}
	}
	bad := mapsOp(shape, []int{0})
	bad.Shape = []int{3}
	if _, err := Run(context.Background(), bad, []*tensor.Array{x}); err == nil {
		t.Error("a maps op of the wrong size ran")
	}
}

// BenchmarkMapsMeanVar reduces a store chunk of bench's W7 (5000 x 1000
// float64, 40 MB) along axis 0 to the mean's and variance's partials, as
// its fused from_zarr does after decoding: two passes over the chunk.
func BenchmarkMapsMeanVar(b *testing.B) {
	shape := []int{5000, 1000}
	x := tensor.NewArray(tensor.Float64, shape)
	for i := range x.Float64s() {
		x.Float64s()[i] = 5 + math.Sin(float64(i))
	}
	op := mapsOp(shape, []int{0})
	ma := op.Args.(chunk.MapsArgs)
	ma.Members = ma.Members[:2]
	op.Args = ma
	op.Shape = []int{5 * 1000}
	b.SetBytes(int64(len(x.Data)))
	for b.Loop() {
		if _, err := Run(context.Background(), op, []*tensor.Array{x}); err != nil {
			b.Fatal(err)
		}
	}
}
