package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"marsfs/exec/core"
	"marsfs/tensor/chunk"
)

// This file holds lineage across graphs: how a kept chunk lost with its
// worker is made again, bit for bit, long after the graph that made it
// ended.
//
// When a graph succeeds, its session keeps a Lineage of it: the chunk ops
// from which its kept chunks can be reached going back along inputs, down
// to generators, file reads, and the chunks of earlier tensors it read
// (stored ops). The ops are the graph's own (shared, not copied), and only
// those reachable from a kept chunk: of `y = (x * 2).sum(axis=0)` over a
// million chunks, y's lineage holds the few thousand ops of its reduction
// tree and their inputs, not what else the spec computed. A stored op of
// the lineage names a chunk of an earlier tensor; the lineage points to
// the lineage of that tensor's graph (its parents), so a tensor whose
// inputs were since dropped or replaced can still be made again. An
// upload has no lineage: its chunks are kept on two workers instead.
//
// A lost chunk is made again by an ordinary job (restore): the ops that
// make it, and those of its inputs that are gone too, down to chunks that
// still exist, which the job reads as stored ops. Every op keeps its
// chunk's global ID, so the chunk comes back under the ID the tensor names,
// and kernels and random numbers being deterministic, with the same bytes.
// Restores run one at a time in an engine: two readers of one tensor wait
// for one restore, and two restores never make one intermediate chunk
// twice.

// A Lineage is what a graph kept of how it made its kept chunks. Its
// columns are the graph's own where it can: of a lineage that is the whole
// graph in key order (a reduction of everything the spec made, W4), ops
// and ids are the graph's slices, and no byte an operand is added.
type Lineage struct {
	ops []*chunk.Op // compute ops and stored ops (references to chunks of other graphs)
	ids []uint64    // ids[i]: the chunk ops[i] makes or names; ascending
	// The chunk IDs op i reads: of a whole graph's lineage, byKey[in] for
	// each of its inputs in (byKey is the graph's chunk IDs by key);
	// otherwise ins[off[i]:off[i+1]], so that a small lineage of a large
	// graph does not hold all of the graph's IDs.
	byKey []uint64
	ins   []uint64
	off   []int32
	// parents are the lineages of the earlier tensors its stored ops name.
	parents []*Lineage
}

// Ops is the number of ops the lineage holds, stored ops included.
func (l *Lineage) Ops() int {
	if l == nil {
		return 0
	}
	return len(l.ops)
}

// newLineage returns the lineage of the chunks keep of graph cg, whose op
// k makes (or, stored, names) chunk ids[k]. parent gives the lineage of a
// chunk of an earlier graph, if it has one.
func newLineage(cg *chunk.Graph, ids []uint64, keep []int, parent func(id uint64) *Lineage) *Lineage {
	// A stored op may name a chunk made by an earlier stage of the same
	// graph: it is followed to the op that made it. (Only the chunks
	// stored ops name are looked up: a map of every op would cost most
	// of the time of a graph of a million.)
	named := make(map[uint64]bool)
	for _, op := range cg.Ops {
		if op.Stored != 0 {
			named[op.Stored] = true
		}
	}
	made := make(map[uint64]int)
	if len(named) > 0 {
		for k, op := range cg.Ops {
			if op.Stored == 0 && named[ids[k]] {
				made[ids[k]] = k
			}
		}
	}
	// The ops reached are marked (seen, then kept), and listed in key
	// order after: of a lineage that is the whole graph, no list is made.
	const seen, kept = 1, 2
	mark := make([]uint8, len(cg.Ops))
	stack := append([]int(nil), keep...)
	nkept := 0
	for len(stack) > 0 {
		k := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if mark[k] != 0 {
			continue
		}
		mark[k] = seen
		op := cg.Ops[k]
		if op.Stored != 0 {
			if m, ok := made[op.Stored]; ok {
				stack = append(stack, m)
				continue
			}
		}
		mark[k] = kept
		nkept++
		stack = append(stack, op.Inputs...)
	}
	if nkept == len(cg.Ops) && ascending(ids) {
		// Every op in key order, and so by ID: the graph's columns.
		l := &Lineage{ops: cg.Ops[:len(ids):len(ids)], ids: ids[:len(ids):len(ids)], byKey: ids}
		l.addParents(parent)
		return l
	}
	order := make([]int, 0, nkept)
	for k, m := range mark {
		if m == kept {
			order = append(order, k)
		}
	}
	// By chunk ID, one entry a chunk: a compute op before a stored op
	// naming the same. Fresh IDs follow the keys, so in key order the
	// ops are most often sorted by ID already.
	before := func(x, y int) int {
		a, b := ids[x], ids[y]
		switch {
		case a != b:
			return cmp.Compare(a, b)
		case cg.Ops[x].Stored == 0 && cg.Ops[y].Stored != 0:
			return -1
		case cg.Ops[x].Stored != 0 && cg.Ops[y].Stored == 0:
			return 1
		}
		return 0
	}
	if !slices.IsSortedFunc(order, before) {
		slices.SortFunc(order, before)
	}
	nins := 0
	for _, k := range order {
		nins += len(cg.Ops[k].Inputs)
	}
	l := &Lineage{ops: make([]*chunk.Op, 0, len(order)), ids: make([]uint64, 0, len(order)),
		off: make([]int32, 0, len(order)+1), ins: make([]uint64, 0, nins)}
	for _, k := range order {
		id := ids[k]
		if n := len(l.ids); n > 0 && l.ids[n-1] == id {
			continue
		}
		op := cg.Ops[k]
		l.ops = append(l.ops, op)
		l.ids = append(l.ids, id)
		l.off = append(l.off, int32(len(l.ins)))
		for _, in := range op.Inputs {
			l.ins = append(l.ins, ids[in])
		}
	}
	l.off = append(l.off, int32(len(l.ins)))
	l.addParents(parent)
	return l
}

