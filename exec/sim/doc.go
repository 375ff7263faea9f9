// Package sim runs a marsfs cluster in one goroutine under a simulated
// clock, network and disks, as FoundationDB's and TigerBeetle's
// simulators run their systems: the machines are the ones the processes
// run — each scheduler's custody.Machine, each job's core.Core, each
// worker's worker.State and custody.Fence, and the real parser, tiler,
// fusion and plan on real specs — and only time, the network, the disks
// and the faults are the simulator's. Everything is drawn from one seed,
// so a seed gives one run, and a failing seed replays exactly.
//
// Around the machines: an event queue ordered by simulated time; a
// network with latency, bandwidth and partitions (a message is dropped
// when either end is cut off, held while its receiver is paused, and lost
// when it is killed); disks whose fsync takes time and that fill up; a
// membership that declares a peer failed after it has not been heard from
// for DetectAfter; clients that open sessions, submit specs, wait for
// their graphs and read their tensors, following "moved" answers to the
// new home; workers that answer a takeover's recall as exec/worker does
// (worker.State.AdoptFor) and copy uploads as exec/sched asks, giving the
// copy's session and epoch back. Faults: kill (a scheduler or a worker),
// pause (SIGSTOP, then SIGCONT), partition (a scheduler cut off from the
// schedulers and workers, not from its clients), a full disk, and a
// restart of a killed scheduler on its old state dir.
//
// Kernels are not run: a chunk's content is its digest, a hash of its
// op (kind, shape, dtype, arguments) and of its inputs' digests, made by
// the worker that runs the op from the digests of the inputs it read. A
// result equals the fault-free run's when every kept chunk's digest
// equals the digest of its lineage computed from the graph alone. An op
// takes the time of the cost model (cost.go) to run.
//
// After every step the simulator checks: each Machine's invariants; at
// most one scheduler serves a session at a time and one home holds each
// epoch; every acknowledged write is in the journal of the session's
// home; every kept chunk has a copy or a lineage; and at the end, with
// the faults over, that no request and no job waits forever and that
// every chunk read has the fault-free digest.
//
// It runs in tests only (sim_test.go); nothing in a marsfs process
// imports it.
package sim
