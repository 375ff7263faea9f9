// Package sched is the scheduler: the I/O around the Core. A Scheduler
// joins the cluster (package cluster) as its scheduler and connects to
// every worker that joins; each Run drives a core.Core for its job,
// turning the workers' reports into Inputs and the Core's instructions
// into control messages, a batch a worker. It implements engine.Runner.
//
// NewLocal makes the same scheduler over one worker in this process, on an
// in-memory control connection: marsfs without a cluster runs the same
// Core and the same worker as a cluster does.
//
// Between jobs the scheduler keeps the chunk directory: kept chunks and
// their copies, the lost, the offers of chunks it did not lose. Its rules
// are exec/custody's Directory, the one the simulator checks; sched tells
// it what happened under its mutex and carries its instructions out
// (directory.go).
//
// The scheduler process runs it.
package sched
