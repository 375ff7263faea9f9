// Package chunk is the contract between the planning layers (tile, fuse)
// and the kernels: a chunk.Graph of Ops, each making exactly one chunk from
// the chunks of its inputs, and the argument type of every kind of op.
//
// An op travels to a worker process as it is, Args included, so every
// argument type is registered with encoding/gob in one list (gob.go), and
// argument types hold only exported, plain data. The kinds of the ops and
// their Args are listed with the kernel table in tensor/kernel; the
// expression programs that fused elementwise ops carry (ExprArgs, and the
// opcodes of their instructions) are defined here too, since the fuser
// writes them and a kernel reads them; so is what a kernel holds beside
// its inputs and output (Op.ScratchBytes), which a worker's admission and
// the scheduler's core both count.
//
// The package imports only tensor: no codec, planner or kernel, so that
// the pure cores (exec/core, exec/plan) link none of them. A Zarr array
// travels as a ZarrArray, plain data that zarr.Array.Desc makes. Both the
// scheduler and the workers run it.
//
// Graphs can be large (a reduction over a million chunks), so the planners
// cut ops and small int slices from slabs (slab.go) rather than allocating
// them one by one.
package chunk
