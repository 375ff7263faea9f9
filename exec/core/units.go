package core

import (
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// Dispatch units. An op that computes next to nothing (a sum of ten
// numbers) costs the cluster far more in messages and bookkeeping than in
// running: a submission, a report and a round trip each. Like Mars'
// subtasks, the Core therefore sends runs of small ops that belong together
// as one unit: the worker runs them one after the other in one slot and
// reports each as it ends, many reports to a message. The Core still tracks
// every op (its states, its chunk, its retries); only the dispatch is
// shared.
//
// Units are formed once, when the job starts, walking the ops in rank
// order:
//
//   - an initial op joins the open unit of the worker it is assigned to, or
//     opens one;
//   - any other op joins the unit that makes all its inputs but shared
//     leaves (initial ops read by several ops, which join no unit, like a
//     broadcast scalar) and stored chunks, or opens a unit of its own: such a
//     unit leads with it. So only its first op reads chunks made by other
//     units or by large ops: the unit is READY when its first op is and the
//     shared leaves it reads exist;
//   - a unit holds at most UnitOps ops, touching at most UnitCost bytes
//     and reading and making chunks of at most a quarter of that (see
//     opCost), and an op above an eighth of either bound, or a stored one,
//     joins none.
//
// In a tree reduction over thousands of tiny chunks this sends a worker
// whole subtrees at once: the leaves and the combines above them, so the
// chunks inside a unit live only until the unit's reports come back and a
// unit costs about one round trip. Large ops stay alone, so jobs of big
// chunks are dispatched and balanced as before. A unit goes out whole only
// while none of its ops has run; ops retried after a failure or a lost
// worker go alone.

// opCost estimates what an op costs a unit: held, the bytes of the chunks
// it reads and makes, which live at least until the unit's reports are
// heard; and work, the bytes it touches, held and besides them, for a
// fused expression the values it generates on the way, for a fused chain
// the chunks its members pass on, and the blocks a product draws. Work
// stands for time: the sum of a million ones holds 8 bytes but takes as
// long as adding a million numbers. (A product of random blocks summed at
// once, (A @ B).sum(), reads and makes only a number, but multiplies for a
// long while: in a unit, its worker's other slot would idle and no other
// worker could take its turn.)
func opCost(g *chunk.Graph, op *chunk.Op) (held, work int64) {
	held = int64(op.NBytes())
	for i, in := range op.Inputs {
		held += op.InputBytes(i, int64(g.Ops[in].NBytes()))
	}
	work = held + op.ScratchBytes()
	switch a := op.Args.(type) {
	case chunk.ExprArgs:
		work += int64(tensor.NumElements(a.Shape)) * 8
	case chunk.FuseArgs:
		for i := range a.Members[:max(len(a.Members)-1, 0)] {
			work += int64(a.Members[i].NBytes())
		}
	}
	return held, work
}

// OpWork is op's work in g, the bytes it touches (see opCost): what the
// cost model takes for its time. A graph's progress is told by the work
// done, not the count of its operands, whose sizes differ.
func OpWork(g *chunk.Graph, op *chunk.Op) int64 {
	_, w := opCost(g, op)
	return w
}

// unitHeld is the share of UnitCost that bounds the chunk bytes a unit
// reads and makes. Those chunks live until the unit's reports are heard,
// so the units waiting at a worker should hold a few MiB of them (8 MiB a
// unit by default, and a unit of leaves counts as one against RootDepth),
// while a unit whose ops only generate values and make a number may run
// for a millisecond or more, which is what hides the round trip of its
// reports.
const unitHeld = 4

// formUnits groups the job's small ops into units; assign maps initial ops
// to their workers.
func (c *Core) formUnits(assign *assignment) {
	if c.opts.UnitOps <= 1 {
		return
	}
	n := len(c.g.Ops)
	byRank := make([]int32, n) // an int32 column: 4 bytes an op of fresh pages, not 8
	for k := range byRank {
		byRank[k] = -1
	}
	perm := true // rank is a permutation of the keys, as orders make it
	for k, r := range c.rank {
		if r < 0 || int(r) >= n || byRank[r] >= 0 {
			perm = false
			break
		}
		byRank[r] = int32(k)
	}
	if !perm {
		for k := range byRank {
			byRank[k] = int32(k)
		}
		slices.SortStableFunc(byRank, func(a, b int32) int { return int(c.rank[a]) - int(c.rank[b]) })
	}
	c.unitOf = make([]int32, n)
	for k := range c.unitOf {
		c.unitOf[k] = -1
	}
	// The walk counts each unit's ops; their lists are cut from one slab
	// after it.
	var size []int32
	var held, work []int64
	open := make(map[string]int32) // the open unit of each worker's initial ops
	lastW, lastU := "", int32(-1)  // ... of the worker met last, which the next op mostly has
	maxWork, maxHeld := c.opts.UnitCost, c.opts.UnitCost/unitHeld
	fits := func(u int32, oh, ow int64) bool {
		return int(size[u]) < c.opts.UnitOps && held[u]+oh <= maxHeld && work[u]+ow <= maxWork
	}
	add := func(u int32, k int, oh, ow int64) {
		size[u]++
		held[u] += oh
		work[u] += ow
		c.unitOf[k] = u
	}
	fresh := func(k int, oh, ow int64) int32 {
		u := int32(len(size))
		size = append(size, 0)
		held = append(held, 0)
		work = append(work, 0)
		add(u, k, oh, ow)
		return u
	}
	for _, k32 := range byRank {
		k := int(k32)
		op := c.g.Ops[k]
		if op.Stored != 0 {
			continue
		}
		oh, ow := opCost(c.g, op)
		if oh > maxHeld/8 || ow > maxWork/8 {
			continue
		}
		if c.ops[k].initial {
			if len(c.successors(k)) > 1 {
				continue // a leaf shared by many, like a broadcast scalar
			}
			w := assign.at(k)
			u, ok := lastU, lastU >= 0 && w == lastW
			if !ok {
				u, ok = open[w]
			}
			if ok && fits(u, oh, ow) {
				add(u, k, oh, ow)
			} else {
				u = fresh(k, oh, ow)
				open[w] = u
			}
			lastW, lastU = w, u
			continue
		}
		u := int32(-1)
		for _, in := range op.Inputs {
			v := c.unitOf[in]
			if v < 0 && c.external(in) {
				continue
			}
			if v < 0 || u >= 0 && v != u {
				u = -2 // inputs from several units, or from a large op
				break
			}
			u = v
		}
		if u >= 0 && fits(u, oh, ow) {
			add(u, k, oh, ow)
		} else {
			fresh(k, oh, ow)
		}
	}
	// Units of one op are no units. The others keep their order, and
	// their ops the rank order.
	kept := make([]int32, len(size)) // a unit's index among those kept, or -1
	nkept, total := 0, 0
	for u, n := range size {
		kept[u] = -1
		if n > 1 {
			kept[u] = int32(nkept)
			nkept++
			total += int(n)
		}
	}
	c.units = make([][]int32, nkept)
	slab := make([]int32, total)
	for u, n := range size {
		if v := kept[u]; v >= 0 {
			c.units[v], slab = slab[:0:n], slab[n:]
		}
	}
	for _, k := range byRank {
		if u := c.unitOf[k]; u >= 0 {
			v := kept[u]
			c.unitOf[k] = v
			if v >= 0 {
				c.units[v] = append(c.units[v], k)
			}
		}
	}
	c.unitLeft = make([]int32, nkept)
}

// external reports whether op k is a shared leaf or a stored chunk, which
// the ops of a unit may read besides the chunks the unit makes.
func (c *Core) external(k int) bool {
	return c.g.Ops[k].Stored != 0 || c.ops[k].initial && len(c.successors(k)) > 1
}

// intact reports whether none of unit u's ops has been sent or run, and
// the chunks its ops read from outside it exist, so that the unit can go
// out whole.
func (c *Core) intact(u int32) bool {
	if c.stopping {
		return false
	}
	for i, m := range c.units[u] {
		o := &c.ops[m]
		if o.attempt != 0 || o.sent || (o.state != Unscheduled && o.state != Ready) {
			return false
		}
		if i == 0 {
			continue // READY: its inputs exist
		}
		for _, in := range c.g.Ops[m].Inputs {
			if c.unitOf[in] != u && c.ops[in].state != Finished {
				return false
			}
		}
	}
	return true
}
