package tensortest

import (
	"bytes"
	"context"
	"encoding/gob"
	"slices"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel"
	"marsfs/tensor/tile"
)

func TestConstGraph(t *testing.T) {
	a := tensor.NewArray(tensor.Int32, []int{5, 7})
	for i := range a.Int32s() {
		a.Int32s()[i] = int32(i * 3)
	}
	for _, chunks := range [][][]int{nil, {{5}, {7}}, {{2, 2, 1}, {3, 4}}, {{1, 1, 1, 1, 1}, {7}}} {
		cg, err := tile.Const("x", a, chunks)
		if err != nil {
			t.Fatal(err)
		}
		if len(cg.Outputs) != 1 || cg.Outputs[0].Name != "x" {
			t.Fatalf("outputs %+v", cg.Outputs)
		}
		if want := tensor.NumElements(tensor.GridShape(cg.Outputs[0].Chunks)); len(cg.Ops) != want {
			t.Fatalf("%d ops for %d chunks", len(cg.Ops), want)
		}
		// The ops must survive encoding/gob, as they do on their way to a worker.
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(cg); err != nil {
			t.Fatal(err)
		}
		var back chunk.Graph
		if err := gob.NewDecoder(&buf).Decode(&back); err != nil {
			t.Fatal(err)
		}
		outs, err := Compute(context.Background(), &back, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(outs[0].Data, a.Data) || !slices.Equal(outs[0].Shape, a.Shape) || outs[0].DType != tensor.Int32 {
			t.Fatalf("chunks %v: gathered %v%v %v", chunks, outs[0].DType, outs[0].Shape, outs[0].Int32s())
		}
	}
	// The chunks hold copies: changing a afterwards does not change them.
	cg, err := tile.Const("x", a, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Int32s()[0] = 99
	if got := cg.Ops[0].Args.(chunk.ConstArgs).Data[0]; got != 0 {
		t.Fatalf("const chunk aliases the array: %d", got)
	}
}

func TestConstGraphErrors(t *testing.T) {
	a := tensor.NewArray(tensor.Float64, []int{4, 3})
	for _, tc := range []struct {
		chunks [][]int
		want   string
	}{
		{[][]int{{4}}, "1 axes"},
		{[][]int{{2, 1}, {3}}, "cover 3 elements of axis 0"},
		{[][]int{{4, 0}, {3}}, "chunk of size 0"},
		{[][]int{{5, -1}, {3}}, "chunk of size -1"},
		{[][]int{{4}, {}}, "no chunks along axis 1"},
	} {
		if _, err := tile.Const("x", a, tc.chunks); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("chunks %v: err = %v, want %q", tc.chunks, err, tc.want)
		}
	}
	bad := &tensor.Array{DType: tensor.Float64, Shape: []int{2}, Data: make([]byte, 3)}
	if _, err := tile.Const("x", bad, nil); err == nil {
		t.Error("ConstGraph accepted an array with the wrong data length")
	}
	op := &chunk.Op{Kind: chunk.KindConst, Shape: []int{2}, DType: tensor.Float64, Args: chunk.ConstArgs{Data: make([]byte, 8)}}
	if _, err := kernel.Run(context.Background(), op, nil); err == nil {
		t.Error("const kernel accepted 8 bytes for 2 float64s")
	}
}
