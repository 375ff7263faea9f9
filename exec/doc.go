// Package exec holds the contract between the sessions of marsfs and what
// runs their chunk graphs: a Runner takes a Job (a chunk.Graph, the global
// ID of each op's chunk, the chunks to keep) and runs it, reporting every
// operand transition. Its packages, each with one job:
//
//	exec/core     the operand state machine of one job: pure, Step in,
//	              instructions out (which op runs where, what is freed)
//	exec/plan     graph preparation: run order and initial assignment
//	exec/wire     the control protocol, chunk transfer, authentication
//	exec/worker   a worker: its policy as pure State, and its serving loop
//	exec/sched    the scheduler: drives a Core a job over the workers of a
//	              cluster, or one worker in this process (NewLocal)
//	exec/engine   sessions, their graphs and kept tensors, over a Runner
//
// Imports go one way: engine over exec; sched over core, wire and worker;
// worker over wire and core's vocabulary; core over plan. There is one
// executor: sched.Scheduler, whether its workers are processes or the one
// in-process worker of `marsfs up --workers 0`.
package exec
