package plan

import (
	"math"
	"slices"

	"marsfs/tensor/chunk"
)

// Worker is a worker as the planner sees it.
type Worker struct {
	Name  string
	Slots int // weight of its share of the initial operands (at least 1)
}

// A Plan says how a chunk graph should run.
type Plan struct {
	// Rank[k] is op k's place in the run order: among ready operands the
	// smallest rank runs first.
	Rank []int32
	// Worker[k] is the index of the worker op k is planned on. Initial
	// operands keep it; the runtime may move the others (it places each where
	// most of its input bytes are once they exist). Stored ops are where
	// their chunk is, -1 if unknown.
	Worker []int32
	// Initial[w] is the number of initial operands given to worker w.
	Initial []int
	// TransferBytes estimates the bytes that will cross between workers if
	// every later operand runs where most of its input bytes are.
	TransferBytes int64
}

// graph is the adjacency of a chunk graph in compact form.
type graph struct {
	ops      []*chunk.Op
	succOff  []int32 // successors of k: succ[succOff[k]:succOff[k+1]]
	succ     []int32
	nbytes   []int64
	indegree []int32
}

func newGraph(cg *chunk.Graph) *graph {
	n := len(cg.Ops)
	g := &graph{ops: cg.Ops, succOff: make([]int32, n+1), nbytes: make([]int64, n), indegree: make([]int32, n)}
	for _, op := range cg.Ops {
		g.nbytes[op.Key] = int64(op.NBytes())
		g.indegree[op.Key] = int32(len(op.Inputs))
		for _, in := range op.Inputs {
			g.succOff[in+1]++
		}
	}
	for k := 0; k < n; k++ {
		g.succOff[k+1] += g.succOff[k]
	}
	g.succ = make([]int32, g.succOff[n])
	fill := slices.Clone(g.succOff[:n])
	for _, op := range cg.Ops {
		for _, in := range op.Inputs {
			g.succ[fill[in]] = int32(op.Key)
			fill[in]++
		}
	}
	return g
}

func (g *graph) successors(k int) []int32 { return g.succ[g.succOff[k]:g.succOff[k+1]] }

// Prepare orders cg and assigns its initial operands to workers. where
// locates the chunks of Stored ops (a worker index, or -1); it may be nil.
func Prepare(cg *chunk.Graph, workers []Worker, where func(id uint64) int) *Plan {
	g := newGraph(cg)
	p := &Plan{Rank: order(g)}
	p.Worker, p.Initial = assign(g, p.Rank, workers, where)
	p.TransferBytes = estimateTransfer(g, p.Rank, p.Worker, len(workers))
	return p
}

// Assign assigns the initial operands of cg to workers as Prepare does,
// given the rank of every op (as Order returns it): it returns the Worker
// and Initial of the plan Prepare would make with that rank, and neither
// orders the graph nor estimates its transfers.
func Assign(cg *chunk.Graph, rank []int32, workers []Worker, where func(id uint64) int) (worker []int32, initial []int) {
	return assign(newGraph(cg), rank, workers, where)
}

// Order returns the run rank of every op of cg (see the package comment).
func Order(cg *chunk.Graph) []int32 { return order(newGraph(cg)) }

// A Graph is a chunk graph readied for planning: ordering it and then
// assigning it, as a scheduler does when a job starts, reads the graph's
// adjacency once instead of twice.
type Graph struct{ g *graph }

// NewGraph readies cg for planning; cg must not change while the Graph is
// used.
func NewGraph(cg *chunk.Graph) *Graph { return &Graph{newGraph(cg)} }

// Order is Order of the Graph's chunk graph.
func (g *Graph) Order() []int32 { return order(g.g) }

// Assign is Assign of the Graph's chunk graph.
func (g *Graph) Assign(rank []int32, workers []Worker, where func(id uint64) int) (worker []int32, initial []int) {
	return assign(g.g, rank, workers, where)
}

