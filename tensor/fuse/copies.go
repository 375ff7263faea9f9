package fuse

import (
	"fmt"

	"marsfs/tensor/chunk"
)

// Copies gives each reader of a chunk read from a file its own read of
// it, when the file's codec decodes faster than a worker stores a chunk
// (decodeRate against storeRate: blosc, lz4 and uncompressed files, not
// zstd or zlib). In the climate analysis of issue 35 (CLIM-ALL) each
// chunk of x is read by the time mean's and std's maps, the global mean's
// expression and the seasonal cycle's mean: kept, x was stored (6 MB a
// chunk, in fresh pages) and its readers, sent wherever a slot was free,
// mapped it from the other worker (1.9 GB moved for 1.1 GB of input, and
// a segment another worker mapped is never reused, so every chunk was
// fresh pages again). Read again, each reader decodes its own copy where
// it runs (Chains fuses the read in front of it; the maps' reads then
// never make the chunk at all), as Dask's from_zarr does.
//
// A reader takes a copy when it reads the chunk as its first input, once,
// by no range, and is no late reader (one that waits for a reduction of
// the file: Reread decided those). The chunk keeps its other readers (the
// seasonal mean reads three chunks of x), or, when all take copies, its
// first reader, which Chains joins to it.
//
// A chunk's only reader that reads other chunks too (the global mean's
// x * w[:, None], which reads the weights) takes the read as well, of
// any codec: Chains joins only a reader of one input, and the chunk was
// stored (6 MB of fresh pages a climate chunk) to be read once, by the
// next op. Fused, it is decoded into the reader's reused scratch, and
// there are half the operands. No note is made: nothing is read twice.
// Copies runs after Maps, which joins a chunk's maps into one reader,
// and before Chains.
func Copies(cg *chunk.Graph) (*chunk.Graph, []string) {
	n := len(cg.Ops)
	readers := make([][]int32, n)
	for _, op := range cg.Ops {
		for _, in := range op.Inputs {
			if len(readers[in]) == 0 || readers[in][len(readers[in])-1] != int32(op.Key) {
				readers[in] = append(readers[in], int32(op.Key))
			}
		}
	}
	isOutput := make([]bool, n)
	for _, o := range cg.Outputs {
		for _, k := range o.Keys {
			isOutput[k] = true
		}
	}
	type file struct {
		codec  string
		copies int
		bytes  int64
	}
	files := map[string]*file{}
	var order []string
	copyOf := map[int32]int{} // reader -> the file chunk it reads a copy of
	var unread []int          // file chunks every reader of which reads a copy
	seen := make([]int32, n)
	stamp := int32(0)
	for _, op := range cg.Ops {
		name, codec, ok := fileRead(op)
		if !ok || isOutput[op.Key] {
			continue
		}
		if rs := readers[op.Key]; len(rs) == 1 {
			if ro := cg.Ops[rs[0]]; len(ro.Inputs) > 1 && takesCopy(cg, ro, op.Key, seen, &stamp) {
				copyOf[rs[0]] = op.Key
				unread = append(unread, op.Key)
			}
			continue
		}
		if decodeRate(codec) <= storeRate {
			continue
		}
		var takers []int32
		for _, r := range readers[op.Key] {
			if takesCopy(cg, cg.Ops[r], op.Key, seen, &stamp) {
				takers = append(takers, r)
			}
		}
		if len(takers) == len(readers[op.Key]) && len(cg.Ops[takers[0]].Inputs) == 1 {
			takers = takers[1:] // the first keeps the original, which Chains joins to it
		}
		if len(takers) == 0 {
			continue
		}
		f := files[name]
		if f == nil {
			f = &file{codec: codec}
			files[name] = f
			order = append(order, name)
		}
		more := len(takers)
		if more == len(readers[op.Key]) {
			more-- // the original, which no one reads now, is not made
			unread = append(unread, op.Key)
		}
		f.copies += more
		f.bytes += int64(more) * int64(op.NBytes())
		for _, r := range takers {
			copyOf[r] = op.Key
		}
	}
	if len(copyOf) == 0 {
		return cg, nil
	}
	var notes []string
	for _, name := range order {
		f := files[name]
		notes = append(notes, fmt.Sprintf("copies %s (%s): %d more reads of %d MB, each where its reader runs: decoding %.2f s < storing and moving %.2f s",
			name, f.codec, f.copies, f.bytes/1e6, float64(f.bytes)/decodeRate(f.codec), float64(f.bytes)/storeRate))
	}
	// Each reader that takes a copy becomes fuse(read+reader), the
	// reader's other inputs the fuse op's (as Reread makes them).
	out := &chunk.Graph{Ops: slicesClone(cg.Ops), Outputs: cg.Outputs, Notes: cg.Notes}
	for r, x := range copyOf {
		op := cg.Ops[r]
		head := *cg.Ops[x]
		head.Key, head.Inputs = 0, nil
		m := *op
		m.Key = 0
		m.Inputs = make([]int, len(op.Inputs))
		for i := 1; i < len(op.Inputs); i++ {
			m.Inputs[i] = i // the fuse op's input i-1
		}
		out.Ops[r] = &chunk.Op{Key: op.Key, Kind: chunk.KindFuse, Inputs: append([]int(nil), op.Inputs[1:]...),
			Shape: op.Shape, DType: op.DType, Node: op.Node, Args: chunk.FuseArgs{Members: []chunk.Op{head, m}}}
	}
	for _, x := range unread {
		out.Ops[x] = nil
	}
	return compact(out), notes
}

// takesCopy reports whether ro, a reader of the file chunk x, can have
// the read fused in front of it: it reads x as its first input, once, by
// no range, and is no late reader (one whose other inputs wait for a
// reduction of the file: Reread decided those).
func takesCopy(cg *chunk.Graph, ro *chunk.Op, x int, seen []int32, stamp *int32) bool {
	if ro.Ranges != nil || ro.Stored != 0 || len(ro.Inputs) == 0 || ro.Inputs[0] != x || count(ro.Inputs, x) != 1 {
		return false
	}
	for _, in := range ro.Inputs[1:] {
		*stamp++
		if dependsOn(cg, in, x, seen, *stamp) {
			return false
		}
	}
	return true
}
