package tensor

import (
	"bytes"
	"context"
	"encoding/gob"
	"slices"
	"testing"
)

// TestShapeOpsGob sends a chunk graph using every shape and matmul kernel
// through encoding/gob, as it would go to a worker, and checks that the
// decoded graph computes the same results.
func TestShapeOpsGob(t *testing.T) {
	c := newShapeCase()
	// x's three row chunks give the product five chunks along its
	// contracted axis: more than one "matmul" op takes, so a "matmul.sum"
	// adds their sums.
	x := c.input(randomArray(Float64, []int{6, 4}, 1), [][]int{{2, 2, 2}, {3, 1}})
	y := c.input(randomArray(Int32, []int{6, 4}, 2), [][]int{{3, 3}, {4}})
	xt := c.add(&Node{Op: OpTranspose, Inputs: []*Node{x}, Shape: []int{4, 6}, DType: Float64, Attrs: Attrs{Perm: []int{1, 0}}})
	s := c.add(&Node{Op: OpSlice, Inputs: []*Node{xt}, Shape: []int{4, 3}, DType: Float64, Attrs: Attrs{Slices: []Slice{{3, -1, 4}, {0, 2, 3}}}})
	cc := c.add(&Node{Op: OpConcat, Inputs: []*Node{x, y}, Shape: []int{12, 4}, DType: Float64, Attrs: Attrs{Axes: []int{0}}})
	r := c.add(&Node{Op: OpReshape, Inputs: []*Node{cc}, Shape: []int{4, 12}, DType: Float64})
	mm := c.add(&Node{Op: OpMatmul, Inputs: []*Node{r, cc}, Shape: []int{4, 4}, DType: Float64})
	// Empty chunks: ops whose arguments are zero values.
	e := c.add(&Node{Op: OpSlice, Inputs: []*Node{x}, Shape: []int{0, 4}, DType: Float64, Attrs: Attrs{Slices: []Slice{{0, 1, 0}, {0, 1, 4}}}})
	er := c.add(&Node{Op: OpReshape, Inputs: []*Node{e}, Shape: []int{2, 0}, DType: Float64})
	g := &Graph{Nodes: c.nodes, Outputs: []Output{{Name: "s", Node: s}, {Name: "mm", Node: mm}, {Name: "er", Node: er}}}
	cg, err := Tile(g, c.env)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, op := range cg.Ops {
		kinds[op.Kind] = true
		if op.Kind == "matmul" && op.Node != mm.ID {
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
	var back ChunkGraph
	if err := gob.NewDecoder(&buf).Decode(&back); err != nil {
		t.Fatal(err)
	}
	stored := func(id uint64) (*Array, error) { return c.stored[id], nil }
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
