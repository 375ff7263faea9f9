package core

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// graph builds a chunk graph from input lists: ops[k] are op k's inputs.
// Ops named in stored are Stored ops with chunk ID 1000+k.
func graph(ops [][]int, stored ...int) *chunk.Graph {
	g := &chunk.Graph{}
	for k, ins := range ops {
		op := &chunk.Op{Key: k, Kind: "assemble", Inputs: ins, Shape: []int{1}, DType: tensor.Float64}
		if slices.Contains(stored, k) {
			op.Kind, op.Stored = "stored", uint64(1000+k)
		}
		g.Ops = append(g.Ops, op)
	}
	return g
}

// tree is a pairwise reduction of n leaves.
func tree(n int) [][]int {
	ops := make([][]int, n)
	level := make([]int, n)
	for i := range level {
		level[i] = i
	}
	for len(level) > 1 {
		var next []int
		for i := 0; i+1 < len(level); i += 2 {
			ops = append(ops, []int{level[i], level[i+1]})
			next = append(next, len(ops)-1)
		}
		if len(level)%2 == 1 {
			next = append(next, level[len(level)-1])
		}
		level = next
	}
	return ops
}

// harness drives a Core and checks its invariants after every input.
type harness struct {
	units   int // units sent
	t       *testing.T
	c       *Core
	g       *chunk.Graph
	ids     []uint64
	runs    map[int]RunOp // latest run of each op
	freed   []string      // "id@worker"
	cancels []string
	events  []Event
	done    bool
	err     error
	chunks  map[string]bool // id@worker the workers hold for the job
}

func newHarness(t *testing.T, g *chunk.Graph, keep []int, opts Options, workers ...string) *harness {
	ids := make([]uint64, len(g.Ops))
	km := map[uint64]bool{}
	for k := range ids {
		ids[k] = uint64(k + 1)
		if g.Ops[k].Stored != 0 {
			ids[k] = g.Ops[k].Stored
		}
	}
	for _, k := range keep {
		km[ids[k]] = true
	}
	if opts.Stored == nil {
		opts.Stored = func(id uint64) (Location, bool) { return Location{ID: id, Worker: "w1", NBytes: 8}, true }
	}
	h := &harness{t: t, c: New(g, ids, km, opts), g: g, ids: ids, runs: map[int]RunOp{}, chunks: map[string]bool{}}
	for _, w := range workers {
		h.apply(h.c.workerUp(w, 2))
	}
	return h
}

func (h *harness) apply(o Output) {
	h.t.Helper()
	if h.done && (len(o.Run) > 0 || o.Done) {
		h.t.Fatalf("output after done: %+v", o)
	}
	for _, f := range o.Free {
		key := fmt.Sprintf("%d@%s", f.ID, f.Worker)
		if !h.chunks[key] {
			h.t.Fatalf("free of %s, which no worker holds", key)
		}
		delete(h.chunks, key)
		h.freed = append(h.freed, key)
	}
	for _, c := range o.Cancel {
		h.cancels = append(h.cancels, fmt.Sprintf("%d@%s", c.Key, c.Worker))
	}
	for _, r := range o.Run {
		for i, in := range r.Inputs {
			k := h.g.Ops[r.Key].Inputs[i]
			if h.c.ops[r.Key].inUnit && h.c.unitOf[k] == h.c.unitOf[r.Key] {
				// Made earlier in the same unit, on the same worker.
				if in.Worker != r.Worker || in.ID != h.ids[k] {
					h.t.Fatalf("op %d input %d of its unit at %+v, not on %s", r.Key, k, in, r.Worker)
				}
				continue
			}
			if st := h.c.State(k); st != Finished {
				h.t.Fatalf("op %d runs while input %d is %v", r.Key, k, st)
			}
			if loc, _ := h.c.Holder(k); loc != in {
				h.t.Fatalf("op %d input %d at %+v, core says %+v", r.Key, k, in, loc)
			}
		}
		h.runs[r.Key] = r
		if r.Unit > 1 {
			h.units++
		}
	}
	h.events = append(h.events, o.Events...)
	if o.Done {
		h.done, h.err = true, o.Err
	}
	// Invariants: live chunks are the FINISHED ops made by the job; the
	// outstanding count of each worker is its sent ops, an op sent within a
	// unit counting with its unit.
	live, bytes, _ := h.c.Stats()
	n := 0
	for k := range h.g.Ops {
		if h.c.State(k) == Finished && h.g.Ops[k].Stored == 0 {
			n++
		}
	}
	if live != n || bytes != int64(8*n) {
		h.t.Fatalf("live %d chunks %d bytes, %d ops finished", live, bytes, n)
	}
	for name, w := range h.c.workers {
		sent := 0
		units := map[int32]bool{}
		for k := range h.c.ops {
			o := &h.c.ops[k]
			switch {
			case !o.sent || h.c.wnames[o.worker] != name:
			case o.inUnit:
				units[h.c.unitOf[k]] = true
			default:
				sent++
			}
		}
		sent += len(units)
		if sent != w.outstanding {
			h.t.Fatalf("worker %s: outstanding %d, sent %d", name, w.outstanding, sent)
		}
	}
}

