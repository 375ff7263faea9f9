package plan

import (
	"fmt"
	"slices"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// builder makes chunk graphs by hand: every op is a float64 chunk of the
// given number of elements.
type builder struct{ g chunk.Graph }

func (b *builder) op(kind string, elems int, inputs ...int) int {
	k := len(b.g.Ops)
	b.g.Ops = append(b.g.Ops, &chunk.Op{Key: k, Kind: chunk.Kind(kind), Inputs: inputs, Shape: []int{elems}, DType: tensor.Float64})
	return k
}

// tree builds a reduction over leaves with the given fan-in and returns the
// graph and its root.
func tree(leaves, fanin int) (*chunk.Graph, int) {
	b := &builder{}
	level := make([]int, leaves)
	for i := range level {
		level[i] = b.op("rand", 1000)
	}
	for len(level) > 1 {
		var next []int
		for i := 0; i < len(level); i += fanin {
			next = append(next, b.op("sum", 1, level[i:min(i+fanin, len(level))]...))
		}
		level = next
	}
	return &b.g, level[0]
}

func checkTopological(t *testing.T, cg *chunk.Graph, rank []int32) {
	t.Helper()
	seen := make(map[int32]bool)
	for _, op := range cg.Ops {
		r := rank[op.Key]
		if r < 0 || int(r) >= len(cg.Ops) || seen[r] {
			t.Fatalf("op %d has rank %d: not a permutation", op.Key, r)
		}
		seen[r] = true
		for _, in := range op.Inputs {
			if rank[in] >= r {
				t.Fatalf("op %d (rank %d) ranks before its input %d (rank %d)", op.Key, r, in, rank[in])
			}
		}
	}
}

// simulate runs cg on w workers in unit time steps, each idle worker taking
// the ready op of smallest rank, and returns the most chunks alive at once
// (a chunk dies when its last consumer has run; ends of the graph stay).
func simulate(cg *chunk.Graph, rank []int32, w int) int {
	n := len(cg.Ops)
	waiting := make([]int, n)
	uses := make([]int, n)
	var succ = make([][]int, n)
	for _, op := range cg.Ops {
		waiting[op.Key] = len(op.Inputs)
		for _, in := range op.Inputs {
			uses[in]++
			succ[in] = append(succ[in], op.Key)
		}
	}
	var ready []int
	for k := range waiting {
		if waiting[k] == 0 {
			ready = append(ready, k)
		}
	}
	live, peak, done := 0, 0, 0
	for done < n {
		slices.SortFunc(ready, func(a, b int) int { return int(rank[a] - rank[b]) })
		step := ready[:min(w, len(ready))]
		ready = slices.Clone(ready[len(step):])
		live += len(step)
		peak = max(peak, live)
		for _, k := range step {
			done++
			for _, in := range cg.Ops[k].Inputs {
				if uses[in]--; uses[in] == 0 {
					live--
				}
			}
			for _, s := range succ[k] {
				if waiting[s]--; waiting[s] == 0 {
					ready = append(ready, s)
				}
			}
		}
	}
	return peak
}

// levelRank is the breadth-first order: every op of one level before the next.
func levelRank(cg *chunk.Graph) []int32 {
	level := make([]int, len(cg.Ops))
	for _, op := range cg.Ops {
		for _, in := range op.Inputs {
			level[op.Key] = max(level[op.Key], level[in]+1)
		}
	}
	keys := make([]int, len(cg.Ops))
	for k := range keys {
		keys[k] = k
	}
	slices.SortStableFunc(keys, func(a, b int) int { return level[a] - level[b] })
	rank := make([]int32, len(keys))
	for r, k := range keys {
		rank[k] = int32(r)
	}
	return rank
}

func TestOrderTreeReductionIsDepthFirst(t *testing.T) {
	cg, root := tree(8, 2)
	rank := Order(cg)
	checkTopological(t, cg, rank)
	// Leaves 0 and 1 combine into op 8: it must run right after them, before
	// the leaves of the other subtrees.
	if !(rank[0] < rank[8] && rank[1] < rank[8] && rank[8] < rank[2]) {
		t.Errorf("first combine not run right after its leaves: ranks %v", rank)
	}
	if rank[root] != int32(len(cg.Ops)-1) {
		t.Errorf("root rank %d, want last", rank[root])
	}
}

func TestOrderKeepsFewChunksAlive(t *testing.T) {
	const workers = 2
	for _, tc := range []struct{ leaves, fanin int }{{1000, 4}, {1000, 2}, {999, 8}} {
		cg, _ := tree(tc.leaves, tc.fanin)
		rank := Order(cg)
		checkTopological(t, cg, rank)
		depth := 0
		for n := tc.leaves; n > 1; n = (n + tc.fanin - 1) / tc.fanin {
			depth++
		}
		dfs := simulate(cg, rank, workers)
		bfs := simulate(cg, levelRank(cg), workers)
		t.Logf("tree of %d leaves, fan-in %d, depth %d on %d workers: peak %d chunks depth-first, %d breadth-first",
			tc.leaves, tc.fanin, depth, workers, dfs, bfs)
		if limit := 2 * workers * depth * tc.fanin; dfs > limit {
			t.Errorf("depth-first peak %d chunks, want at most %d", dfs, limit)
		}
		if bfs < 10*dfs {
			t.Errorf("breadth-first peak %d not far above depth-first %d: the test no longer shows the difference", bfs, dfs)
		}
	}
}

// TestOrderTwoReductionsOfOneInput has two tree reductions read the same
// leaves (x.mean() and x.var() of one x): the map of the second must run
// right after each leaf, as the first's does, so that few leaves are
// alive at once — not every leaf until the first reduction has ended.
func TestOrderTwoReductionsOfOneInput(t *testing.T) {
	const leaves, fanin, workers = 100, 4, 2
	b := &builder{}
	var x []int
	for range leaves {
		x = append(x, b.op("from_zarr", 1000))
	}
	for _, kind := range []string{"mean", "var"} {
		var level []int
		for _, l := range x {
			level = append(level, b.op(kind+".map", 3, l))
		}
		for len(level) > 1 {
			var next []int
			for i := 0; i < len(level); i += fanin {
				next = append(next, b.op(kind+".combine", 3, level[i:min(i+fanin, len(level))]...))
			}
			level = next
		}
	}
	rank := Order(&b.g)
	checkTopological(t, &b.g, rank)
	peak := simulate(&b.g, rank, workers)
	t.Logf("%d leaves read by two reductions: peak %d chunks", leaves, peak)
	if peak > 4*workers*fanin {
		t.Errorf("peak %d chunks alive: the second reduction's maps wait for the first reduction to end", peak)
	}
}

func TestOrderPrefersInputsMoreDependOn(t *testing.T) {
	// x feeds a long chain and the output; y feeds only the output. Dask runs
	// x first: more depends on it.
	b := &builder{}
	y := b.op("rand", 10)
	x := b.op("rand", 10)
	c1 := b.op("neg", 10, x)
	c2 := b.op("neg", 10, c1)
	out := b.op("add", 10, y, c2, x)
	rank := Order(&b.g)
	checkTopological(t, &b.g, rank)
	if rank[x] > rank[y] {
		t.Errorf("x (rank %d) should run before y (rank %d)", rank[x], rank[y])
	}
	_ = out
}

func TestOrderSmallerOutputFirst(t *testing.T) {
	b := &builder{}
	big := b.op("rand", 1000)
	small := b.op("rand", 10)
	b.op("add", 1000, big, small)
	rank := Order(&b.g)
	if rank[small] > rank[big] {
		t.Errorf("smaller input should run first: ranks %v", rank)
	}
}

func TestAssignSeedExample(t *testing.T) {
	// (a + b).sum() with a, b = rand(100, chunks=100): two RAND operands
	// feed ADD, then SUM. Both RANDs should start on one worker: they share
	// a descendant, so splitting them would move a chunk.
	b := &builder{}
	a := b.op("rand", 100)
	bb := b.op("rand", 100)
	add := b.op("add", 100, a, bb)
	b.op("sum", 1, add)
	p := Prepare(&b.g, []Worker{{"w1", 1}, {"w2", 1}}, nil)
	// Balance wins over locality for two initial operands on two workers,
	// as in Mars: one each.
	if p.Initial[0] != 1 || p.Initial[1] != 1 {
		t.Errorf("initial operands per worker %v, want [1 1]", p.Initial)
	}
	p1 := Prepare(&b.g, []Worker{{"w1", 1}}, nil)
	if p1.TransferBytes != 0 {
		t.Errorf("one worker moves %d bytes, want 0", p1.TransferBytes)
	}
}

func TestAssignIndependentChains(t *testing.T) {
	for _, tc := range []struct{ chains, workers int }{{10, 2}, {7, 3}, {100, 4}, {5, 8}} {
		b := &builder{}
		for i := 0; i < tc.chains; i++ {
			r := b.op("rand", 100)
			n := b.op("neg", 100, r)
			b.op("sum", 1, n)
		}
		ws := make([]Worker, tc.workers)
		for i := range ws {
			ws[i] = Worker{fmt.Sprintf("w%d", i), 1}
		}
		p := Prepare(&b.g, ws, nil)
		lo, hi := slices.Min(p.Initial), slices.Max(p.Initial)
		if hi-lo > 1 {
			t.Errorf("%d chains on %d workers: initial operands per worker %v, want balanced within one", tc.chains, tc.workers, p.Initial)
		}
		if p.TransferBytes != 0 {
			t.Errorf("%d independent chains on %d workers move %d bytes, want 0", tc.chains, tc.workers, p.TransferBytes)
		}
	}
}

func TestAssignWeightsBySlots(t *testing.T) {
	b := &builder{}
	for i := 0; i < 12; i++ {
		b.op("rand", 10)
	}
	p := Prepare(&b.g, []Worker{{"w1", 1}, {"w2", 2}}, nil)
	if p.Initial[0] != 4 || p.Initial[1] != 8 {
		t.Errorf("initial operands %v, want [4 8] for slots 1 and 2", p.Initial)
	}
}

func TestAssignTreeKeepsSubtreesTogether(t *testing.T) {
	cg, _ := tree(64, 4)
	p := Prepare(cg, []Worker{{"w1", 1}, {"w2", 1}}, nil)
	if p.Initial[0] != 32 || p.Initial[1] != 32 {
		t.Fatalf("initial %v, want [32 32]", p.Initial)
	}
	// Only the two halves' partial sums should cross: far less than a leaf
	// chunk a leaf.
	if p.TransferBytes > 2*8000 {
		t.Errorf("tree on two workers moves %d bytes, want at most two leaf chunks' worth", p.TransferBytes)
	}
}

func TestAssignDiamondAndStored(t *testing.T) {
	b := &builder{}
	s := b.op("stored", 100)
	b.g.Ops[s].Stored = 7
	r := b.op("rand", 100)
	l := b.op("neg", 100, r)
	rr := b.op("abs", 100, r)
	b.op("add", 100, l, rr, s)
	p := Prepare(&b.g, []Worker{{"w1", 1}, {"w2", 1}}, func(id uint64) int { return 1 })
	if p.Worker[s] != 1 {
		t.Errorf("stored chunk planned on %d, want 1 (where it is)", p.Worker[s])
	}
	if p.Initial[0]+p.Initial[1] != 1 {
		t.Errorf("initial %v: the stored op is not an initial operand", p.Initial)
	}
	checkTopological(t, &b.g, p.Rank)
}

// Assign, given Order's rank, places initial operands as Prepare does.
func TestAssignWithRankIsPrepares(t *testing.T) {
	cg, _ := tree(200, 4)
	b := &builder{g: *cg}
	r := b.op("rand", 10) // a second end, apart from the tree
	b.op("neg", 10, r)
	for _, ws := range [][]Worker{{{"w1", 1}}, {{"w1", 1}, {"w2", 3}}, {{"a", 2}, {"b", 1}, {"c", 1}}} {
		p := Prepare(&b.g, ws, nil)
		worker, initial := Assign(&b.g, Order(&b.g), ws, nil)
		for k, op := range b.g.Ops {
			if len(op.Inputs) == 0 && worker[k] != p.Worker[k] {
				t.Errorf("%d workers: initial op %d on %d, Prepare says %d", len(ws), k, worker[k], p.Worker[k])
			}
		}
		if !slices.Equal(initial, p.Initial) {
			t.Errorf("%d workers: initial counts %v, Prepare says %v", len(ws), initial, p.Initial)
		}
	}
}

// TestGraphIsOrderAndAssign checks that a Graph orders and assigns its
// chunk graph as Order and Assign do, once for both.
func TestGraphIsOrderAndAssign(t *testing.T) {
	cg, _ := tree(300, 4)
	b := &builder{g: *cg}
	x := b.op("rand", 10)
	b.op("add", 10, x, b.op("rand", 20))
	g := NewGraph(&b.g)
	rank := g.Order()
	if want := Order(&b.g); !slices.Equal(rank, want) {
		t.Fatalf("rank %v, want %v", rank, want)
	}
	for _, ws := range [][]Worker{{{"w1", 1}}, {{"w1", 2}, {"w2", 2}}} {
		worker, initial := g.Assign(rank, ws, nil)
		wantWorker, wantInitial := Assign(&b.g, rank, ws, nil)
		if !slices.Equal(worker, wantWorker) || !slices.Equal(initial, wantInitial) {
			t.Errorf("%d workers: %v %v, want %v %v", len(ws), worker, initial, wantWorker, wantInitial)
		}
	}
}

func BenchmarkPrepare(b *testing.B) {
	for _, n := range []int{1 << 16, 1 << 20} {
		cg, _ := tree(n, 4)
		ws := []Worker{{"w1", 2}, {"w2", 2}}
		b.Run(fmt.Sprint(len(cg.Ops)), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				Prepare(cg, ws, nil)
			}
		})
	}
}
