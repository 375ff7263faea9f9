package core

import (
	"sort"

	"marsfs/exec/plan"
	"marsfs/tensor/chunk"
)

// PlanOrder ranks ops by plan.Order: Dask's depth-first ordering with the
// Mars rules (operands deeper ones depend on first, smaller outputs first).
// It is the Core's default order.
func PlanOrder(g *chunk.Graph) []int {
	r := plan.Order(g)
	rank := make([]int, len(r))
	for k, v := range r {
		rank[k] = int(v)
	}
	return rank
}

// PlanAssign places initial ops as plan.Prepare does, Mars' heuristic (a
// search of the undirected graph from an unassigned initial op fills one
// worker's share at a time), taking initial ops in the order of rank. It
// is the Core's default assignment.
func PlanAssign(g *chunk.Graph, rank []int, workers []WorkerLoad) []string {
	if len(workers) == 0 {
		return nil
	}
	r := make([]int32, len(rank))
	for k, v := range rank {
		r[k] = int32(v)
	}
	return planAssign(plan.NewGraph(g), g, r, workers)
}

// planAssign is PlanAssign on g readied for planning as pg, with rank as
// plan.Order makes it.
func planAssign(pg *plan.Graph, g *chunk.Graph, rank []int32, workers []WorkerLoad) []string {
	a := planAssignIndex(pg, g, rank, workers)
	if a.index == nil {
		return nil
	}
	out := make([]string, len(g.Ops))
	for k := range out {
		out[k] = a.at(k)
	}
	return out
}

// planAssignIndex is planAssign as the Core keeps it: a worker's index an
// op, 4 bytes where a name is 16 (and a pointer the collector scans).
func planAssignIndex(pg *plan.Graph, g *chunk.Graph, rank []int32, workers []WorkerLoad) assignment {
	if len(workers) == 0 {
		return assignment{}
	}
	ws := make([]plan.Worker, len(workers))
	names := make([]string, len(workers))
	for i, w := range workers {
		ws[i] = plan.Worker{Name: w.Name, Slots: w.Slots}
		names[i] = w.Name
	}
	worker, _ := pg.Assign(rank, ws, nil)
	for k, op := range g.Ops {
		if len(op.Inputs) != 0 || op.Stored != 0 {
			worker[k] = -1 // only initial ops are placed ahead
		}
	}
	return assignment{index: worker, names: names}
}

// An assignment is where the initial ops start: by key, a worker's index
// in names, -1 for none; or, as an AssignFunc gives it, a name an op.
type assignment struct {
	index []int32
	names []string
	byKey []string // an AssignFunc's
}

// at is the worker the assignment gives op k, "" for none.
func (a *assignment) at(k int) string {
	if a.byKey != nil {
		return AssignedTo(a.byKey, k)
	}
	if k < len(a.index) && a.index[k] >= 0 {
		return a.names[a.index[k]]
	}
	return ""
}

// An OrderFunc ranks the ops of a graph: rank[k] is op k's priority, lower
// first. Schedulers and workers run READY ops in rank order.
type OrderFunc func(g *chunk.Graph) []int

// An AssignFunc places the initial ops (no inputs, not stored) of a graph on
// workers before the graph starts: the result holds, by op key, the name
// of the worker an op starts on, "" for none; it is nil or shorter than
// the graph when the ops past its end have none.
type AssignFunc func(g *chunk.Graph, rank []int, workers []WorkerLoad) []string

// A WorkerLoad is what the scheduling core knows of a worker's capacity.
type WorkerLoad struct {
	Name        string
	Slots       int
	Outstanding int // ops of the job sent to it and not yet reported
}

// Costs with which pickWorker weighs moving inputs against waiting: an
// input fetched from another worker costs its bytes plus fetchCost, and
// each op that must end before a worker has a free slot costs waitCost.
// Moving a chunk of a few MiB takes about as long as a typical op runs.
const (
	fetchCost = 64 << 10
	waitCost  = 1 << 20
)

// pickWorker chooses the worker for a non-initial op among those with room:
// the one where it would start soonest, counting the bytes of its inputs
// held elsewhere and the ops ahead of it when the worker's slots are all
// busy; ties go to the most free slots, then the name. It avoids avoid
// unless that is the only worker. holder[i] and nbytes[i] describe input i;
// names are the workers' names, sorted. It returns "" when no worker has
// room.
func pickWorker(holders []string, nbytes []int64, workers map[string]*workerState, names []string, avoid string) string {
	var all int64
	for _, b := range nbytes {
		all += b
	}
	best := ""
	var bestCost int64
	bestFree := 0
	for _, name := range names {
		w := workers[name]
		if !w.room() || name == avoid && len(workers) > 1 {
			continue
		}
		cost := all
		for i, h := range holders {
			if h == name {
				cost -= nbytes[i]
			} else {
				cost += fetchCost
			}
		}
		free := w.slots - w.outstanding
		if free <= 0 {
			cost += int64(1-free) * waitCost
		}
		if best == "" || cost < bestCost || (cost == bestCost && free > bestFree) {
			best, bestCost, bestFree = name, cost, free
		}
	}
	return best
}

func SortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