func (h *harness) run(k int) RunOp {
	h.t.Helper()
	r, ok := h.runs[k]
	if !ok {
		h.t.Fatalf("op %d was never sent", k)
	}
	return r
}

func (h *harness) finish(k int) {
	h.t.Helper()
	r := h.run(k)
	h.chunks[fmt.Sprintf("%d@%s", h.ids[k], r.Worker)] = true
	h.apply(h.c.opFinished(k, r.Worker, r.Attempt, 8))
}

func (h *harness) started(k int) {
	h.t.Helper()
	r := h.run(k)
	h.apply(h.c.opStarted(k, r.Worker, r.Attempt))
}

func (h *harness) fail(k int) {
	h.t.Helper()
	r := h.run(k)
	h.apply(h.c.opFailed(k, r.Worker, r.Attempt, "boom"))
}

// finishAll finishes sent ops in key order until none is left.
func (h *harness) finishAll() {
	h.t.Helper()
	for !h.done {
		progress := false
		for k := range h.g.Ops {
			if h.c.ops[k].sent {
				h.finish(k)
				progress = true
			}
		}
		if !progress {
			return
		}
	}
}

func (h *harness) states() string {
	var s []string
	for k := range h.g.Ops {
		s = append(s, h.c.State(k).String())
	}
	return strings.Join(s, " ")
}

