package tensortest

import (
	"context"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/tile"
)

type mapEnv = spec.Env

// TestRechunkRoundTrip stores a 5x7 array as 2x3 chunks, rechunks it to
// ragged 3x4 chunks and gathers it back.
func TestRechunkRoundTrip(t *testing.T) {
	src := tensor.NewArray(tensor.Int64, []int{5, 7})
	for i := range src.Int64s() {
		src.Int64s()[i] = int64(i)
	}
	for _, tc := range []struct{ from, to [][]int }{
		{[][]int{{2, 2, 1}, {3, 3, 1}}, [][]int{{3, 2}, {4, 3}}},
		{[][]int{{5}, {7}}, [][]int{{1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1}}},
		{[][]int{{1, 4}, {6, 1}}, [][]int{{5}, {7}}},
	} {
		stored := map[uint64]*tensor.Array{}
		tt := &tensor.TiledTensor{Shape: src.Shape, DType: tensor.Int64, Chunks: tc.from}
		offs := tensor.ChunkOffsets(tc.from)
		grid := tensor.GridShape(tc.from)
		for k := 0; k < tensor.NumElements(grid); k++ {
			idx := tensor.Unravel(k, grid)
			shape := tensor.ChunkShape(tc.from, grid, k)
			sel := make([]tensor.Slice, 2)
			for ax := range sel {
				sel[ax] = tensor.Slice{Start: offs[ax][idx[ax]], Step: 1, Len: shape[ax]}
			}
			c := tensor.NewArray(tensor.Int64, shape)
			tensor.CopyStrided(c, []int{0, 0}, src, sel)
			id := uint64(100 + k)
			stored[id] = c
			tt.Keys = append(tt.Keys, id)
		}
		in := &spec.Node{ID: 0, Op: tensor.OpInput, Shape: src.Shape, DType: tensor.Int64, Chunks: tc.from, Attrs: spec.Attrs{Name: "x"}}
		rc := &spec.Node{ID: 1, Op: tensor.OpRechunk, Inputs: []*spec.Node{in}, Shape: src.Shape, DType: tensor.Int64, Chunks: tc.to}
		g := &spec.Graph{Nodes: []*spec.Node{in, rc}, Outputs: []spec.Output{{Name: "y", Node: rc}}}
		cg, err := tile.Graph(g, mapEnv{"x": tt})
		if err != nil {
			t.Fatal(err)
		}
		outs, err := Compute(context.Background(), cg, func(id uint64) (*tensor.Array, error) { return stored[id], nil })
		if err != nil {
			t.Fatal(err)
		}
		got := outs[0].Int64s()
		for i, v := range src.Int64s() {
			if got[i] != v {
				t.Fatalf("%v -> %v: element %d = %d, want %d", tc.from, tc.to, i, got[i], v)
			}
		}
	}
}
