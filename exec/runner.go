package exec

import (
	"context"

	"marsfs/exec/core"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// A Runner executes chunk graphs and keeps the chunks they make:
// sched.Scheduler, on the worker processes of a cluster or on one worker in
// this process.
type Runner interface {
	// Run executes job and returns when every op has finished (nil), when
	// an op has failed for good (its error), or when ctx is done (ctx.Err()).
	// Chunks that job.Keep names stay alive after a successful Run; every
	// other chunk the job made is freed as soon as no op of the job needs it,
	// and on failure or cancellation all chunks the job made are freed.
	Run(ctx context.Context, job *Job) error
	// Fetch returns the chunk with the given global ID; callers must not
	// modify it. Its data may be a worker's shared memory mapped read-only,
	// unmapped once the array is unreachable: a caller keeps the array, not
	// only its Data, while it reads them.
	Fetch(ctx context.Context, id uint64) (*tensor.Array, error)
	// Where names the worker holding the chunk ("" if none does).
	Where(id uint64) string
	// Free drops chunks kept by earlier jobs.
	Free(ids []uint64)
}

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
	Observe func(core.Event)
	// Order, if not nil, replaces the runner's run order (PlanOrder): tests
	// use it to compare orders on the same graph.
	Order core.OrderFunc
	// Plan, if not nil, is called once before any op runs with how the
	// runner placed the job (see planview.go). It must not block.
	Plan func(core.Placement)
}