func TestCoreScenarios(t *testing.T) {
	type step func(h *harness)
	start := func(h *harness) { h.apply(h.c.startJob()) }
	fin := func(ks ...int) step {
		return func(h *harness) {
			for _, k := range ks {
				h.finish(k)
			}
		}
	}
	fail := func(ks ...int) step {
		return func(h *harness) {
			for _, k := range ks {
				h.fail(k)
			}
		}
	}
	started := func(k int) step {
		return func(h *harness) { r := h.run(k); h.apply(h.c.opStarted(k, r.Worker, r.Attempt)) }
	}
	cancel := func(h *harness) { h.apply(h.c.cancelJob()) }
	// failFetch fails op k's current run for want of its first input, from
	// the worker holding it, n times.
	failFetch := func(k, n int) step {
		return func(h *harness) {
			for range n {
				r := h.run(k)
				loc, _ := h.c.Holder(h.g.Ops[k].Inputs[0])
				h.apply(h.c.opFailedFetch(k, r.Worker, r.Attempt, loc.Worker, "fetch failed"))
			}
		}
	}
	ackCancel := func(k int) step {
		return func(h *harness) { r := h.run(k); h.apply(h.c.opCancelled(k, r.Worker, r.Attempt)) }
	}
	up := func(w string) step { return func(h *harness) { h.apply(h.c.workerUp(w, 2)) } }
	down := func(w string) step { return func(h *harness) { h.apply(h.c.workerDown(w)) } }
	all := func(h *harness) { h.finishAll() }
	checkStates := func(want string) step {
		return func(h *harness) {
			h.t.Helper()
			if got := h.states(); got != want {
				h.t.Fatalf("states\n got %s\nwant %s", got, want)
			}
		}
	}

	for _, tc := range []struct {
		name    string
		ops     [][]int
		stored  []int
		keep    []int
		workers []string
		steps   []step
		states  string
		err     string // "" for success
		freed   []string
		cancels []string
	}{
		{
			name: "chain", ops: [][]int{nil, {0}, {1}}, keep: []int{2}, workers: []string{"w1"},
			steps:  []step{start, checkStates("READY UNSCHEDULED UNSCHEDULED"), fin(0), checkStates("FINISHED READY UNSCHEDULED"), started(1), checkStates("FINISHED RUNNING UNSCHEDULED"), fin(1), checkStates("FREED FINISHED READY"), fin(2)},
			states: "FREED FREED FINISHED", freed: []string{"1@w1", "2@w1"},
		},
		{
			name: "diamond frees after last consumer", ops: [][]int{nil, {0}, {0}, {1, 2}}, keep: []int{3}, workers: []string{"w1"},
			steps:  []step{start, fin(0, 1), checkStates("FINISHED FINISHED READY UNSCHEDULED"), fin(2), fin(3)},
			states: "FREED FREED FREED FINISHED", freed: []string{"1@w1", "2@w1", "3@w1"},
		},
		{
			name: "unkept sink freed at once", ops: [][]int{nil, {0}}, workers: []string{"w1"},
			steps: []step{start, all}, states: "FREED FREED", freed: []string{"1@w1", "2@w1"},
		},
		{
			name: "kept intermediate survives", ops: [][]int{nil, {0}}, keep: []int{0, 1}, workers: []string{"w1"},
			steps: []step{start, all}, states: "FINISHED FINISHED",
		},
		{
			name: "stored inputs are not freed", ops: [][]int{nil, {0}, {1}}, stored: []int{0}, keep: []int{2}, workers: []string{"w1"},
			steps:  []step{start, checkStates("FINISHED READY UNSCHEDULED"), all},
			states: "FINISHED FREED FINISHED", freed: []string{"2@w1"},
		},
		{
			name: "retry then succeed", ops: [][]int{nil, {0}}, keep: []int{1}, workers: []string{"w1", "w2"},
			steps:  []step{start, fail(0), checkStates("READY UNSCHEDULED"), fail(0), all},
			states: "FREED FINISHED", freed: []string{"1@w2"},
		},
		{
			name: "fetch failures from a live peer are not counted", ops: [][]int{nil, {0}}, keep: []int{1}, workers: []string{"w1", "w2"},
			steps:  []step{start, fin(0), failFetch(1, 5), checkStates("FINISHED READY"), all},
			states: "FREED FINISHED", freed: []string{"1@w2"},
		},
		{
			name: "fetch failures from a live peer are bounded", ops: [][]int{nil, {0}}, keep: []int{1}, workers: []string{"w1"},
			steps:  []step{start, fin(0), failFetch(1, maxFetchFailures+3)},
			states: "FREED FATAL", err: "after 3 attempts: fetch failed", freed: []string{"1@w1"},
		},
		{
			name: "fetch failure, then the peer is down: the input is made again", ops: [][]int{nil, {0}}, keep: []int{1}, workers: []string{"w1", "w2"},
			steps: []step{start, fin(0), failFetch(1, 2), func(h *harness) { delete(h.chunks, "1@w2") }, down("w2"),
				checkStates("READY UNSCHEDULED"), all},
			states: "FREED FINISHED", freed: []string{"1@w1"},
		},
		{
			name: "fatal after max attempts propagates", ops: [][]int{nil, nil, {0}, {2}, {1}}, keep: []int{3, 4}, workers: []string{"w1"},
			steps:  []step{start, fin(1), fail(0, 0, 0), ackCancel(4)},
			states: "FATAL FREED FATAL FATAL CANCELLED", err: "operand 0 (assemble) failed on w1 after 3 attempts: boom",
			freed: []string{"2@w1"}, cancels: []string{"4@w1"},
		},
		{
			name: "cancel before start of successors", ops: [][]int{nil, nil, {0, 1}}, keep: []int{2}, workers: []string{"w1"},
			steps:  []step{start, fin(0), started(1), cancel, checkStates("FREED CANCELLING CANCELLED"), ackCancel(1)},
			states: "FREED CANCELLED CANCELLED", err: "job cancelled", freed: []string{"1@w1"}, cancels: []string{"1@w1"},
		},
		{
			name: "cancelled op that finished anyway is freed", ops: [][]int{nil, {0}}, keep: []int{0, 1}, workers: []string{"w1"},
			steps:  []step{start, cancel, fin(0)},
			states: "CANCELLED CANCELLED", err: "job cancelled", freed: []string{"1@w1"}, cancels: []string{"0@w1"},
		},
		{
			name: "cancel frees kept chunks", ops: [][]int{nil, nil}, keep: []int{0, 1}, workers: []string{"w1"},
			steps:  []step{start, fin(0), cancel, ackCancel(1)},
			states: "FREED CANCELLED", err: "job cancelled", freed: []string{"1@w1"}, cancels: []string{"1@w1"},
		},
		{
			name: "no worker: waits, then runs", ops: [][]int{nil, {0}}, keep: []int{1},
			steps:  []step{start, checkStates("READY UNSCHEDULED"), up("w1"), all},
			states: "FREED FINISHED", freed: []string{"1@w1"},
		},
		{
			name: "worker down retries its running ops elsewhere", ops: [][]int{nil, nil, {0, 1}}, keep: []int{2}, workers: []string{"w1", "w2"},
			steps:  []step{start, down("w2"), all},
			states: "FREED FREED FINISHED", freed: []string{"1@w1", "2@w1"},
		},
		{
			name: "worker down with a needed chunk recomputes it", ops: [][]int{nil, nil, {0, 1}}, keep: []int{2}, workers: []string{"w1", "w2"},
			steps:  []step{start, fin(0, 1), func(h *harness) { delete(h.chunks, "2@w2") }, down("w2"), checkStates("FINISHED READY UNSCHEDULED"), all},
			states: "FREED FREED FINISHED", freed: []string{"1@w1", "2@w1"}, cancels: []string{"2@w1"},
		},
		{
			name: "worker down with a freed input recomputes the lineage", ops: [][]int{nil, {0}, {1}, {2}}, keep: []int{3}, workers: []string{"w1"},
			steps: []step{start, fin(0, 1, 2), up("w2"), func(h *harness) { delete(h.chunks, "3@w1") }, down("w1"),
				checkStates("READY UNSCHEDULED UNSCHEDULED UNSCHEDULED"), all},
			states: "FREED FREED FREED FINISHED", freed: []string{"1@w1", "1@w2", "2@w1", "2@w2", "3@w2"},
		},
		{
			name: "worker down with a stored input fails the job", ops: [][]int{nil, {0}}, stored: []int{0}, keep: []int{1}, workers: []string{"w1", "w2"},
			steps:  []step{start, down("w1")},
			states: "FATAL FATAL", err: "worker w1 left holding stored chunk 1000, which operand 0 reads",
		},
		{
			name: "missing stored chunk", ops: [][]int{nil, {0}}, stored: []int{0}, workers: []string{"w1"},
			steps: []step{start}, states: "FATAL FATAL", err: "stored chunk 1000 is gone",
		},
		{
			name: "empty graph", ops: nil, workers: []string{"w1"},
			steps: []step{start}, states: "",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{}
			if tc.name == "missing stored chunk" {
				opts.Stored = func(uint64) (Location, bool) { return Location{}, false }
			}
			h := newHarness(t, graph(tc.ops, tc.stored...), tc.keep, opts, tc.workers...)
			for _, s := range tc.steps {
				s(h)
			}
			if got := h.states(); got != tc.states {
				t.Errorf("states\n got %s\nwant %s", got, tc.states)
			}
			if !h.done {
				t.Fatalf("not done")
			}
			if tc.err == "" && h.err != nil || tc.err != "" && (h.err == nil || !strings.Contains(h.err.Error(), tc.err)) {
				t.Errorf("err = %v, want %q", h.err, tc.err)
			}
			sort.Strings(h.freed)
			if !slices.Equal(h.freed, tc.freed) {
				t.Errorf("freed %v, want %v", h.freed, tc.freed)
			}
			if !slices.Equal(h.cancels, tc.cancels) {
				t.Errorf("cancels %v, want %v", h.cancels, tc.cancels)
			}
			live, _, _ := h.c.Stats()
			if live != len(h.chunks) {
				t.Errorf("core counts %d live chunks, workers hold %v", live, h.chunks)
			}
			if tc.err != "" && len(h.chunks) != 0 {
				t.Errorf("failed job left chunks %v", h.chunks)
			}
		})
	}
}