// addParents points l to the lineages of the chunks its stored ops name.
func (l *Lineage) addParents(parent func(id uint64) *Lineage) {
	pseen := map[*Lineage]bool{}
	for _, op := range l.ops {
		if op.Stored != 0 {
			if p := parent(op.Stored); p != nil && !pseen[p] {
				pseen[p] = true
				l.parents = append(l.parents, p)
			}
		}
	}
}

// ascending reports whether ids strictly ascend.
func ascending(ids []uint64) bool {
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			return false
		}
	}
	return true
}

// find returns the first entry of chunk id in l or its ancestors, searched
// depth first, for which ok holds.
func (l *Lineage) find(id uint64, ok func(op *chunk.Op) bool) (x *Lineage, i int, found bool) {
	seen := map[*Lineage]bool{}
	stack := []*Lineage{l}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x == nil || seen[x] {
			continue
		}
		seen[x] = true
		i := sort.Search(len(x.ids), func(i int) bool { return x.ids[i] >= id })
		if i < len(x.ids) && x.ids[i] == id && ok(x.ops[i]) {
			return x, i, true
		}
		stack = append(stack, x.parents...)
	}
	return nil, 0, false
}

// producer finds the op that makes chunk id in l or its ancestors, and
// the chunks that op reads.
func (l *Lineage) producer(id uint64) (*chunk.Op, []uint64, bool) {
	x, i, ok := l.find(id, func(op *chunk.Op) bool { return op.Stored == 0 })
	if !ok {
		return nil, nil, false
	}
	op := x.ops[i]
	if x.byKey == nil {
		return op, x.ins[x.off[i]:x.off[i+1]], true
	}
	ins := make([]uint64, len(op.Inputs))
	for j, in := range op.Inputs {
		ins[j] = x.byKey[in]
	}
	return op, ins, true
}

// stored finds an op that makes or names chunk id, for its shape.
func (l *Lineage) stored(id uint64) (*chunk.Op, bool) {
	if op, _, ok := l.producer(id); ok {
		return op, true
	}
	x, i, ok := l.find(id, func(*chunk.Op) bool { return true })
	if !ok {
		return nil, false
	}
	return x.ops[i], true
}

// ErrNoLineage is the error of a lost chunk that nothing can make again:
// an upload whose copies are all gone.
var ErrNoLineage = errors.New("no lineage makes it again")

