package core

import (
	"slices"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// TestUnitsFormed checks the units of a tree reduction over small chunks:
// each op in one unit at most, a unit's ops in rank order and within the
// bounds, only its first op reading chunks made outside it, and the leaves
// of a unit all assigned to one worker.
func TestUnitsFormed(t *testing.T) {
	g := graph(tree(64))
	h := newHarness(t, g, nil, Options{UnitOps: 8}, "w1", "w2")
	assign := map[int]string{}
	h.apply(h.c.startJob())
	for k := range g.Ops {
		if h.c.ops[k].initial {
			assign[k] = h.c.wnames[h.c.ops[k].worker]
		}
	}
	if len(h.c.units) == 0 {
		t.Fatal("no units")
	}
	seen := map[int32]bool{}
	grouped := 0
	for u, ms := range h.c.units {
		if len(ms) < 2 || len(ms) > 8 {
			t.Errorf("unit %d has %d ops", u, len(ms))
		}
		leafWorker := ""
		for i, m := range ms {
			if seen[m] {
				t.Errorf("op %d in two units", m)
			}
			seen[m] = true
			grouped++
			if h.c.unitOf[m] != int32(u) {
				t.Errorf("op %d of unit %d says unit %d", m, u, h.c.unitOf[m])
			}
			if i > 0 && h.c.rank[m] <= h.c.rank[ms[i-1]] {
				t.Errorf("unit %d not in rank order", u)
			}
			if h.c.ops[m].initial {
				if leafWorker != "" && assign[int(m)] != leafWorker {
					t.Errorf("unit %d has leaves of %s and %s", u, leafWorker, assign[int(m)])
				}
				leafWorker = assign[int(m)]
			}
			if i == 0 {
				continue
			}
			for _, in := range g.Ops[m].Inputs {
				if h.c.unitOf[in] != int32(u) {
					t.Errorf("op %d, not first in unit %d, reads op %d of unit %d", m, u, in, h.c.unitOf[in])
				}
			}
		}
	}
	if grouped < len(g.Ops)/2 {
		t.Errorf("only %d of %d ops in units", grouped, len(g.Ops))
	}
	h.finishAll()
	if !h.done || h.err != nil {
		t.Fatalf("done %v, %v: %s", h.done, h.err, h.states())
	}
	if h.units == 0 {
		t.Error("no unit was sent")
	}
}

// TestUnitDispatch follows one unit: it goes out whole to one worker, the
// inputs its ops make located there, counts once against the worker's room,
// and frees it when its last op is reported.
func TestUnitDispatch(t *testing.T) {
	// A chain of four ops and a second chain: each one unit.
	g := graph([][]int{nil, {0}, {1}, {2}, nil, {4}})
	h := newHarness(t, g, []int{3, 5}, Options{UnitOps: 4, Depth: 1, RootDepth: 1}, "w1")
	h.apply(h.c.workerUp("w1", 1))
	out := h.c.startJob()
	h.apply(out)
	if len(out.Run) != 4 {
		t.Fatalf("%d ops sent, want the first unit's 4: %+v", len(out.Run), out.Run)
	}
	for i, r := range out.Run {
		if r.Key != i || r.Worker != "w1" || r.Attempt != 1 {
			t.Errorf("run %d: %+v", i, r)
		}
		if want := map[bool]int{true: 4, false: 0}[i == 0]; r.Unit != want {
			t.Errorf("run %d: unit %d, want %d", i, r.Unit, want)
		}
		if !r.Flush != (i < 3) {
			t.Errorf("run %d: flush %v (only the kept op's report is awaited)", i, r.Flush)
		}
	}
	if w := h.c.workers["w1"]; w.outstanding != 1 {
		t.Errorf("outstanding %d, want 1 unit", w.outstanding)
	}
	for k := 0; k < 3; k++ {
		h.finish(k)
		if len(h.runs) != 4 {
			t.Fatalf("op %d reported: more sent before the unit ended", k)
		}
	}
	h.finish(3)
	r, ok := h.runs[4]
	if !ok || r.Unit != 2 {
		t.Fatalf("second unit not sent once the first ended: %+v", h.runs)
	}
	h.finishAll()
	if !h.done || h.err != nil {
		t.Fatalf("done %v, %v: %s", h.done, h.err, h.states())
	}
}

// TestUnitFailure fails a unit's first op for good: the ops of the unit
// waiting for it are FATAL and called back from the worker, and the job
// ends without waiting for their reports.
func TestUnitFailure(t *testing.T) {
	g := graph([][]int{nil, {0}, {1}})
	h := newHarness(t, g, []int{2}, Options{UnitOps: 4}, "w1")
	h.apply(h.c.startJob())
	if h.units != 1 {
		t.Fatalf("%d units sent", h.units)
	}
	r := h.run(0)
	h.apply(h.c.opFailedFinal(0, r.Worker, r.Attempt, "bad arguments"))
	if !h.done || h.err == nil || !strings.Contains(h.err.Error(), "bad arguments") {
		t.Fatalf("done %v, %v", h.done, h.err)
	}
	if got := h.states(); got != "FATAL FATAL FATAL" {
		t.Errorf("states %s", got)
	}
	if !slices.Equal(h.cancels, []string{"1@w1", "2@w1"}) {
		t.Errorf("cancels %v", h.cancels)
	}
	// What the worker reports of them afterwards is stale.
	r1 := h.run(1)
	if o := h.c.opFailed(1, r1.Worker, r1.Attempt, "input chunk missing"); len(o.Events) != 0 || o.Done {
		t.Errorf("stale report changed the core: %+v", o)
	}
}

// TestLargeOpsAlone checks that ops estimated above an eighth of UnitCost
// join no unit.
func TestLargeOpsAlone(t *testing.T) {
	g := graph([][]int{nil, {0}, {1}})
	for _, op := range g.Ops {
		op.Shape = []int{1 << 18} // 2 MiB of float64
	}
	h := newHarness(t, g, []int{2}, Options{UnitOps: 4, UnitCost: 8 << 20}, "w1")
	h.apply(h.c.startJob())
	if len(h.c.units) != 0 {
		t.Errorf("%d units of large ops", len(h.c.units))
	}
	// A fused expression counts the values it generates.
	e := &chunk.Op{Kind: "expr", Shape: []int{1}, DType: tensor.Float64, Args: chunk.ExprArgs{Shape: []int{1 << 20}}}
	if held, work := opCost(g, e); held != 8 || work < 8<<20 {
		t.Errorf("expr over 2^20 values making a number costs %d held, %d work", held, work)
	}
	// So do the blocks a product draws and the chunk a fused chain passes
	// on, though the op reads nothing and makes a number.
	block := chunk.Op{Kind: tensor.OpRand, Shape: []int{512, 512}, DType: tensor.Float64, Args: chunk.GenArgs{Offset: []int{0, 0}, Global: []int{512, 512}}}
	mm := chunk.Op{Kind: "matmul", Shape: []int{512, 512}, DType: tensor.Float64, Args: chunk.MatmulArgs{Blocks: []chunk.Op{block, block}}}
	sum := chunk.Op{Kind: "sum.map", Inputs: []int{0}, Shape: []int{1}, DType: tensor.Float64}
	f := &chunk.Op{Kind: "fuse", Shape: []int{1}, DType: tensor.Float64, Args: chunk.FuseArgs{Members: []chunk.Op{mm, sum}}}
	if held, work := opCost(g, f); held != 8 || work != 3*512*512*8+8 {
		t.Errorf("a fused product of drawn blocks costs %d held, %d work, want 8 and %d", held, work, 3*512*512*8+8)
	}
}

// TestUnitBounds checks the two bounds of a unit apart. Leaves that each
// sum 2^15 generated values make 8 bytes but touch 256 KiB: their units
// end at UnitCost touched. Leaves of 64 KiB chunks touch little besides:
// theirs end at a quarter of UnitCost held.
func TestUnitBounds(t *testing.T) {
	const unitCost = 4 << 20
	for _, tc := range []struct {
		name    string
		shape   []int // of each op
		expr    int   // values a leaf generates, if an expr
		maxOps  int
		leafCap int // most leaves a unit may hold
	}{
		{"work", []int{1}, 1 << 15, 64, unitCost / (1<<15*8 + 8)},
		{"held", []int{1 << 13}, 0, 64, unitCost / unitHeld / (1 << 16)},
	} {
		g := graph(tree(64))
		for _, op := range g.Ops {
			op.Shape = tc.shape
			if len(op.Inputs) == 0 && tc.expr > 0 {
				op.Kind, op.Args = "expr", chunk.ExprArgs{Shape: []int{tc.expr}}
			}
		}
		h := newHarness(t, g, nil, Options{UnitOps: tc.maxOps, UnitCost: unitCost}, "w1")
		h.apply(h.c.startJob())
		if len(h.c.units) == 0 {
			t.Fatalf("%s: no units", tc.name)
		}
		most := 0
		for u, ms := range h.c.units {
			var held, work int64
			leaves := 0
			for _, m := range ms {
				oh, ow := opCost(g, g.Ops[m])
				held, work = held+oh, work+ow
				if len(g.Ops[m].Inputs) == 0 {
					leaves++
				}
			}
			if held > unitCost/unitHeld || work > unitCost {
				t.Errorf("%s: unit %d holds %d bytes and touches %d", tc.name, u, held, work)
			}
			most = max(most, leaves)
		}
		if most > tc.leafCap || most < tc.leafCap/2 {
			t.Errorf("%s: units hold up to %d leaves, want about %d", tc.name, most, tc.leafCap)
		}
	}
}

// TestUnitWorkerLost loses the worker of a unit halfway: the op it was
// running is retried, the ops waiting behind it are sent again without a
// failure counted against them, alone this time, and the job succeeds.
func TestUnitWorkerLost(t *testing.T) {
	g := graph([][]int{nil, {0}, {1}, {2}})
	h := newHarness(t, g, []int{3}, Options{UnitOps: 4, MaxAttempts: 2}, "w1", "w2")
	h.apply(h.c.startJob())
	w := h.run(0).Worker
	h.finish(0)
	for k := range h.chunks {
		if strings.HasSuffix(k, "@"+w) {
			delete(h.chunks, k)
		}
	}
	h.apply(h.c.workerDown(w))
	for k, want := range []int{0, 1, 0, 0} {
		if f := h.c.ops[k].failures; int(f) != want {
			t.Errorf("op %d has %d failures, want %d (only op 1 could have run)", k, f, want)
		}
	}
	h.finishAll()
	if !h.done || h.err != nil {
		t.Fatalf("done %v, %v: %s", h.done, h.err, h.states())
	}
	if r := h.run(3); r.Unit != 0 || r.Attempt != 2 {
		t.Errorf("op 3 resent as %+v, want alone, attempt 2", r)
	}
}

// TestHoldDispatch finishes the leaves of a tree reduction under Hold: no
// op is sent until Dispatch, which sends the READY ops in rank order, and
// the job ends as it does without Hold.
func TestHoldDispatch(t *testing.T) {
	g := graph(tree(16))
	h := newHarness(t, g, []int{len(g.Ops) - 1}, Options{Depth: -1}, "w1")
	h.apply(h.c.startJob())
	for !h.done {
		var sent []int
		for k := range g.Ops {
			if h.c.ops[k].sent {
				sent = append(sent, k)
			}
		}
		if len(sent) == 0 {
			t.Fatalf("nothing sent, states %s", h.states())
		}
		h.c.Step(Input{Kind: InHold})
		for _, k := range sent {
			before := len(h.runs)
			h.finish(k)
			if len(h.runs) != before {
				t.Fatalf("op %d's end sent ops under Hold", k)
			}
		}
		if h.done {
			break
		}
		out := h.c.dispatchHeld()
		if len(out.Run) == 0 {
			t.Fatalf("Dispatch sent nothing, states %s", h.states())
		}
		for i := 1; i < len(out.Run); i++ {
			if h.c.rank[out.Run[i].Key] < h.c.rank[out.Run[i-1].Key] {
				t.Errorf("Dispatch sent op %d before op %d, which ranks first", out.Run[i-1].Key, out.Run[i].Key)
			}
		}
		h.apply(out)
	}
	if h.err != nil || h.c.State(len(g.Ops)-1) != Finished {
		t.Fatalf("job ended with %v, states %s", h.err, h.states())
	}
}

// TestUnitLeavesNotQueued starts a reduction over many leaves with little
// room at the workers: only the first op of each unit of leaves waits in a
// queue, the others go with it, and the job still runs to the end.
func TestUnitLeavesNotQueued(t *testing.T) {
	g := graph(tree(256))
	h := newHarness(t, g, []int{len(g.Ops) - 1}, Options{UnitOps: 16, Depth: 1, RootDepth: 1}, "w1", "w2")
	h.apply(h.c.startJob())
	queued := h.c.shared.len()
	for _, w := range h.c.workers {
		queued += w.own.len()
	}
	leaders, loose := 0, 0
	for k := range g.Ops {
		o := &h.c.ops[k]
		if !o.initial || o.sent {
			continue
		}
		if u := h.c.unitOf[k]; u < 0 {
			loose++
		} else if int(h.c.units[u][0]) == k {
			leaders++
		}
	}
	if queued != leaders+loose {
		t.Errorf("%d ops queued, want the %d unit leaders and %d leaves of no unit waiting", queued, leaders, loose)
	}
	h.finishAll()
	if !h.done || h.err != nil {
		t.Fatalf("job not done (%v): %s", h.err, h.states())
	}
}