// TestCoreRandom drives random graphs through random interleavings of
// finishes, failures, worker departures and cancels, checking the invariants
// and that every job ends with only its kept chunks alive (or none).
func TestCoreRandom(t *testing.T) {
	for _, unitOps := range []int{0, 3} {
		t.Run(fmt.Sprintf("units of %d", unitOps), func(t *testing.T) { coreRandom(t, unitOps) })
	}
}

// coreRandom drives jobs of random graphs through random reports, worker
// losses and joins and cancels, with ops grouped into units of unitOps.
// A unit's op whose inputs are not there yet fails, as on a worker.
func coreRandom(t *testing.T, unitOps int) {
	rng := rand.New(rand.NewSource(1))
	outcomes := map[string]int{}
	units, adopted := 0, 0
	for iter := 0; iter < 400; iter++ {
		n := 1 + rng.Intn(25)
		ops := make([][]int, n)
		for k := 1; k < n; k++ {
			for j := 0; j < 3; j++ {
				if rng.Intn(3) == 0 {
					in := rng.Intn(k)
					if !slices.Contains(ops[k], in) {
						ops[k] = append(ops[k], in)
					}
				}
			}
		}
		var keep []int
		for k := 0; k < n; k++ {
			if rng.Intn(4) == 0 {
				keep = append(keep, k)
			}
		}
		h := newHarness(t, graph(ops), keep, Options{MaxAttempts: 5, UnitOps: unitOps}, "w1", "w2", "w3")
		h.apply(h.c.startJob())
		cancelled := false
		nextWorker := 4
		gone := map[string][]uint64{} // workers gone, with the chunks they held
		// comeBack brings worker w back after a pause: the Core takes back
		// what it is making again and has not sent; the worker drops the
		// others.
		comeBack := func(w string) {
			h.apply(h.c.workerUp(w, 2))
			for _, id := range gone[w] {
				k := int(id) - 1
				if k < 0 || k >= len(h.ids) || h.ids[k] != id {
					continue // a stored chunk
				}
				h.apply(h.c.adopt(k, w, 8))
				if loc, ok := h.c.Holder(k); ok && loc.Worker == w && loc.ID == id {
					h.chunks[fmt.Sprintf("%d@%s", id, w)] = true
					adopted++
				}
			}
			delete(gone, w)
		}
		for steps := 0; !h.done && steps < 10000; steps++ {
			if rng.Intn(100) < 3 {
				// A worker leaves with its chunks, one that left comes
				// back with them, or one joins.
				names := SortedKeys(h.c.workers)
				back := SortedKeys(gone)
				switch x := rng.Intn(3); {
				case x == 0 && (len(names) > 1 || len(names) == 1 && rng.Intn(2) == 0):
					// The last worker may go too: it comes back later.
					w := names[rng.Intn(len(names))]
					for k := range h.chunks {
						if id, ok := strings.CutSuffix(k, "@"+w); ok {
							delete(h.chunks, k)
							n, _ := strconv.ParseUint(id, 10, 64)
							gone[w] = append(gone[w], n)
						}
					}
					if _, ok := gone[w]; !ok {
						gone[w] = nil
					}
					if rng.Intn(2) == 0 {
						// Its connection broke and came back at once: the
						// scheduler hands the Core the departure, the
						// return and what it holds in one batch.
						h.c.Step(Input{Kind: InHold})
						h.apply(h.c.workerDown(w))
						comeBack(w)
						h.apply(h.c.Step(Input{Kind: InDispatch}))
						continue
					}
					h.apply(h.c.workerDown(w))
				case x == 1 && len(back) > 0:
					comeBack(back[rng.Intn(len(back))])
				default:
					h.apply(h.c.workerUp(fmt.Sprintf("w%d", nextWorker), 1+rng.Intn(3)))
					nextWorker++
				}
				continue
			}
			var sent []int
			for k := range h.c.ops {
				if h.c.ops[k].sent {
					sent = append(sent, k)
				}
			}
			if len(sent) == 0 && len(h.c.workers) == 0 && len(gone) > 0 {
				comeBack(SortedKeys(gone)[0]) // nobody left to run the job
				continue
			}
			if len(sent) == 0 {
				t.Fatalf("iter %d: stalled: %s", iter, h.states())
			}
			k := sent[rng.Intn(len(sent))]
			r := h.run(k)
			if h.c.State(k) == Unscheduled {
				h.fail(k) // a unit's op without its inputs
				continue
			}
			switch x := rng.Intn(100); {
			case x < 3 && !cancelled:
				cancelled = true
				h.apply(h.c.cancelJob())
			case x < 8:
				h.fail(k)
			case x < 10 && h.c.State(k) == Cancelling:
				h.apply(h.c.opCancelled(k, r.Worker, r.Attempt))
			case x < 12 && h.c.State(k) == Ready:
				h.apply(h.c.opStarted(k, r.Worker, r.Attempt))
			default:
				h.finish(k)
			}
		}
		if !h.done {
			t.Fatalf("iter %d: not done: %s", iter, h.states())
		}
		for k := range ops {
			st := h.c.State(k)
			switch {
			case h.err == nil && slices.Contains(keep, k):
				if st != Finished {
					t.Fatalf("iter %d: kept op %d is %v", iter, k, st)
				}
			case h.err == nil:
				if st != Freed {
					t.Fatalf("iter %d: op %d is %v after success", iter, k, st)
				}
			default:
				if st != Freed && st != Fatal && st != Cancelled {
					t.Fatalf("iter %d: op %d is %v after failure %v", iter, k, st, h.err)
				}
			}
		}
		want := 0
		if h.err == nil {
			want = len(keep)
		}
		if len(h.chunks) != want {
			t.Fatalf("iter %d (err %v): workers hold %v, want %d chunks", iter, h.err, h.chunks, want)
		}
		units += h.units
		outcome := "failed"
		if h.err == nil {
			outcome = "succeeded"
		}
		for _, ev := range h.events {
			if strings.HasPrefix(ev.Err, "chunk lost") && ev.State != Freed {
				outcome += " after recomputing"
				break
			}
		}
		outcomes[outcome]++
	}
	t.Logf("outcomes %v, %d units sent, %d chunks taken back", outcomes, units, adopted)
	if adopted == 0 {
		t.Error("no chunk was taken back")
	}
	if unitOps > 1 && units == 0 {
		t.Error("no unit was sent")
	}
	if outcomes["succeeded after recomputing"] == 0 {
		t.Error("no job recomputed lost chunks and succeeded")
	}
}

