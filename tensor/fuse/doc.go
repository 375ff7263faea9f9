// Package fuse rewrites chunk graphs so that fewer chunks are stored and
// moved. Optimize runs six rewrites, each checked against the unfused
// graph by tests:
//
//   - Expr groups, per output chunk, the elementwise ops and generators
//     (rand, ones, arange, ...) that nothing else reads, possibly ending in
//     a reduction's map step, and compiles them (compile.go) into one
//     "expr" op whose program runs over 4096-element blocks, so that
//     (rand(n) + rand(n)).sum() never stores a random chunk.
//   - Labels gives each band of rows of a reduction by label of a
//     one-hot (k-means' oh.T @ X and oh.sum(axis=0), with
//     oh = (argmin(score(X @ C.T))[:, None] == arange(k))) one
//     "label.sums" op that reads the band once and makes only its sums
//     and counts (labels.go).
//   - DrawMatmulBlocks lets a product draw the random blocks only products
//     read into a scratch buffer instead of reading stored chunks.
//   - Reread chooses, by cost, between keeping a file's chunks that a
//     two-pass formula reads again after a reduction of them (x - m after
//     m = x.mean(axis=0)) and reading them again: a copy of the read is
//     then fused in front of each late reader (reread.go), and the plan
//     notes the choice.
//   - Maps gives a chunk that reductions' map ops read, two or more
//     (x.mean(axis=0) and x.var(axis=0) of a chunk read from a file), one
//     "maps" op running them all, whose packed partials their readers
//     read by range (maps.go): a chunk only maps read has one reader
//     left, and its maker chains into it; one that others read too keeps
//     them, and is read once for all its maps.
//   - Copies gives each reader of a file's chunk its own read, fused in
//     front of it, when the file's codec decodes faster than a worker
//     stores a chunk (blosc, lz4, none; not zstd or zlib): the chunk is
//     then never stored and never moved to a reader on another worker
//     (copies.go), and the plan notes it. A chunk's only reader that
//     reads other chunks too (x * w) takes the read too, whatever the
//     codec, with no note (nothing is read twice). With Maps, a store
//     chunk that only reductions read is decoded a block at a time into
//     their sums (tensor/kernel's streamReduce) and never made; one an
//     expression reads is decoded a block at a time into its program
//     (streamExpr), and into the encoder of the store chunk it writes
//     when the program's chunk goes to to_zarr whole (streamWrite). An
//     elementwise op alone whose first input is a store chunk is made a
//     program of its own for it (Expr), where a group of one op is
//     otherwise left as it is.
//   - Chains merges, as Mars does, an op whose single input nothing else
//     reads into that input's op.
//
// The programs are data (chunk.ExprArgs): this package writes them and
// tensor/kernel/expr runs them.
//
// The scheduler process runs it.
package fuse