// restoreJob builds the job that makes the chunks lost again, found in
// lin (and its ancestors): their ops, and those of the inputs they read
// that are gone too, down to chunks that exist (exists), read as stored
// ops. Every op keeps its chunk's ID; the job keeps the chunks of lost.
func restoreJob(lin *Lineage, lost []uint64, exists func(uint64) bool) (*core.Job, error) {
	g := &chunk.Graph{}
	job := &core.Job{Graph: g, Keep: make(map[uint64]bool)}
	keyOf := make(map[uint64]int)
	// add returns the key in the job of the op giving chunk id.
	var add func(id uint64, need bool) (int, error)
	add = func(id uint64, need bool) (int, error) {
		if k, ok := keyOf[id]; ok {
			return k, nil
		}
		if !need && exists(id) {
			op, ok := lin.stored(id)
			if !ok {
				return 0, fmt.Errorf("chunk %d: not in the lineage", id)
			}
			k := len(g.Ops)
			g.Ops = append(g.Ops, &chunk.Op{Key: k, Kind: chunk.KindStored, Stored: id, Shape: op.Shape, DType: op.DType})
			job.IDs = append(job.IDs, id)
			keyOf[id] = k
			return k, nil
		}
		op, ins, ok := lin.producer(id)
		if !ok {
			return 0, fmt.Errorf("chunk %d is lost and %w (an upload whose copies are gone)", id, ErrNoLineage)
		}
		c := *op
		c.Inputs = make([]int, len(ins))
		for i, in := range ins {
			k, err := add(in, false)
			if err != nil {
				return 0, err
			}
			c.Inputs[i] = k
		}
		c.Key = len(g.Ops)
		g.Ops = append(g.Ops, &c)
		job.IDs = append(job.IDs, id)
		keyOf[id] = c.Key
		return c.Key, nil
	}
	for _, id := range lost {
		if _, err := add(id, true); err != nil {
			return nil, err
		}
		job.Keep[id] = true
	}
	return job, nil
}