// TestDepthFirstMemory simulates one slot running a 64-leaf tree reduction
// in rank order: depth-first keeps O(depth) chunks alive, not O(leaves).
func TestDepthFirstMemory(t *testing.T) {
	g := graph(tree(64))
	h := newHarness(t, g, []int{len(g.Ops) - 1}, Options{}, "w1")
	h.apply(h.c.startJob())
	peak := 0
	for !h.done {
		best := -1
		for k := range h.c.ops {
			if h.c.ops[k].sent && (best < 0 || h.c.rank[k] < h.c.rank[best]) {
				best = k
			}
		}
		h.finish(best)
		live, _, _ := h.c.Stats()
		peak = max(peak, live)
	}
	if peak > 8 {
		t.Errorf("peak of %d live chunks for a 64-leaf tree", peak)
	}
}

func TestPickWorker(t *testing.T) {
	ws := map[string]*workerState{"a": {slots: 2}, "b": {slots: 2, outstanding: 1}, "c": {slots: 4}}
	for _, tc := range []struct {
		holders []string
		nbytes  []int64
		avoid   string
		want    string
	}{
		{[]string{"a", "b"}, []int64{10, 20}, "", "b"},
		{[]string{"a", "b", "a"}, []int64{10, 15, 10}, "", "a"},
		{[]string{"a", "b"}, []int64{10, 10}, "", "a"}, // tie: a has more free slots
		{nil, nil, "", "c"},
		{[]string{"c"}, []int64{1}, "c", "a"},
		{[]string{"gone"}, []int64{100}, "", "c"},
	} {
		if got := pickWorker(tc.holders, tc.nbytes, ws, SortedKeys(ws), tc.avoid); got != tc.want {
			t.Errorf("pickWorker(%v, %v) = %s, want %s", tc.holders, tc.nbytes, got, tc.want)
		}
	}
}

