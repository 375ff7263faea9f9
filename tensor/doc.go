// Package tensor holds the vocabulary every layer of marsfs shares: dtypes
// (NumPy's bool, int32, int64, float32 and float64), dense C-order arrays,
// shapes and chunk grids (a TiledTensor is a tensor cut into a grid of
// chunks, each named by a key), and the names of the operations, which the
// whole-tensor graph of a spec and the chunk ops tiled from it both use.
//
// The layers above it, each a package:
//
//	tensor/spec/syntax  spec text -> statements (lexer, parser, Complete)
//	tensor/spec         statements or JSON -> a typed whole-tensor Graph
//	tensor/tile         spec.Graph -> chunk.Graph, a stage at a time
//	tensor/fuse         chunk.Graph -> chunk.Graph with fewer, fused ops
//	tensor/chunk        the chunk-op contract: ops, graphs, every kernel's Args
//	tensor/kernel       runs one chunk op (over kernel/elem and kernel/expr)
//	tensor/codec        npy, csv and NumPy's text rendering
//	tensor/tensortest   the in-process reference executor for tests
//
// Planning (spec, tile, fuse) and kernels (kernel and what is under it)
// stand side by side: neither imports the other, so a scheduler's planning
// and a worker's kernels share only this package, tensor/chunk and the
// codecs. This package imports no other of marsfs, and is linked by both
// the scheduler and the workers. layers_test.go, at the module's root,
// checks these rules.
//
// Both the scheduler and the workers run it.
package tensor