func order(g *graph) []int32 {
	n := len(g.ops)
	// dependents[k]: how much rests on k, counted as 1 + the sum over its
	// successors (Dask's measure: exact on trees, an overcount on diamonds,
	// and linear to compute). height[k]: the longest path from k to an end.
	dependents := make([]float64, n)
	height := make([]int32, n)
	for k := n - 1; k >= 0; k-- {
		d, h := 1.0, int32(0)
		for _, s := range g.successors(k) {
			d += dependents[s]
			h = max(h, height[s]+1)
		}
		dependents[k] = math.Min(d, math.MaxFloat64/4)
		height[k] = h
	}
	// before says which input of an op to run first: the one the most rests
	// on, then the one with the longest chain above it (Mars: deeper
	// operands first), then the smaller output, then the older op.
	before := func(a, b int) int {
		switch {
		case dependents[a] != dependents[b]:
			if dependents[a] > dependents[b] {
				return -1
			}
			return 1
		case height[a] != height[b]:
			return int(height[b] - height[a])
		case g.nbytes[a] != g.nbytes[b]:
			if g.nbytes[a] < g.nbytes[b] {
				return -1
			}
			return 1
		}
		return a - b
	}
	rank := make([]int32, n)
	for k := range rank {
		rank[k] = -1
	}
	next := int32(0)
	// An op is numbered as soon as its last input is, when the walk has
	// not met it yet: the walk from one end would otherwise leave the ops
	// of other ends that read the same chunk (x.mean() and x.var() both
	// reading x) to the walks from those ends, and keep every chunk of x
	// alive until then. unranked[k] counts k's inputs not yet numbered.
	unranked := slices.Clone(g.indegree)
	var ready []int32
	number := func(k int) {
		rank[k] = next
		next++
		ready = append(ready[:0], int32(k))
		for len(ready) > 0 {
			j := ready[len(ready)-1]
			ready = ready[:len(ready)-1]
			for _, s := range g.successors(int(j)) {
				if unranked[s]--; unranked[s] == 0 && rank[s] == -1 {
					rank[s] = next
					next++
					ready = append(ready, s)
				}
			}
		}
	}
	// A post-order walk from each end of the graph down its inputs numbers an
	// op right after the inputs it needs, subtree by subtree.
	type frame struct {
		op     int
		inputs []int // sorted, still to visit
	}
	var stack []frame
	// The walk sorts the inputs of each op it meets once, in copies cut
	// from one slab (an op's inputs are read only).
	var slab []int
	sorted := func(k int) []int {
		in := g.ops[k].Inputs
		if len(in) > 1 {
			if len(slab) < len(in) {
				slab = make([]int, max(len(in), 4096))
			}
			c := slab[:len(in):len(in)]
			slab = slab[len(in):]
			copy(c, in)
			slices.SortFunc(c, before)
			in = c
		}
		return in
	}
	for root := 0; root < n; root++ {
		if len(g.successors(root)) != 0 || rank[root] >= 0 {
			continue
		}
		stack = append(stack[:0], frame{root, sorted(root)})
		rank[root] = -2 // on the stack
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if len(top.inputs) == 0 {
				number(top.op)
				stack = stack[:len(stack)-1]
				continue
			}
			in := top.inputs[0]
			top.inputs = top.inputs[1:]
			if rank[in] == -1 {
				rank[in] = -2
				stack = append(stack, frame{in, sorted(in)})
			}
		}
	}
	return rank
}

