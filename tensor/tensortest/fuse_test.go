package tensortest

import (
	"bytes"
	"context"
	"encoding/gob"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
)

// copyOp is an assemble op that copies all of its single input.
func copyOp(key int, in int, shape []int) *chunk.Op {
	return &chunk.Op{Key: key, Kind: chunk.KindAssemble, Inputs: []int{in}, Shape: shape, DType: tensor.Int64,
		Args: chunk.AssembleArgs{Pieces: []chunk.Piece{{In: 0, Src: tensor.Whole(shape), Dst: make([]int, len(shape))}}}}
}

func TestFuseChains(t *testing.T) {
	shape := []int{4}
	src := tensor.NewArray(tensor.Int64, shape)
	copy(src.Int64s(), []int64{1, 2, 3, 4})
	// 0 stored -> 1 -> 2 -> 3 (output)     a chain: 1,2,3 fuse
	// 0 -> 4 -> 5, 4 -> 6                   4 branches: 5 and 6 stay apart
	g := &chunk.Graph{Ops: []*chunk.Op{
		{Key: 0, Kind: chunk.KindStored, Stored: 9, Shape: shape, DType: tensor.Int64},
		copyOp(1, 0, shape), copyOp(2, 1, shape), copyOp(3, 2, shape),
		copyOp(4, 0, shape), copyOp(5, 4, shape), copyOp(6, 4, shape),
	}}
	g.Outputs = []tensor.TiledTensor{
		{Name: "a", Shape: shape, DType: tensor.Int64, Chunks: [][]int{{4}}, Keys: []uint64{3}},
		{Name: "b", Shape: shape, DType: tensor.Int64, Chunks: [][]int{{4}}, Keys: []uint64{5}},
		{Name: "c", Shape: shape, DType: tensor.Int64, Chunks: [][]int{{4}}, Keys: []uint64{6}},
	}
	f := fuse.Chains(g)
	// stored, fuse(1+2+3), 4, 5, 6
	if len(f.Ops) != 5 {
		for _, op := range f.Ops {
			t.Logf("%d %s %v", op.Key, op.Name(), op.Inputs)
		}
		t.Fatalf("fused graph has %d ops, want 5", len(f.Ops))
	}
	if got := f.Ops[1].Name(); got != "fuse(assemble+assemble+assemble)" {
		t.Errorf("fused members %q", got)
	}
	// The fused op travels to workers as gob.
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(f.Ops[1]); err != nil {
		t.Fatal(err)
	}
	var dec chunk.Op
	if err := gob.NewDecoder(&buf).Decode(&dec); err != nil {
		t.Fatal(err)
	}
	f.Ops[1] = &dec
	outs, err := Compute(context.Background(), f, func(uint64) (*tensor.Array, error) { return src, nil })
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		for j, v := range o.Int64s() {
			if v != src.Int64s()[j] {
				t.Fatalf("output %d element %d = %d, want %d", i, j, v, src.Int64s()[j])
			}
		}
	}
}
