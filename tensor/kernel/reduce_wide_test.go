package kernel

import (
	"context"
	"math"
	"slices"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

// mapOp is the map op of reduction red over axes of a chunk of dt and
// shape.
func mapOp(red string, dt tensor.DType, shape, axes []int) *chunk.Op {
	_, fields := chunk.PartialSpec(red, dt, tensor.Float64)
	pdt, _ := chunk.PartialSpec(red, dt, tensor.Float64)
	pshape := slices.Clone(shape)
	for _, ax := range axes {
		pshape[ax] = 1
	}
	if fields > 1 {
		pshape = append(pshape, fields)
	}
	return &chunk.Op{Kind: chunk.StepKind(red, chunk.StepMap), Inputs: []int{0}, Shape: pshape, DType: pdt,
		Args: chunk.ReduceArgs{Op: red, In: dt, Axes: axes, Global: shape}}
}

// climateChunk is a float32 chunk of values around 280 with a spread of
// a few units, as a temperature field's.
func climateChunk(shape []int) *tensor.Array {
	x := tensor.NewArray(tensor.Float32, shape)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(280 + 20*math.Sin(float64(i)*0.37) + math.Cos(float64(i)*1.3))
	}
	return x
}

// A float32 chunk's mean, var and std partials, read in place, are those
// of the chunk cast to float64 first (what the kernels did before), to
// the bit, along every axis and several at once, alone and in a maps op.
func TestWideSumsEqualCast(t *testing.T) {
	shape := []int{24, 7, 13}
	x := climateChunk(shape)
	x64 := elem.CastArray(x, tensor.Float64)
	ctx := context.Background()
	for _, axes := range [][]int{{0}, {1}, {2}, {0, 1}, {1, 2}, {0, 2}, {0, 1, 2}} {
		for _, red := range []string{tensor.OpMean, tensor.OpVar, tensor.OpStd} {
			got, err := Run(ctx, mapOp(red, tensor.Float32, shape, axes), []*tensor.Array{x})
			if err != nil {
				t.Fatalf("%s %v: %v", red, axes, err)
			}
			want, err := Run(ctx, mapOp(red, tensor.Float64, shape, axes), []*tensor.Array{x64})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Data, want.Data) {
				t.Errorf("%s over %v of float32 differs from the float64 cast's", red, axes)
			}
		}
	}
}

// The time mean of a float32 chunk is the float64 mean of its values,
// far closer than a float32 accumulation would be.
func TestWideMeanAccurate(t *testing.T) {
	shape := []int{1000, 3, 5}
	x := climateChunk(shape)
	p, err := Run(context.Background(), mapOp(tensor.OpMean, tensor.Float32, shape, []int{0}), []*tensor.Array{x})
	if err != nil {
		t.Fatal(err)
	}
	v := x.Float32s()
	for j := range 15 {
		var s float64
		for i := range shape[0] {
			s += float64(v[i*15+j])
		}
		if got := p.Float64s()[j]; math.Abs(got-s) > 1e-9*math.Abs(s) {
			t.Errorf("element %d: partial %g, want %g", j, got, s)
		}
	}
}

// BenchmarkMeanMapFloat32Time reduces a chunk of a climate store (24 x
// 181 x 360 float32, 6 MB) along its leading axis, as the time mean does.
func BenchmarkMeanMapFloat32Time(b *testing.B) {
	for _, red := range []string{tensor.OpMean, tensor.OpStd} {
		b.Run(red, func(b *testing.B) {
			shape := []int{24, 181, 360}
			x := climateChunk(shape)
			op := mapOp(red, tensor.Float32, shape, []int{0})
			b.SetBytes(int64(len(x.Data)))
			for b.Loop() {
				if _, err := Run(context.Background(), op, []*tensor.Array{x}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
