package worker

import (
	"math"
	"slices"
)

// A nextUseStore is a Store whose spill policy keeps the chunks needed
// soonest (see shm.Store.SetNextUse).
type nextUseStore interface {
	SetNextUse(id uint64, rank int64) bool
}

// lastUse reports whether task t, running, is the only op queued or
// running here that reads chunk id. w.mu is held.
func (w *Worker) lastUse(t *task, id uint64) bool {
	r := w.uses[id]
	return len(r) == 1 && r[0] == t.prio
}

// noteUses records that task t, queued (add) or ended or dropped (!add),
// reads its inputs held here, and tells the store the rank of the next op
// to read each: the lowest priority value among the tasks reading it, or
// none. Chunks the store keeps in the heap are never spilled: they are
// left out. w.mu is held.
func (w *Worker) noteUses(t *task, add bool) {
	st, ok := w.store.(nextUseStore)
	if !ok {
		return
	}
	if w.uses == nil {
		w.uses = make(map[uint64][]int)
	}
	for _, in := range t.inputs {
		if in.Worker != w.name || w.small(in.NBytes) {
			continue
		}
		ranks := w.uses[in.ID]
		if add {
			ranks = append(ranks, t.prio)
		} else if i := slices.Index(ranks, t.prio); i >= 0 {
			ranks = slices.Delete(ranks, i, i+1)
		}
		next := int64(math.MaxInt64) // shm.NoNextUse
		if len(ranks) == 0 {
			delete(w.uses, in.ID)
		} else {
			w.uses[in.ID] = ranks
			next = int64(slices.Min(ranks))
		}
		st.SetNextUse(in.ID, next)
	}
}
