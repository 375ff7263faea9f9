package kernel

import (
	"context"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// TestAssembleClearsOnlyGaps assembles a 2 x 4 chunk into memory full of
// garbage (a reused buffer), from two 2 x 2 pieces that cover it and from
// one that leaves half of it: the covered chunk is the pieces, the other
// has zeros where no piece goes.
func TestAssembleClearsOnlyGaps(t *testing.T) {
	left, right := tensor.NewArray(tensor.Float64, []int{2, 2}), tensor.NewArray(tensor.Float64, []int{2, 2})
	for i := range 4 {
		left.Float64s()[i], right.Float64s()[i] = float64(i+1), float64(i+11)
	}
	whole := []tensor.Slice{{Start: 0, Step: 1, Len: 2}, {Start: 0, Step: 1, Len: 2}}
	for _, tc := range []struct {
		pieces []chunk.Piece
		want   []float64
	}{
		{[]chunk.Piece{{In: 0, Src: whole, Dst: []int{0, 0}}, {In: 1, Src: whole, Dst: []int{0, 2}}}, []float64{1, 2, 11, 12, 3, 4, 13, 14}},
		{[]chunk.Piece{{In: 1, Src: whole, Dst: []int{0, 2}}}, []float64{0, 0, 11, 12, 0, 0, 13, 14}},
	} {
		ctx := tensor.WithAlloc(context.Background(), func(dt tensor.DType, shape []int, zero bool) *tensor.Array {
			a := tensor.NewArray(dt, shape)
			for i := range a.Data {
				a.Data[i] = 0xff
			}
			if zero {
				clear(a.Data)
			}
			return a
		})
		op := &chunk.Op{Kind: chunk.KindAssemble, Shape: []int{2, 4}, DType: tensor.Float64, Args: chunk.AssembleArgs{Pieces: tc.pieces}}
		out, err := assembleKernel(ctx, op, []*tensor.Array{left, right})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range out.Float64s() {
			if v != tc.want[i] {
				t.Fatalf("%d pieces: %v, want %v", len(tc.pieces), out.Float64s(), tc.want)
			}
		}
	}
}
