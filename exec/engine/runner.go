package engine

import (
	"context"

	"marsfs/exec/core"
	"marsfs/tensor"
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
	Run(ctx context.Context, job *core.Job) error
	// Fetch returns the chunk with the given global ID, and release, which
	// gives back what holds it: callers must not modify it, nor use it
	// after release. Its data may be a worker's shared memory mapped
	// read-only; release unmaps them at once (a reader of a large tensor
	// holds one window of chunks, not every chunk it read until the next
	// collection), and so does the collector if release is never called.
	Fetch(ctx context.Context, id uint64) (a *tensor.Array, release func(), err error)
	// Where names the worker holding the chunk ("" if none does).
	Where(id uint64) string
	// Put stores a as the chunk with the given global ID on a worker, as if
	// a job had made and kept it (an upload's chunk). It does not keep a:
	// the caller may reuse its data once Put returns.
	Put(ctx context.Context, id uint64, a *tensor.Array) error
	// Free drops chunks kept by earlier jobs.
	Free(ids []uint64)
}
