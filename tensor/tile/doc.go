// Package tile cuts a spec.Graph into a chunk.Graph: each op of the spec
// has one tile rule (ruleFor) that reads its inputs' chunk grids and emits
// the chunk ops making its own. Reductions tile as trees with a fan-in of
// four, products as blocks whose partial sums form a tree, rechunking and
// slicing as assemble ops that copy only the blocks a chunk needs, read
// as runs of their source chunks (chunk.Range) where they are runs, or of
// a shuffle's map op that lays a source chunk out block by block
// (assemble.go).
//
// A length the data decides (unique, bincount), or where the data puts a
// shuffle's pieces (the sample sort, samplesort.go), ends a stage: Stages tiles
// what it can and returns, with the ops, the probes whose values set the
// unknown lengths; Stage.Next tiles the rest once they are known.
// StagesFused also fuses, as it tiles, the columns of a reduction over an
// expression of generators (column.go), so that a reduction over a
// million tiny chunks never holds the ops it fuses away.
//
// The scheduler process runs it.
package tile
