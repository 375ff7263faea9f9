// Package exec runs chunk graphs: sessions and their graphs (Engine) over a
// Runner, which is either LocalRunner (this process) or Scheduler (worker
// processes of a cluster).
//
// # The distributed runtime
//
// A Scheduler joins the cluster (package cluster) as its scheduler and
// connects to every worker that joins. Each Run drives a Core, the pure
// operand state machine of one job: the scheduler feeds it what happens
// (an op started, finished, failed or was cancelled on a worker; a worker
// came or went; the caller cancelled) and carries out what it answers (run
// op k on worker w with its inputs at these places, cancel, free chunk c on
// w, the job is over). The Core orders ops with an OrderFunc and places the
// initial ones with an AssignFunc (exec/plan by default).
//
// Ops are bound to a worker late. The Core sends a worker at most Depth
// ops per slot that it has not yet reported on (CoreOptions.Depth; 32 in a
// Scheduler), and at most RootDepth initial ops (2); the other READY ops
// wait at the Core in rank order. Each
// report frees room, and the next READY op goes to a worker with room: an
// initial op to the worker the assignment gave it, any other op to the
// worker where it would start soonest, weighing the bytes of its inputs
// held elsewhere against the ops queued ahead of it. A worker with an idle
// slot and nothing of its own takes (steals) initial ops assigned to a
// worker without room, so a worker that joins mid-job takes work at once.
// This is the effect of Mars' handshake, where the scheduler offers a READY
// op to several workers and the first ready to run it asks and is
// confirmed: the op is committed to a worker only when that worker is about
// to run it, and an op is never sent to two workers, so there is no
// confirmation round trip and no duplicate to take back. Within its room a
// worker runs its queue in priority order.
//
// Small ops go out in dispatch units (units.go), Mars' subtasks: runs of
// connected ops, consecutive in rank order and bound for one worker, that
// the worker runs one after the other in one slot and reports together.
// A unit counts once against a worker's room; the Core still tracks each
// of its ops.
//
// A Worker (RunWorker, in its own process) serves one TCP port. The
// scheduler's control connection carries messages both ways, many to a
// frame in a compact binary encoding (ctlcodec.go): submissions (the
// chunk.Op and where its inputs are), cancels, frees and status requests;
// started, done, failed and cancelled reports. Chunks move
// on separate connections as raw bytes behind a small dtype and shape
// header: a worker fetches the inputs it lacks from the workers holding
// them, the scheduler fetches results and puts chunks. A worker runs at most
// Slots kernels at once, the queued ops in priority order, admits an op only
// while the chunks it holds and makes fit in Mem, and keeps chunks in a
// Store.
//
// Every connection to a worker's service opens with a challenge and
// response over the cluster key (see auth.go), the key that also encrypts
// gossip; without a key, workers and gossip listen on loopback only.
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
// reason an op whose kernel rejects its inputs (tensor.ErrKernel: a
// singular matrix, an argument out of range) is FATAL at once, without
// retries. A chunk ID is the same for every run of its op: on a worker the
// latest run submitted owns it, so that an earlier run, cancelled but
// still finishing, neither stores nor drops it. Chunks of
// earlier jobs (stored ops) have no lineage in the job: losing one fails it.
package exec
