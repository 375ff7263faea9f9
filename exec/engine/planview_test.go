package engine

import (
	"testing"

	"marsfs/exec/core"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// TestMakePlan completes a placement by hand: later operands go where most
// of their input bytes are, and inputs from elsewhere count as transfer.
func TestMakePlan(t *testing.T) {
	op := func(k int, shape []int, ins ...int) *chunk.Op {
		return &chunk.Op{Key: k, Kind: "k", Inputs: ins, Shape: shape, DType: tensor.Float64}
	}
	cg := &chunk.Graph{Ops: []*chunk.Op{
		op(0, []int{10}),       // initial on b
		op(1, []int{20}),       // initial on a
		op(2, []int{5}),        // stored on b
		op(3, []int{10}, 0, 1), // 160 bytes on a beat 80 on b: a
		op(4, []int{10}, 3, 2), // 80 on a, 40 on b: a
		op(5, []int{1}),        // initial, unplaced (no workers for it)
	}}
	cg.Ops[2].Stored = 99
	pl := core.Placement{Rank: []int32{5, 4, 3, 2, 1, 0},
		Workers: []core.WorkerLoad{{Name: "b", Slots: 1}, {Name: "a", Slots: 2}},
		Worker:  core.Assign([]string{0: "b", 1: "a", 2: "b"})}
	p := makePlan(cg, pl)
	if got := p.Workers; len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("Workers = %v, want [a b]", got)
	}
	if got := p.Initial; len(got) != 2 || got[0] != 1 || got[1] != 1 {
		t.Errorf("Initial = %v, want [1 1] (stored ops are not initial)", got)
	}
	want := []string{"b", "a", "b", "a", "a", ""}
	for k, w := range want {
		if p.Worker[k] != w {
			t.Errorf("Worker[%d] = %q, want %q", k, p.Worker[k], w)
		}
	}
	// op 0 (80 bytes) crosses to a for op 3, op 2 (40 bytes) for op 4.
	if p.TransferBytes != 120 {
		t.Errorf("TransferBytes = %d, want 120", p.TransferBytes)
	}
	if p.Rank[0] != 5 {
		t.Errorf("Rank not kept: %v", p.Rank)
	}
}

// TestProjectPeaks projects the memory of a placed graph: chunks held from
// their op until their last reader, outputs to the end, stored chunks not
// counted, each on its worker.
func TestProjectPeaks(t *testing.T) {
	op := func(k int, n int, ins ...int) *chunk.Op {
		return &chunk.Op{Key: k, Kind: "k", Inputs: ins, Shape: []int{n}, DType: tensor.Int64}
	}
	// a: 0 -> 1 -> 3 (kept); b: 2, read by 3; 4 stored on b, read by 2.
	cg := &chunk.Graph{Ops: []*chunk.Op{
		op(0, 10),      // a, 80 B
		op(1, 5, 0),    // a, 40 B; 0 freed after it
		op(2, 20, 4),   // b, 160 B
		op(3, 1, 1, 2), // a, 8 B, kept; 1 and 2 freed after it
		op(4, 100),     // stored on b: not counted
	}}
	cg.Ops[4].Stored = 7
	cg.Outputs = []tensor.TiledTensor{{Shape: []int{1}, DType: tensor.Int64, Chunks: [][]int{{1}}, Keys: []uint64{3}}}
	pl := core.Placement{Rank: []int32{1, 2, 0, 3, 4},
		Workers: []core.WorkerLoad{{Name: "a", Slots: 1}, {Name: "b", Slots: 1}},
		Worker:  core.Assign([]string{"a", "a", "b", "a", "b"})}
	p := makePlan(cg, pl)
	// On a: 0 (80) then 1 (80+40, then 0 goes: 40), 3 (40+8, then 1
	// goes): peak 120. On b: 2 (160) until 3 has run.
	if len(p.PeakBytes) != 2 || p.PeakBytes[0] != 120 || p.PeakBytes[1] != 160 {
		t.Errorf("PeakBytes = %v, want [120 160]", p.PeakBytes)
	}
}
