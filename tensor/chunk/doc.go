// Package chunk is the contract between the planning layers (tile, fuse)
// and the kernels: a chunk.Graph of Ops, each making exactly one chunk from
// the chunks of its inputs, and the argument type of every kind of op.
//
// An op travels to a worker process as it is, Args included, so every
// argument type is registered with encoding/gob in one list (gob.go), and
// argument types hold only exported, plain data. The kinds of the ops and
// their Args are listed with the kernel table in tensor/kernel; the
// expression programs that fused elementwise ops carry (ExprArgs) are
// defined here too, since the fuser writes them and a kernel reads them.
//
// Graphs can be large (a reduction over a million chunks), so the planners
// cut ops and small int slices from slabs (slab.go) rather than allocating
// them one by one.
package chunk
