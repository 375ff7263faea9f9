package core

import (
	"marsfs/tensor/chunk"
)

// A Job is one chunk graph to execute.
type Job struct {
	Graph *chunk.Graph
	// IDs[k] is the global ID of op k's chunk. A Stored op's ID is its
	// op.Stored: that chunk exists already and is not computed again.
	IDs []uint64
	// Keep holds the IDs of the chunks that must outlive the job.
	Keep map[uint64]bool
	// Observe, if not nil, is called for every transition of an operand. It
	// must not block.
	Observe func(Event)
	// ObserveAll, if not nil, is given instead of Observe the events of a
	// runner's steps taken together (the reports of one wake-up), in
	// order, in one call: a graph's record takes its lock once for them,
	// not once an event. The slice and the Timings its events point at are
	// the runner's, valid during the call; ObserveAll may change them. It
	// must not block.
	ObserveAll func([]Event)
	// Order, if not nil, replaces the runner's run order (PlanOrder): tests
	// use it to compare orders on the same graph.
	Order OrderFunc
	// Plan, if not nil, is called once before any op runs with how the
	// runner placed the job (see Options.Planned). It must not block.
	Plan func(Placement)
	// Waiting, if not nil, is told why the job waits with nothing able to
	// run it (no worker is connected: "no worker connected since ...;
	// fails at ..."), and "" once it waits no more. It must not block.
	Waiting func(why string)
	// Session and Epoch are the session the job runs for and the epoch
	// its scheduler holds it at: the runner sends them with the job's
	// submissions and frees, which a worker that has seen a later epoch
	// of the session refuses. Session 0 is none, and is not fenced.
	Session int
	Epoch   uint64
}
