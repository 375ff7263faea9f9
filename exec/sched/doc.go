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
// The scheduler process runs it.
package sched
