package sched

import (
	"marsfs/exec/core"
)

// An eventBatch gathers the events a job's Core gives while the
// scheduler takes one wake-up's reports, and hands them to the job's
// ObserveAll in one call: the graph's record then takes its lock and wakes
// its waiters once a batch, not three times an operand. A job without
// ObserveAll is given each event as it comes. The batch's slices are
// reused from one wake-up to the next: a graph of 10^6 operands makes no
// garbage for its events here.
type eventBatch struct {
	job  *core.Job
	evs  []core.Event
	tims []core.Timing // the timings evs carry, copied: the Core's is valid only during its call
	with []int32       // the index in evs of each of tims
}

// add takes ev, stamped by the caller.
func (b *eventBatch) add(ev core.Event) {
	if b.job.ObserveAll == nil {
		b.job.Observe(ev)
		return
	}
	if ev.Timing != nil {
		b.tims = append(b.tims, *ev.Timing)
		b.with = append(b.with, int32(len(b.evs)))
		ev.Timing = nil
	}
	b.evs = append(b.evs, ev)
	if len(b.evs) == maxBatch {
		b.flush()
	}
}

// maxBatch bounds a batch: a job's start makes an event for each of its
// initial ops, 750,000 of W4 at 10^6, and a batch of them all would be
// 100 MB of fresh pages where 4096 events, 0.5 MB, stay in the cache.
const maxBatch = 4096

// flush hands what the batch holds to the job's observer.
func (b *eventBatch) flush() {
	if len(b.evs) == 0 {
		return
	}
	// The timings are pointed at once no append can move them.
	for j, i := range b.with {
		b.evs[i].Timing = &b.tims[j]
	}
	b.job.ObserveAll(b.evs)
	clear(b.evs) // the strings they name may go
	b.evs, b.tims, b.with = b.evs[:0], b.tims[:0], b.with[:0]
}

// note flushes the batch, then gives the job's observer ev as a note
// about the job, after the events before it.
func (b *eventBatch) note(ev core.Event) {
	b.flush()
	note(b.job, ev)
}