// TestCoreTransitions is the transition table of one operand: op 1 of the
// chain 0 → 1 → 2 (2 kept, one worker) is brought to each state, then given
// each input; the table holds the state it ends in.
func TestCoreTransitions(t *testing.T) {
	setups := []struct {
		state OpState
		steps func(h *harness)
	}{
		{Unscheduled, func(h *harness) {}},
		{Ready, func(h *harness) { h.finish(0) }},
		{Running, func(h *harness) { h.finish(0); h.started(1) }},
		{Finished, func(h *harness) { h.finish(0); h.finish(1) }},
		{Freed, func(h *harness) { h.finish(0); h.finish(1); h.finish(2) }},
		{Fatal, func(h *harness) { h.finish(0); h.fail(1); h.fail(1); h.fail(1) }},
		{Cancelling, func(h *harness) { h.finish(0); h.apply(h.c.cancelJob()) }},
		{Cancelled, func(h *harness) { h.apply(h.c.cancelJob()) }},
	}
	type input struct {
		name string
		do   func(h *harness, r RunOp)
	}
	inputs := []input{
		{"started", func(h *harness, r RunOp) { h.apply(h.c.opStarted(1, r.Worker, r.Attempt)) }},
		{"finished", func(h *harness, r RunOp) {
			// Whether the core expects it or not, the worker made the chunk.
			h.chunks[fmt.Sprintf("%d@%s", h.ids[1], r.Worker)] = true
			h.apply(h.c.opFinished(1, r.Worker, r.Attempt, 8))
		}},
		{"failed", func(h *harness, r RunOp) { h.apply(h.c.opFailed(1, r.Worker, r.Attempt, "boom")) }},
		{"cancel-done", func(h *harness, r RunOp) { h.apply(h.c.opCancelled(1, r.Worker, r.Attempt)) }},
		{"stale-finished", func(h *harness, r RunOp) {
			h.chunks[fmt.Sprintf("%d@%s", h.ids[1], r.Worker)] = true
			h.apply(h.c.opFinished(1, r.Worker, r.Attempt+1, 8))
		}},
		{"worker-down", func(h *harness, r RunOp) {
			// The worker's chunks are lost with it.
			for k := range h.chunks {
				if strings.HasSuffix(k, "@w1") {
					delete(h.chunks, k)
				}
			}
			h.apply(h.c.workerDown("w1"))
		}},
		{"cancel", func(h *harness, r RunOp) { h.apply(h.c.cancelJob()) }},
		{"failed-final", func(h *harness, r RunOp) { h.apply(h.c.opFailedFinal(1, r.Worker, r.Attempt, "singular")) }},
		{"abandon", func(h *harness, r RunOp) { h.apply(h.c.abandonJob()) }},
		{"worker-up", func(h *harness, r RunOp) { h.apply(h.c.workerUp("w2", 1)) }},
		{"stale-failed", func(h *harness, r RunOp) { h.apply(h.c.opFailed(1, r.Worker, r.Attempt+1, "late")) }},
	}
	U, R, Ru, F, Fr, Fa, Cg, Cd := Unscheduled, Ready, Running, Finished, Freed, Fatal, Cancelling, Cancelled
	want := map[OpState][]OpState{
		//           started finished failed cancel-done stale worker-down cancel failed-final abandon worker-up stale-failed
		Unscheduled: {U, U, U, U, U, U, Cd, U, U, U, U},
		Ready:       {Ru, F, R, R, R, U, Cg, Fa, R, R, R},
		Running:     {Ru, F, R, R, Ru, U, Cg, Fa, Ru, Ru, Ru},
		Finished:    {F, F, F, F, F, U, Fr, F, F, F, F},
		Freed:       {Fr, Fr, Fr, Fr, Fr, Fr, Fr, Fr, Fr, Fr, Fr},
		Fatal:       {Fa, Fa, Fa, Fa, Fa, Fa, Fa, Fa, Fa, Fa, Fa},
		Cancelling:  {Cg, Cd, Cd, Cd, Cg, Cd, Cg, Cd, Cd, Cg, Cg},
		Cancelled:   {Cd, Cd, Cd, Cd, Cd, Cd, Cd, Cd, Cd, Cd, Cd},
	}
	for st, row := range want {
		if len(row) != len(inputs) {
			t.Fatalf("row %v has %d entries for %d inputs", st, len(row), len(inputs))
		}
	}
	for _, su := range setups {
		for i, in := range inputs {
			t.Run(su.state.String()+"/"+in.name, func(t *testing.T) {
				h := newHarness(t, graph([][]int{nil, {0}, {1}}), []int{2}, Options{}, "w1")
				h.apply(h.c.startJob())
				su.steps(h)
				if got := h.c.State(1); got != su.state {
					t.Fatalf("setup reached %v", got)
				}
				r, ok := h.runs[1]
				if !ok {
					r = RunOp{Key: 1, Worker: "w1", Attempt: 1}
				}
				in.do(h, r)
				if got := h.c.State(1); got != want[su.state][i] {
					t.Errorf("%v + %s → %v, want %v", su.state, in.name, got, want[su.state][i])
				}
				// Whatever happened, finishing or confirming what is still
				// at the workers ends the job with only kept chunks alive.
				for !h.done {
					progress := false
					for k := range h.c.ops {
						if h.c.ops[k].sent {
							if h.c.State(k) == Cancelling {
								r := h.runs[k]
								// A worker's latest run of an op that ends
								// cancelled drops the op's chunk there.
								delete(h.chunks, fmt.Sprintf("%d@%s", h.ids[k], r.Worker))
								h.apply(h.c.opCancelled(k, r.Worker, r.Attempt))
							} else {
								h.finish(k)
							}
							progress = true
						}
					}
					if !progress {
						h.apply(h.c.workerUp("w2", 1))
						if !h.done && len(h.c.pending) == 0 && !slices.ContainsFunc(h.c.ops, func(o opState) bool { return o.sent }) {
							t.Fatalf("stalled: %s", h.states())
						}
					}
				}
				want := 0
				if h.err == nil && !(su.state == Freed && in.name == "worker-down") {
					want = 1 // the kept chunk (lost with w1 after a success)
				}
				if len(h.chunks) != want {
					t.Errorf("job ended (%v) with chunks %v", h.err, h.chunks)
				}
			})
		}
	}
}

