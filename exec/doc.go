// Package exec is where marsfs runs chunk graphs: a session
// (exec/engine) hands its Runner a core.Job (a chunk.Graph, the global ID
// of each op's chunk, the chunks to keep), and the scheduler (exec/sched)
// runs it, reporting every operand transition. This package holds only
// this map; nothing imports it. Its packages, each with one job:
//
//	exec/core     the operand state machine of one job: pure, Step in,
//	              instructions out (which op runs where, what is freed)
//	exec/plan     graph preparation: run order and initial assignment
//	exec/wire     the control protocol, chunk transfer, authentication
//	exec/worker   a worker: its policy as pure State, and its serving loop
//	exec/sched    the scheduler: drives a Core a job over the workers of a
//	              cluster, or one worker in this process (NewLocal)
//	exec/engine   sessions, their graphs and kept tensors, over a Runner
//	exec/custody  what a scheduler holds between jobs, pure: session
//	              homes at epochs, shipping and leases, witnesses'
//	              fences, the chunk directory, graphs to run again
//	exec/sim      a deterministic simulation of schedulers and workers
//	              running the real pure machines (tests only)
//	exec/asuser   the files specs name, opened with their owner's rights
//
// Imports go one way: engine over core (its Runner interface is what
// sched.Scheduler implements); sched over core, wire and worker; worker
// over wire and core's vocabulary; core over plan. There is one
// executor: sched.Scheduler, whether its workers are processes or the one
// in-process worker of `marsfs up --workers 0`.
//
// It is no code: nothing imports it, and no process runs it.
package exec
