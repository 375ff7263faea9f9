package tensortest

import (
	"bytes"
	"context"
	"encoding/gob"
	"slices"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
	"marsfs/tensor/tile"
)

// TestShapeOpsGob sends a chunk graph using every shape and matmul kernel
// through encoding/gob, as it would go to a worker, and checks that the
// decoded graph computes the same results.
func TestShapeOpsGob(t *testing.T) {
	c := newShapeCase()
	// x's three row chunks give the product five chunks along its
	// contracted axis: more than one "matmul" op takes, so a "matmul.sum"
	// adds their sums.
	x := c.input(randomArray(tensor.Float64, []int{6, 4}, 1), [][]int{{2, 2, 2}, {3, 1}})
	y := c.input(randomArray(tensor.Int32, []int{6, 4}, 2), [][]int{{3, 3}, {4}})
	xt := c.add(&spec.Node{Op: tensor.OpTranspose, Inputs: []*spec.Node{x}, Shape: []int{4, 6}, DType: tensor.Float64, Attrs: spec.Attrs{Perm: []int{1, 0}}})
	s := c.add(&spec.Node{Op: tensor.OpSlice, Inputs: []*spec.Node{xt}, Shape: []int{4, 3}, DType: tensor.Float64, Attrs: spec.Attrs{Slices: []tensor.Slice{{Start: 3, Step: -1, Len: 4}, {Start: 0, Step: 2, Len: 3}}}})
	cc := c.add(&spec.Node{Op: tensor.OpConcat, Inputs: []*spec.Node{x, y}, Shape: []int{12, 4}, DType: tensor.Float64, Attrs: spec.Attrs{Axes: []int{0}}})
	r := c.add(&spec.Node{Op: tensor.OpReshape, Inputs: []*spec.Node{cc}, Shape: []int{4, 12}, DType: tensor.Float64})
	mm := c.add(&spec.Node{Op: tensor.OpMatmul, Inputs: []*spec.Node{r, cc}, Shape: []int{4, 4}, DType: tensor.Float64})
	// Empty chunks: ops whose arguments are zero values.
	e := c.add(&spec.Node{Op: tensor.OpSlice, Inputs: []*spec.Node{x}, Shape: []int{0, 4}, DType: tensor.Float64, Attrs: spec.Attrs{Slices: []tensor.Slice{{Start: 0, Step: 1, Len: 0}, {Start: 0, Step: 1, Len: 4}}}})
	er := c.add(&spec.Node{Op: tensor.OpReshape, Inputs: []*spec.Node{e}, Shape: []int{2, 0}, DType: tensor.Float64})
	g := &spec.Graph{Nodes: c.nodes, Outputs: []spec.Output{{Name: "s", Node: s}, {Name: "mm", Node: mm}, {Name: "er", Node: er}}}
	cg, err := tile.Graph(g, c.env)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, op := range cg.Ops {
		kinds[string(op.Kind)] = true
		if op.Kind == chunk.KindMatmul && int(op.Node) != mm.ID {
			t.Errorf("matmul op %d records node %d, want %d", op.Key, op.Node, mm.ID)
		}
	}
	for _, k := range []string{"transpose", "assemble", "convert", "reshape", "matmul", "matmul.sum"} {
		if !kinds[k] {
			t.Errorf("graph has no %q op", k)
		}
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(cg); err != nil {
		t.Fatal(err)
	}
	var back chunk.Graph
	if err := gob.NewDecoder(&buf).Decode(&back); err != nil {
		t.Fatal(err)
	}
	stored := func(id uint64) (*tensor.Array, error) { return c.stored[id], nil }
	want, err := Compute(context.Background(), cg, stored)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Compute(context.Background(), &back, stored)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 3 || !slices.Equal(want[2].Shape, []int{2, 0}) {
		t.Fatalf("outputs %v", want)
	}
	for i := range want {
		if err := sameArray(got[i], want[i]); err != nil {
			t.Errorf("output %d after gob: %v", i, err)
		}
	}
}