// assign gives each initial operand (no inputs, not stored) a worker.
func assign(g *graph, rank []int32, workers []Worker, where func(uint64) int) ([]int32, []int) {
	n := len(g.ops)
	worker := make([]int32, n)
	for k := range worker {
		worker[k] = -1
		if op := g.ops[k]; op.Stored != 0 && where != nil {
			worker[k] = int32(where(op.Stored))
		}
	}
	counts := make([]int, len(workers))
	if len(workers) == 0 {
		return worker, counts
	}
	ninitial := 0
	for _, op := range g.ops {
		if len(op.Inputs) == 0 && op.Stored == 0 {
			ninitial++
		}
	}
	initial := make([]int32, 0, ninitial)
	isInitial := func(k int32) bool { op := g.ops[k]; return len(op.Inputs) == 0 && op.Stored == 0 }
	if byRank, ok := inverse(rank); ok {
		for _, k := range byRank {
			if isInitial(k) {
				initial = append(initial, k)
			}
		}
	} else {
		for k := range g.ops {
			if isInitial(int32(k)) {
				initial = append(initial, int32(k))
			}
		}
		slices.SortFunc(initial, func(a, b int32) int { return int(rank[a] - rank[b]) })
	}
	totalSlots := 0
	for _, w := range workers {
		totalSlots += max(w.Slots, 1)
	}
	// Search the undirected graph breadth first; seen[k] holds the number of
	// the search that last met k.
	seen := make([]int32, n)
	search := int32(0)
	queue := make([]int32, 0, n) // queue[head:] is still to visit; no op twice a search
	cursor, assigned, cumSlots := 0, 0, 0
	for w := range workers {
		cumSlots += max(workers[w].Slots, 1)
		share := len(initial)*cumSlots/totalSlots - assigned
		if w == len(workers)-1 {
			share = len(initial) - assigned
		}
		for counts[w] < share {
			for cursor < len(initial) && worker[initial[cursor]] >= 0 {
				cursor++
			}
			if cursor == len(initial) {
				break
			}
			search++
			queue = append(queue[:0], initial[cursor])
			seen[initial[cursor]] = search
			for head := 0; head < len(queue) && counts[w] < share; {
				k := queue[head]
				head++
				op := g.ops[k]
				if len(op.Inputs) == 0 && op.Stored == 0 && worker[k] < 0 {
					worker[k] = int32(w)
					counts[w]++
				}
				visit := func(m int32) {
					if seen[m] != search {
						seen[m] = search
						queue = append(queue, m)
					}
				}
				for _, in := range op.Inputs {
					visit(int32(in))
				}
				for _, s := range g.successors(int(k)) {
					visit(s)
				}
			}
		}
		assigned += counts[w]
	}
	return worker, counts
}

// estimateTransfer places every non-initial operand, in rank order, on the
// worker holding the most of its input bytes (ties: the worker with the
// fewest operands so far) and sums the input bytes that then cross workers.
// It fills in worker for those operands.
func estimateTransfer(g *graph, rank []int32, worker []int32, nworkers int) int64 {
	if nworkers == 0 {
		return 0
	}
	load := make([]int, nworkers)
	for _, w := range worker {
		if w >= 0 && int(w) < nworkers {
			load[w]++
		}
	}
	byRank, ok := inverse(rank)
	if !ok {
		byRank = make([]int32, len(g.ops))
		for k := range byRank {
			byRank[k] = int32(k)
		}
		slices.SortFunc(byRank, func(a, b int32) int { return int(rank[a] - rank[b]) })
	}
	local := make([]int64, nworkers)
	var transfer int64
	for _, k := range byRank {
		op := g.ops[k]
		if len(op.Inputs) == 0 {
			continue
		}
		clear(local)
		var total int64
		for _, in := range op.Inputs {
			total += g.nbytes[in]
			if w := worker[in]; w >= 0 && int(w) < nworkers {
				local[w] += g.nbytes[in]
			}
		}
		best := 0
		for w := 1; w < nworkers; w++ {
			if local[w] > local[best] || local[w] == local[best] && load[w] < load[best] {
				best = w
			}
		}
		worker[k] = int32(best)
		load[best]++
		transfer += total - local[best]
	}
	return transfer
}

// inverse returns the ops in rank order when rank is a permutation of the
// op keys, as order makes it: sorting them by rank would give the same.
func inverse(rank []int32) ([]int32, bool) {
	byRank := make([]int32, len(rank))
	for k := range byRank {
		byRank[k] = -1
	}
	for k, r := range rank {
		if r < 0 || int(r) >= len(rank) || byRank[r] >= 0 {
			return nil, false
		}
		byRank[r] = int32(k)
	}
	return byRank, true
}
