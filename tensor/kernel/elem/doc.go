// Package elem holds the element-level loops the kernels are made of:
// NumPy's elementwise functions as row functions by dtype, casts between
// dtypes, the monoids of the reductions with their pairwise sums, and the
// counter-based random streams that give every element of a generated
// tensor its value from the seed and its global index alone, so that any
// chunking, worker count or recomputation draws the same numbers.
//
// The worker processes run it; under `marsfs up --workers 0`, whose one
// worker is in the scheduler's process, there too.
package elem
