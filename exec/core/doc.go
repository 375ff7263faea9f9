// Package core is the scheduling core of marsfs: the operand state machine
// of one job, free of I/O. It starts no goroutine, reads no clock and
// sends nothing: the scheduler feeds it each thing that happens as an Input
// to Step (an op started, finished, failed or was cancelled on a worker; a
// worker came or went; the caller cancelled) and carries out the Output it
// answers (run op k on worker w with its inputs at these places, cancel,
// free chunk c on w, the job is over). Tests drive it alone, with scripts
// (testdata/core) and random scenarios.
//
// Operand states follow Mars: an op is READY once its inputs are FINISHED,
// RUNNING on its worker, FINISHED with its chunk stored, FREED once every
// consumer has finished (unless the job keeps it). A failure is retried on
// another worker up to a bound, then the op and its descendants are FATAL
// and the job stops: what runs is CANCELLING until its worker confirms,
// what waits is CANCELLED, and every chunk the job made is freed. When a
// worker leaves (gracefully, by crash, or its connection breaks), its
// running ops are retried elsewhere and the chunks it held that the job
// still needs are recomputed from their lineage (freed inputs included);
// since kernels are deterministic the results do not change. For the same
// reason an op whose kernel rejects its inputs (kernel.ErrKernel: a
// singular matrix, an argument out of range) is FATAL at once, without
// retries. Chunks of earlier jobs (stored ops) have no lineage in the job:
// losing one fails it.
//
// The Core orders ops with an OrderFunc and places the initial ones with an
// AssignFunc (exec/plan by default). Ops are bound to a worker late: the
// Core sends a worker at most Depth ops per slot that it has not yet
// reported on, and at most RootDepth initial ops; the other READY ops wait
// at the Core in rank order. Each report frees room, and the next READY op
// goes to a worker with room: an initial op to the worker the assignment
// gave it, any other op to the worker where it would start soonest,
// weighing the bytes of its inputs held elsewhere against the ops queued
// ahead of it. A worker with an idle slot and nothing of its own takes
// (steals) initial ops assigned to a worker without room, so a worker that
// joins mid-job takes work at once. This is the effect of Mars' handshake,
// where the scheduler offers a READY op to several workers and the first
// ready to run it asks and is confirmed: the op is committed to a worker
// only when that worker is about to run it, and never to two workers.
//
// Small ops go out in dispatch units (units.go), Mars' subtasks: runs of
// connected ops, consecutive in rank order and bound for one worker, that
// the worker runs one after the other in one slot and reports together.
// A unit counts once against a worker's room; the Core still tracks each
// of its ops.
//
// It is built for jobs of millions of ops on many workers: an op's state
// is 32 bytes without a pointer (core.go), its successors two int32
// columns, and the workers sit in heaps by what a dispatch asks of them
// (workers.go), so that a dispatch looks at a few workers, not all.
//
// The scheduler process runs it (exec/sched steps a Core a job).
package core
