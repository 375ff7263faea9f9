package core

import (
	"testing"
)

// TestCoreDepth checks the bound on the ops outstanding at a worker: with
// two slots and depth 1 a worker gets two of four independent ops, the rest
// wait at the core, and a worker that comes up takes them.
func TestCoreDepth(t *testing.T) {
	h := newHarness(t, graph([][]int{nil, nil, nil, nil, {0, 1, 2, 3}}), []int{4}, Options{Depth: 1}, "w1")
	h.apply(h.c.startJob())
	if len(h.runs) != 2 {
		t.Fatalf("two-slot worker got %d ops at depth 1", len(h.runs))
	}
	h.apply(h.c.workerUp("w2", 2))
	if len(h.runs) != 4 {
		t.Fatalf("after w2 came up %d ops are out", len(h.runs))
	}
	on := map[string]int{}
	for _, r := range h.runs {
		on[r.Worker]++
	}
	if on["w1"] != 2 || on["w2"] != 2 {
		t.Errorf("ops per worker %v", on)
	}
	h.finishAll()
	if !h.done || h.err != nil {
		t.Errorf("job done %v, %v", h.done, h.err)
	}
}
