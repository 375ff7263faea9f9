// Package expr runs the block programs of fused "expr" ops (chunk.ExprArgs):
// a register machine whose instructions are typed loops over blocks of up
// to 4096 elements (loads with broadcasting, casts, elementwise functions,
// generators, and a reduction's map step at the end), so that an
// expression's intermediate values never exist as whole chunks. Machines
// are pooled and rebound to new inputs (pool.go), since ops of one graph
// share their programs. The hot loops have AVX2 and SSE2 forms on amd64,
// and the uniform generator an AVX-512 one too. An input may be streamed
// (stream.go): handed over a piece at a time (a blosc chunk's decoded
// blocks), the program's blocks running as its pieces arrive, with the
// same results as over the whole input; an elementwise program's output
// may go out a piece at a time too (StreamKernelTo), from a window of a
// piece's size, so that neither chunk is whole.
//
// The worker processes run it; under `marsfs up --workers 0`, whose one
// worker is in the scheduler's process, there too.
package expr
