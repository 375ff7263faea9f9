// Package spec is the graph of whole-tensor operations that planning
// reads (Graph, Node, Attrs), with shapes, dtypes and chunks inferred as
// NumPy 1.24 would: infer*.go infers every node, the same way whatever
// made it. It reads and writes the graph's JSON form (json.go, ParseJSON),
// and its Builder adds nodes inferred as they come, with the lowerings the
// spec language shares between its functions and operators (builder*.go:
// matmul, take, masks and their reductions, einsum's pairs), so that each
// op needs one tile rule. The text form is the language's, package
// spec/lang, above this one; planning (tile, fuse) imports only this one.
//
// Tensors a session already holds come in as an Env, a snapshot of their
// names, shapes and chunkings: nothing here calls back into the session.
//
// The scheduler process runs it.
package spec
