// Package worker runs the ops a scheduler submits and serves its chunks to
// the scheduler and to the other workers. A worker runs at most Slots
// kernels at once, its queued ops in priority order, admits an op only
// while the chunks it holds and makes fit in its memory quota, and keeps
// chunks in a Store: the heap (MemStore) or shared memory (shm.Arrays),
// which kernels then write their outputs into directly.
//
// The policy (queue, admission, dispatch units, which run owns a chunk,
// the next uses the store spills by) is a pure State (state.go), driven by
// scripts in testdata/state; the Worker is its serving loop: it decodes the
// control connection, runs kernels in its slots, fetches inputs from peers
// or maps them, and carries out what the State asks for. A chunk ID is the
// same for every run of its op: the latest run submitted owns it, so that
// an earlier run, cancelled but still finishing, neither stores nor drops
// it.
//
// The State is also a fence (epochs.go): a scheduler's submissions, frees
// and claims carry the session they act for and the epoch it holds it at,
// and the worker refuses those of an epoch below the latest it has seen of
// the session, so that a home back from a pause or a partition, before it
// has learned that another took its sessions over, can neither make again
// nor free the chunks the new home keeps.
//
// The worker processes run it; under `marsfs up --workers 0`, whose one
// worker is in the scheduler's process, there too (sched.NewLocal).
package worker