// restore makes the chunks of ids that are lost again, from the lineages
// that made them (lineOf), and returns once they exist; ids with no
// lineage that are lost fail it with ErrNoLineage. Restores of an engine
// run one at a time.
func (e *Engine) restore(ctx context.Context, ids []uint64, lineOf func(uint64) *Lineage) error {
	run := e.runner
	var missing []uint64
	for _, id := range ids {
		if run.Where(id) == "" {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	select {
	case e.restoring <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-e.restoring }()
	byLineage := map[*Lineage][]uint64{}
	var order []*Lineage
	for _, id := range missing {
		if run.Where(id) != "" {
			continue // made again by the restore this one waited for
		}
		l := lineOf(id)
		if l == nil {
			return fmt.Errorf("chunk %d is lost and %w (an upload whose copies are gone)", id, ErrNoLineage)
		}
		if _, ok := byLineage[l]; !ok {
			order = append(order, l)
		}
		byLineage[l] = append(byLineage[l], id)
	}
	if len(order) == 0 {
		return nil
	}
	// One job for all: a lineage searches its parents, so the job of the
	// first lineage finds the chunks of the others only if they descend
	// from it; a lineage that joins them as parents of one does.
	lin := order[0]
	if len(order) > 1 {
		lin = &Lineage{parents: order}
	}
	var lost []uint64
	for _, l := range order {
		lost = append(lost, byLineage[l]...)
	}
	exists := func(id uint64) bool { return run.Where(id) != "" }
	job, err := restoreJob(lin, lost, exists)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.restores++
	e.mu.Unlock()
	e.markRecomputing(lost, 1)
	defer e.markRecomputing(lost, -1)
	if err := run.Run(ctx, job); err != nil {
		err = fmt.Errorf("recomputing %d lost %s: %w", len(lost), plural(len(lost), "chunk"), err)
		if ctx.Err() == nil {
			e.mu.Lock()
			for _, id := range lost {
				e.unrestorable[id] = err.Error()
			}
			e.unmade += len(lost)
			e.mu.Unlock()
		}
		return err
	}
	e.mu.Lock()
	for _, id := range lost {
		delete(e.unrestorable, id)
	}
	e.recomputed += len(lost)
	e.mu.Unlock()
	return nil
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// free frees chunks kept by session s, forgetting what the engine knew of
// them. A runner that fences (sched.Scheduler) is told the session and its
// epoch, so that a worker that has seen a later epoch of it keeps them for
// their new home.
func (e *Engine) free(s *Session, ids []uint64) {
	if len(ids) == 0 {
		return
	}
	e.mu.Lock()
	if len(e.unrestorable) > 0 {
		for _, id := range ids {
			delete(e.unrestorable, id)
		}
	}
	e.mu.Unlock()
	if f, ok := e.runner.(fencedFreer); ok {
		sess, epoch := s.fenceTag()
		f.FreeFor(sess, epoch, ids)
		return
	}
	e.runner.Free(ids)
}

// Restores is the number of restore jobs the engine has run.
func (e *Engine) Restores() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.restores
}

// Recomputed counts the chunks lost with their workers that restores made
// again from lineage, and those whose restore failed (/cluster/metrics).
func (e *Engine) Recomputed() (made, failed int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.recomputed, e.unmade
}

// lineOf returns the lineage of the session's kept chunk id; nil for an
// upload's chunk or one the session does not hold.
func (s *Session) lineOf(id uint64) *Lineage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lines[id]
}

// Restore makes the tensor's chunks lost with their workers again, and
// returns once every chunk exists: at once when none is lost. It fails
// when a lost chunk has no lineage (an upload whose copies are all gone).
func (t *Tensor) Restore(ctx context.Context) error {
	return t.session.engine.restoreAll(ctx, t.tiled.Keys, t.session.lineOf)
}

// restoreAll restores ids, again while chunks are lost meanwhile (another
// worker died while the restore ran), up to restoreTries times.
func (e *Engine) restoreAll(ctx context.Context, ids []uint64, lineOf func(uint64) *Lineage) error {
	for try := 1; ; try++ {
		err := e.restore(ctx, ids, lineOf)
		if err != nil || try == restoreTries {
			return err
		}
		lost := 0
		for _, id := range ids {
			if e.runner.Where(id) == "" {
				lost++
			}
		}
		if lost == 0 {
			return nil
		}
	}
}

// restoreTries bounds the restores of one demand.
const restoreTries = 3

// TensorState is what a tensor's meta file says of its chunks.
type TensorState uint8

const (
	// Stored: every chunk exists on a worker.
	Stored TensorState = iota
	// Recomputing: chunks lost with a worker are being made again.
	Recomputing
	// Lost: a chunk is gone and nothing can make it again.
	Lost
)

func (s TensorState) String() string {
	return [...]string{"stored", "recomputing", "lost"}[s]
}

// State says whether the tensor's chunks all exist. Asking is a demand
// for the tensor: when chunks are lost and lineage can make them again,
// it starts doing so in the background (so that the state a reader polls
// goes from recomputing to stored) and says Recomputing.
func (t *Tensor) State() TensorState {
	e := t.session.engine
	var lost []uint64
	for _, id := range t.tiled.Keys {
		if e.runner.Where(id) == "" {
			lost = append(lost, id)
		}
	}
	if len(lost) == 0 {
		return Stored
	}
	e.mu.Lock()
	for _, id := range lost {
		if e.recomputing[id] > 0 {
			e.mu.Unlock()
			return Recomputing
		}
	}
	for _, id := range lost {
		if _, failed := e.unrestorable[id]; failed {
			// Its last recomputation failed (a file it reads is gone):
			// meta says so rather than try again at every read of it; a
			// read of the data tries again.
			e.mu.Unlock()
			return Lost
		}
	}
	closed := e.closed
	e.mu.Unlock()
	for _, id := range lost {
		if t.session.lineOf(id) == nil {
			return Lost
		}
	}
	if closed {
		return Lost
	}
	lease, err := t.Lease()
	if err != nil {
		return Lost
	}
	e.markRecomputing(lost, 1)
	e.background.Add(1)
	go func() {
		defer e.background.Done()
		defer lease.Release()
		defer e.markRecomputing(lost, -1)
		t.Restore(e.ctx)
	}()
	return Recomputing
}

// markRecomputing counts the chunks ids as being made again (by -1: no
// longer), for State.
func (e *Engine) markRecomputing(ids []uint64, by int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, id := range ids {
		if e.recomputing[id] += by; e.recomputing[id] <= 0 {
			delete(e.recomputing, id)
		}
	}
}