func TestPlanAdapters(t *testing.T) {
	g := graph(tree(8))
	rank := PlanOrder(g)
	seen := map[int]bool{}
	for k, r := range rank {
		if r < 0 || r >= len(rank) || seen[r] {
			t.Fatalf("rank %v is not a permutation", rank)
		}
		seen[r] = true
		for _, in := range g.Ops[k].Inputs {
			if rank[in] > r {
				t.Errorf("op %d ranked before its input %d", k, in)
			}
		}
	}
	a := PlanAssign(g, rank, []WorkerLoad{{Name: "a", Slots: 1}, {Name: "b", Slots: 1}})
	n := map[string]int{}
	for k, w := range a {
		if w == "" {
			continue
		}
		if len(g.Ops[k].Inputs) != 0 {
			t.Errorf("non-initial op %d assigned", k)
		}
		n[w]++
	}
	if n["a"] != 4 || n["b"] != 4 {
		t.Errorf("assignment %v", a)
	}
	// Pairs reduced together start on one worker.
	for k := 0; k < 8; k += 2 {
		if a[k] != a[k+1] {
			t.Errorf("leaves %d and %d on %s and %s", k, k+1, a[k], a[k+1])
		}
	}
	if PlanAssign(g, rank, nil) != nil {
		t.Error("assignment without workers")
	}
}

