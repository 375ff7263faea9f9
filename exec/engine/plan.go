package engine

import (
	"sort"
	"sync"

	"marsfs/exec/core"
	"marsfs/tensor/chunk"
)

// A Plan is a graph's chunk graph as planned: the placement a runner gave
// it, completed by placing every later operand where most of its input
// bytes are, as the runtime places them.
type Plan struct {
	Rank    []int32  // as in Placement; nil if the runner has no order
	Workers []string // by name
	// Initial[w] is the number of initial operands planned on Workers[w].
	Initial []int
	// Worker[k] is where op k is planned ("" if unknown).
	Worker []string
	// TransferBytes is the number of input bytes planned to cross from one
	// worker to another.
	TransferBytes int64
	// PeakBytes[w] is the most bytes of the graph's chunks Workers[w] is
	// projected to hold at once: the ops run one at a time in rank order
	// where they are planned, a chunk made when its op runs and freed when
	// its last reader has run, unless it is an output.
	PeakBytes []int64
}

// planned holds a graph's placement once its runner has made it.
type planned struct {
	mu   sync.Mutex
	ch   chan struct{} // closed once done; made at first use
	done bool
	p    core.Placement
}

func (pl *planned) wait() <-chan struct{} {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.ch == nil {
		pl.ch = make(chan struct{})
	}
	return pl.ch
}

// setPlacement records the placement of g's job; later calls are ignored.
func (g *Graph) setPlacement(p core.Placement) {
	pl := &g.plan
	pl.wait()
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.done {
		return
	}
	pl.done, pl.p = true, p
	close(pl.ch)
}

// addPlacement returns the Job.Plan of a later stage of g, whose ops start
// at key off: it adds the stage's placement to g's, its ranks after those
// of the earlier stages.
func (g *Graph) addPlacement(off int) func(core.Placement) {
	return func(p core.Placement) {
		pl := &g.plan
		pl.wait()
		pl.mu.Lock()
		defer pl.mu.Unlock()
		if !pl.done {
			pl.done = true
			close(pl.ch)
		}
		old := pl.p
		merged := core.Placement{Workers: old.Workers}
		merged.Worker.Grow(off + p.Worker.Len())
		if len(merged.Workers) == 0 {
			merged.Workers = p.Workers
		}
		for k := range min(old.Worker.Len(), off) {
			merged.Worker.Set(k, old.Worker.At(k))
		}
		for k := range p.Worker.Len() {
			merged.Worker.Set(off+k, p.Worker.At(k))
		}
		if old.Rank != nil || p.Rank != nil {
			merged.Rank = rankFor(old.Rank, off)
			for k := range p.Rank {
				merged.Rank = append(merged.Rank, int32(off)+p.Rank[k])
			}
		}
		pl.p = merged
	}
}

// rankFor returns rank for n ops: rank itself, or extended with the ops
// past its end ranked in key order after it.
func rankFor(rank []int32, n int) []int32 {
	out := make([]int32, n)
	copy(out, rank)
	for k := len(rank); k < n; k++ {
		out[k] = int32(k)
	}
	return out
}

// Planned returns a channel closed once g's runner has planned it. A graph
// that fails before it is planned (no workers) never is; wait on Done too.
func (g *Graph) Planned() <-chan struct{} { return g.plan.wait() }

// Plan returns g's plan, or false if its runner has not planned it yet.
func (g *Graph) Plan() (*Plan, bool) {
	pl := &g.plan
	pl.mu.Lock()
	done, p := pl.done, pl.p
	pl.mu.Unlock()
	if !done {
		return nil, false
	}
	cg := g.Chunks()
	if p.Rank != nil && len(p.Rank) < len(cg.Ops) {
		// A later stage tiled but not planned yet.
		p.Rank = rankFor(p.Rank, len(cg.Ops))
	}
	return makePlan(cg, p), true
}

// makePlan completes a placement: each op that is neither initial nor
// stored goes to the worker holding the most bytes of its inputs (ties to
// the first by name), in key order, which is a topological order.
func makePlan(cg *chunk.Graph, pl core.Placement) *Plan {
	p := &Plan{Rank: pl.Rank, Worker: make([]string, len(cg.Ops))}
	index := make(map[string]int)
	for _, w := range pl.Workers {
		p.Workers = append(p.Workers, w.Name)
	}
	sort.Strings(p.Workers)
	for i, w := range p.Workers {
		index[w] = i
	}
	p.Initial = make([]int, len(p.Workers))
	for _, op := range cg.Ops {
		k := op.Key
		if w := pl.Worker.At(k); w != "" {
			p.Worker[k] = w
			if i, ok := index[w]; ok && len(op.Inputs) == 0 && op.Stored == 0 {
				p.Initial[i]++
			}
			continue
		}
		if len(op.Inputs) == 0 {
			continue // a stored chunk nobody holds, or no workers
		}
		by := make(map[string]int64)
		for _, in := range op.Inputs {
			if w := p.Worker[in]; w != "" {
				by[w] += int64(cg.Ops[in].NBytes())
			}
		}
		best, most := "", int64(-1)
		for _, w := range p.Workers {
			if b, ok := by[w]; ok && b > most {
				best, most = w, b
			}
		}
		p.Worker[k] = best
		for _, in := range op.Inputs {
			if w := p.Worker[in]; w != "" && best != "" && w != best {
				p.TransferBytes += int64(cg.Ops[in].NBytes())
			}
		}
	}
	p.PeakBytes = projectPeaks(cg, p, index)
	return p
}

// projectPeaks walks cg's ops in rank order (key order without one), as
// Cubed projects a plan's memory: each op's chunk is held on its planned
// worker from when it runs until its last reader has, outputs to the end;
// it returns the most each worker holds at once. Stored chunks, made
// before the graph, do not count.
func projectPeaks(cg *chunk.Graph, p *Plan, index map[string]int) []int64 {
	peaks := make([]int64, len(p.Workers))
	if len(p.Workers) == 0 {
		return peaks
	}
	order := make([]int, len(cg.Ops))
	for k := range order {
		order[k] = k
	}
	if p.Rank != nil {
		sort.SliceStable(order, func(i, j int) bool { return p.Rank[order[i]] < p.Rank[order[j]] })
	}
	readers := make([]int, len(cg.Ops))
	for _, op := range cg.Ops {
		for _, in := range op.Inputs {
			readers[in]++
		}
	}
	kept := make([]bool, len(cg.Ops))
	for _, o := range cg.Outputs {
		for _, k := range o.Keys {
			kept[k] = true
		}
	}
	held := make([]int64, len(p.Workers))
	at := func(k int) int {
		if i, ok := index[p.Worker[k]]; ok {
			return i
		}
		return -1
	}
	for _, k := range order {
		op := cg.Ops[k]
		if w := at(k); w >= 0 && op.Stored == 0 {
			held[w] += int64(op.NBytes())
			peaks[w] = max(peaks[w], held[w])
		}
		for _, in := range op.Inputs {
			if readers[in]--; readers[in] == 0 && !kept[in] && cg.Ops[in].Stored == 0 {
				if w := at(in); w >= 0 {
					held[w] -= int64(cg.Ops[in].NBytes())
				}
			}
		}
		if readers[k] == 0 && !kept[k] && op.Stored == 0 {
			if w := at(k); w >= 0 {
				held[w] -= int64(op.NBytes())
			}
		}
	}
	return peaks
}
