package tensortest

import (
	"context"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec"
)

func TestCreate(t *testing.T) {
	type tc struct {
		name   string
		op     string
		dt     tensor.DType
		shape  []int
		chunks [][]int
		attrs  spec.Attrs
		want   []float64
	}
	tests := []tc{
		{"full f64", tensor.OpFull, tensor.Float64, []int{2, 3}, [][]int{{1, 1}, {2, 1}}, spec.Attrs{Value: 2.5}, []float64{2.5, 2.5, 2.5, 2.5, 2.5, 2.5}},
		{"full f32", tensor.OpFull, tensor.Float32, []int{3}, [][]int{{3}}, spec.Attrs{Value: 0.5}, []float64{0.5, 0.5, 0.5}},
		{"full i32", tensor.OpFull, tensor.Int32, []int{3}, [][]int{{2, 1}}, spec.Attrs{IntValue: -7}, []float64{-7, -7, -7}},
		{"full i64", tensor.OpFull, tensor.Int64, []int{2}, [][]int{{1, 1}}, spec.Attrs{IntValue: 1 << 40}, []float64{1 << 40, 1 << 40}},
		{"full bool", tensor.OpFull, tensor.Bool, []int{2}, [][]int{{2}}, spec.Attrs{IntValue: 1}, []float64{1, 1}},
		{"empty", tensor.OpFull, tensor.Float64, []int{0, 3}, [][]int{{0}, {3}}, spec.Attrs{}, nil},
		{"arange float", tensor.OpArange, tensor.Float64, []int{9}, [][]int{{4, 4, 1}}, spec.Attrs{Start: 0.1, Step: 0.1},
			[]float64{0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6, 0.7000000000000001, 0.8, 0.9}},
		{"arange int", tensor.OpArange, tensor.Int64, []int{8}, [][]int{{3, 3, 2}}, spec.Attrs{Start: -3, Step: 2}, []float64{-3, -1, 1, 3, 5, 7, 9, 11}},
		{"arange int from floats", tensor.OpArange, tensor.Int64, []int{5}, [][]int{{2, 3}}, spec.Attrs{Start: 0.5, Step: 1.5}, []float64{0, 2, 4, 6, 8}},
		{"arange float32", tensor.OpArange, tensor.Float32, []int{9}, [][]int{{5, 4}}, spec.Attrs{Start: 0.1, Step: 0.1},
			[]float64{0.10000000149011612, 0.20000000298023224, 0.30000001192092896, 0.4000000059604645, 0.5, 0.6000000238418579, 0.7000000476837158, 0.800000011920929, 0.9000000357627869}},
		{"arange int32", tensor.OpArange, tensor.Int32, []int{4}, [][]int{{1, 1, 1, 1}}, spec.Attrs{Start: 5, Step: -1}, []float64{5, 4, 3, 2}},
		{"linspace", tensor.OpLinspace, tensor.Float64, []int{7}, [][]int{{2, 2, 2, 1}}, spec.Attrs{Start: 0, Step: 1.0 / 6},
			[]float64{0.0, 0.16666666666666666, 0.3333333333333333, 0.5, 0.6666666666666666, 0.8333333333333333, 1.0}},
		{"eye k=1", tensor.OpEye, tensor.Float64, []int{4, 5}, [][]int{{3, 1}, {2, 2, 1}}, spec.Attrs{K: 1},
			[]float64{0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1}},
		{"eye k=-2 int", tensor.OpEye, tensor.Int64, []int{5, 3}, [][]int{{1, 1, 1, 1, 1}, {1, 1, 1}}, spec.Attrs{K: -2},
			[]float64{0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}},
	}
	for _, c := range tests {
		t.Run(c.name, func(t *testing.T) {
			b := newGraph(t)
			n := b.gen(c.op, c.dt, c.shape, c.chunks, c.attrs)
			got := b.compute(n)[0]
			checkArray(t, c.name, got, c.dt, c.shape, c.want, 0)
		})
	}
}

func TestScalar(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Bool, tensor.Int32, tensor.Int64, tensor.Float32, tensor.Float64} {
		b := newGraph(t)
		got := b.compute(b.scalar(dt, 1, false))[0]
		checkArray(t, "scalar "+dt.String(), got, dt, []int{}, []float64{1}, 0)
	}
}

func TestCreateBadArgs(t *testing.T) {
	ctx := context.Background()
	bad := []*chunk.Op{
		{Kind: chunk.KindFull, Shape: []int{2}, DType: tensor.Float64, Args: chunk.ElemArgs{}},
		{Kind: chunk.KindFull, Shape: []int{2}, DType: tensor.Float64, Args: chunk.GenArgs{Offset: []int{1}, Global: []int{2}}},
		{Kind: chunk.KindArange, Shape: []int{2, 2}, DType: tensor.Float64, Args: chunk.GenArgs{Offset: []int{0, 0}, Global: []int{2, 2}}},
		{Kind: chunk.KindEye, Shape: []int{2}, DType: tensor.Float64, Args: chunk.GenArgs{Offset: []int{0}, Global: []int{2}}},
		{Kind: chunk.KindRandint, Shape: []int{2}, DType: tensor.Int64, Args: chunk.GenArgs{Offset: []int{0}, Global: []int{2}, Low: 3, High: 3}},
		{Kind: chunk.KindNormal, Shape: []int{2}, DType: tensor.Float64, Args: chunk.GenArgs{Offset: []int{0}, Global: []int{2}, Step: -1}},
	}
	for _, op := range bad {
		if _, err := kernel.Run(ctx, op, nil); err == nil {
			t.Errorf("%s with %+v: no error", op.Kind, op.Args)
		}
	}
}
