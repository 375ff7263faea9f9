package tensor

import (
	"context"
	"testing"
)

type mapEnv map[string]*TiledTensor

func (m mapEnv) Lookup(name string) (*TiledTensor, bool) { t, ok := m[name]; return t, ok }

// TestRechunkRoundTrip stores a 5x7 array as 2x3 chunks, rechunks it to
// ragged 3x4 chunks and gathers it back.
func TestRechunkRoundTrip(t *testing.T) {
	src := NewArray(Int64, []int{5, 7})
	for i := range src.Int64s() {
		src.Int64s()[i] = int64(i)
	}
	for _, tc := range []struct{ from, to [][]int }{
		{[][]int{{2, 2, 1}, {3, 3, 1}}, [][]int{{3, 2}, {4, 3}}},
		{[][]int{{5}, {7}}, [][]int{{1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1}}},
		{[][]int{{1, 4}, {6, 1}}, [][]int{{5}, {7}}},
	} {
		stored := map[uint64]*Array{}
		tt := &TiledTensor{Shape: src.Shape, DType: Int64, Chunks: tc.from}
		offs := ChunkOffsets(tc.from)
		grid := GridShape(tc.from)
		for k := 0; k < NumElements(grid); k++ {
			idx := unravel(k, grid)
			shape := chunkShape(tc.from, grid, k)
			sel := make([]Slice, 2)
			for ax := range sel {
				sel[ax] = Slice{Start: offs[ax][idx[ax]], Step: 1, Len: shape[ax]}
			}
			c := NewArray(Int64, shape)
			copyStrided(c, []int{0, 0}, src, sel)
			id := uint64(100 + k)
			stored[id] = c
			tt.Keys = append(tt.Keys, id)
		}
		in := &Node{ID: 0, Op: OpInput, Shape: src.Shape, DType: Int64, Chunks: tc.from, Attrs: Attrs{Name: "x"}}
		rc := &Node{ID: 1, Op: OpRechunk, Inputs: []*Node{in}, Shape: src.Shape, DType: Int64, Chunks: tc.to}
		g := &Graph{Nodes: []*Node{in, rc}, Outputs: []Output{{Name: "y", Node: rc}}}
		cg, err := Tile(g, mapEnv{"x": tt})
		if err != nil {
			t.Fatal(err)
		}
		outs, err := Compute(context.Background(), cg, func(id uint64) (*Array, error) { return stored[id], nil })
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
