// Package engine holds the sessions of marsfs and what they made: a
// Session parses, tiles and optimizes each spec submitted to it, starts
// its chunk graph on a Runner (sched.Scheduler) as a Graph, and keeps the graph's
// outputs as named tensors. Chunks are reference-counted across the
// tensors, the graphs reading them and the Leases of their readers, so
// that a tensor rebound by a later graph stays readable by whoever opened
// it and is freed once the last of them lets go.
//
// The engine reports numbers and states; the file tree (package fs)
// renders them as text.
//
// The scheduler process runs it.
package engine