// TestCoreScale drives a 16,000-op tree reduction over 100 simulated
// workers of 2 slots, each running its queue in rank order: the job ends
// with one chunk alive, and the peak stays far below the number of leaves.
func TestCoreScale(t *testing.T) {
	const leaves, workers, slots = 8000, 100, 2
	g := graph(tree(leaves))
	ids := make([]uint64, len(g.Ops))
	for k := range ids {
		ids[k] = uint64(k + 1)
	}
	root := len(g.Ops) - 1
	c := New(g, ids, map[uint64]bool{ids[root]: true}, Options{})
	queues := map[string][]RunOp{} // sent, not started
	running := map[string][]RunOp{}
	var apply func(o Output)
	apply = func(o Output) {
		for _, r := range o.Run {
			queues[r.Worker] = append(queues[r.Worker], r)
		}
		if o.Done && o.Err != nil {
			t.Fatal(o.Err)
		}
	}
	for w := 0; w < workers; w++ {
		apply(c.workerUp(fmt.Sprintf("w%03d", w), slots))
	}
	apply(c.startJob())
	rng := rand.New(rand.NewSource(2))
	peak := 0
	for steps := 0; ; steps++ {
		if done, _ := c.Done(); done {
			break
		}
		// Workers start their best-ranked queued ops while they have slots.
		var busy []string
		for w, q := range queues {
			for len(running[w]) < slots && len(q) > 0 {
				best := 0
				for i := range q {
					if q[i].Priority < q[best].Priority {
						best = i
					}
				}
				running[w] = append(running[w], q[best])
				q = append(q[:best], q[best+1:]...)
			}
			queues[w] = q
		}
		for w, r := range running {
			if len(r) > 0 {
				busy = append(busy, w)
			}
		}
		if len(busy) == 0 {
			t.Fatalf("stalled after %d steps", steps)
		}
		sort.Strings(busy)
		w := busy[rng.Intn(len(busy))]
		r := running[w][0]
		running[w] = running[w][1:]
		apply(c.opFinished(r.Key, r.Worker, r.Attempt, 8))
		live, _, _ := c.Stats()
		peak = max(peak, live)
	}
	live, _, transfer := c.Stats()
	if live != 1 || c.State(root) != Finished {
		t.Errorf("ended with %d live chunks, root %v", live, c.State(root))
	}
	if peak > leaves/4 {
		t.Errorf("peak of %d live chunks for %d leaves", peak, leaves)
	}
	t.Logf("%d ops on %d workers: peak %d live chunks, %d bytes moved", len(g.Ops), workers, peak, transfer)
}

// TestStealFromTheEnd: a worker that runs out of initial ops takes the
// other's last-ranked ones, not its next, so that the leaves each worker
// runs stay runs of the rank order (their partials meet at the combines
// on one worker). w2 here is slow: it reports one op for every round in
// which w1 reports all it was sent.
func TestStealFromTheEnd(t *testing.T) {
	g := graph(tree(64))
	h := newHarness(t, g, []int{len(g.Ops) - 1}, Options{}, "w1", "w2")
	h.apply(h.c.startJob())
	assigned := map[int]string{}
	for k := range 64 {
		assigned[k] = h.c.wnames[h.c.ops[k].worker]
	}
	for !h.done {
		var w1, w2 []int
		for k := range g.Ops {
			if h.c.ops[k].sent && h.c.State(k) != Finished {
				if h.run(k).Worker == "w1" {
					w1 = append(w1, k)
				} else {
					w2 = append(w2, k)
				}
			}
		}
		if len(w1)+len(w2) == 0 {
			t.Fatalf("nothing sent, not done: %s", h.states())
		}
		for _, k := range w1 {
			h.finish(k)
		}
		if len(w2) > 0 && !h.done {
			h.finish(w2[0])
		}
	}
	var kept, stolen []int // w2's leaves: run by w2, taken by w1
	for k := range 64 {
		if assigned[k] != "w2" {
			continue
		}
		if r, ok := h.runs[k]; ok && r.Worker == "w2" {
			kept = append(kept, int(h.c.rank[k]))
		} else if ok {
			stolen = append(stolen, int(h.c.rank[k]))
		}
	}
	if len(stolen) == 0 || len(kept) == 0 {
		t.Fatalf("w2's leaves: %d run by it, %d taken by w1", len(kept), len(stolen))
	}
	if slices.Max(kept) > slices.Min(stolen) {
		t.Errorf("w1 took w2's leaves of ranks %v while w2 ran %v: not from the end", stolen, kept)
	}
}

// readyHeap.removeAt keeps the heap a heap: what is left pops in rank
// order, without the keys taken out.
func TestReadyHeapRemoveAt(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for n := 1; n < 80; n++ {
		rank := r.Perm(n)
		h := readyHeap{rank: int32s(rank)}
		for k := range n {
			h.push(k)
		}
		gone := map[int]bool{}
		for range r.Intn(n) {
			gone[h.removeAt(r.Intn(h.len()))] = true
		}
		last := -1
		for h.len() > 0 {
			k := h.pop()
			if gone[k] || rank[k] < last {
				t.Fatalf("n %d: popped %d (rank %d) after rank %d, removed %v", n, k, rank[k], last, gone[k])
			}
			last = rank[k]
			gone[k] = true
		}
		if len(gone) != n {
			t.Fatalf("n %d: %d keys seen", n, len(gone))
		}
	}
}

// An Assignment gives back the names it was given, "" for keys without
// one and past its end, and keeps each name once.
func TestAssignment(t *testing.T) {
	a := Assign([]string{"w1", "", "w2", "w1"})
	a.Grow(6)
	a.Set(5, "w2")
	a.Set(0, "")
	for k, want := range []string{"", "", "w2", "w1", "", "w2", ""} {
		if got := a.At(k); got != want {
			t.Errorf("At(%d) = %q, want %q", k, got, want)
		}
	}
	if a.Len() != 6 || len(a.names) != 2 {
		t.Errorf("%d keys, %d names: want 6 and 2", a.Len(), len(a.names))
	}
}
