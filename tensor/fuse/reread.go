package fuse

import (
	"fmt"
	"strings"

	"marsfs/tensor/chunk"
)

// Reread chooses, for a chunk read from a file that a two-pass formula
// reads twice, between keeping it and reading it again. In
// m = x.mean(axis=0); d = ((x - m) ** 2).mean(axis=0) every chunk of x is
// read by the mean's map, which can run at once, and by the second pass,
// which must wait for m, made of all of x: kept, x is stored whole before
// the second pass starts (all of it at once in memory, written to fresh
// pages, and moved to wherever the second pass runs); read again, each
// chunk is decoded twice and never stored.
//
// The choice is by cost, for all the chunks of a file at once. Keeping
// costs writing the chunks into the store and holding them, which must
// fit within the memory bound; reading again costs a second decode. The
// store takes chunks at about storeRate (fresh pages, which their number
// makes likely); a decode runs at the rate of the file's codec
// (decodeRates). A file whose second decode costs less than storing it,
// or whose chunks do not fit in the bound, is read again: in each late
// reader, a copy of the read op is fused in front of the reader
// ("fuse(from_zarr+expr(...))" in the plan), so that the chunk is made
// into a scratch buffer where the reader runs. The others keep their
// chunks. The choice is noted for the plan file.
//
// A late reader is an op that reads the chunk as its first input, once,
// and whose other inputs depend on the chunk (the mean m): it cannot run
// before all of x has been read once. Readers that can run at once (the
// mean's map) keep reading the original op, which Chains then joins to
// them.
func Reread(cg *chunk.Graph, bound int64) (*chunk.Graph, []string) {
	n := len(cg.Ops)
	readers := make([][]int32, n)
	for _, op := range cg.Ops {
		for _, in := range op.Inputs {
			readers[in] = append(readers[in], int32(op.Key))
		}
	}
	isOutput := make([]bool, n)
	for _, o := range cg.Outputs {
		for _, k := range o.Keys {
			isOutput[k] = true
		}
	}
	// late[r] for each reader r of a file chunk that must wait for the
	// chunk's other readers' results.
	type file struct {
		bytes int64
		late  []int32 // late readers, by op key
		codec string
	}
	files := map[string]*file{}
	var order []string
	lateOf := map[int32]int{} // late reader -> its file chunk
	counted := map[int]bool{} // file chunks counted in their file's bytes
	seen := make([]int32, n)  // DFS marks, by stamp
	stamp := int32(0)
	for _, op := range cg.Ops {
		name, codec, ok := fileRead(op)
		if !ok || isOutput[op.Key] || len(readers[op.Key]) < 2 {
			continue
		}
		for _, r := range readers[op.Key] {
			ro := cg.Ops[r]
			if _, dup := lateOf[r]; dup || ro.Ranges != nil || ro.Stored != 0 || len(ro.Inputs) < 2 || ro.Inputs[0] != op.Key || count(ro.Inputs, op.Key) != 1 {
				continue
			}
			stamp++
			dep := false
			for _, in := range ro.Inputs[1:] {
				if dependsOn(cg, in, op.Key, seen, stamp) {
					dep = true
					break
				}
			}
			if !dep {
				continue
			}
			f := files[name]
			if f == nil {
				f = &file{codec: codec}
				files[name] = f
				order = append(order, name)
			}
			if !counted[op.Key] {
				counted[op.Key] = true
				f.bytes += int64(op.NBytes())
			}
			f.late = append(f.late, r)
			lateOf[r] = op.Key
		}
	}
	if len(files) == 0 {
		return cg, nil
	}
	var notes []string
	reread := map[int32]bool{}
	for _, name := range order {
		f := files[name]
		rate := decodeRate(f.codec)
		keepS, readS := float64(f.bytes)/storeRate, float64(f.bytes)/rate
		choice := "kept"
		why := fmt.Sprintf("storing %.2f s < decoding again %.2f s", keepS, readS)
		switch {
		case bound > 0 && f.bytes > bound:
			choice, why = "read again", fmt.Sprintf("%d bytes kept would pass the memory bound %d", f.bytes, bound)
		case readS < keepS:
			choice, why = "read again", fmt.Sprintf("decoding again %.2f s < storing %.2f s", readS, keepS)
		}
		notes = append(notes, fmt.Sprintf("two-pass %s (%s, %d MB read by %d ops after a reduction of it): %s, %s",
			name, f.codec, f.bytes/1e6, len(f.late), choice, why))
		if choice == "read again" {
			for _, r := range f.late {
				reread[r] = true
			}
		}
	}
	if len(reread) == 0 {
		return cg, notes
	}
	out := &chunk.Graph{Ops: slicesClone(cg.Ops), Outputs: cg.Outputs}
	for _, op := range cg.Ops {
		if !reread[int32(op.Key)] {
			continue
		}
		x := cg.Ops[lateOf[int32(op.Key)]]
		head := *x
		head.Key, head.Inputs = 0, nil
		members := []chunk.Op{head}
		var inputs []int
		// The reader, and the reader of its chunk after it while that
		// is its one reader and reads it first (to_zarr's write of x -
		// m), each with its other inputs as the fuse op's.
		tail := op
		for {
			m := *tail
			m.Key = 0
			m.Inputs = make([]int, len(tail.Inputs))
			for i := 1; i < len(tail.Inputs); i++ {
				inputs = append(inputs, tail.Inputs[i])
				m.Inputs[i] = len(inputs) // the fuse op's input len(inputs)-1
			}
			members = append(members, m)
			out.Ops[tail.Key] = nil
			if len(readers[tail.Key]) != 1 || isOutput[tail.Key] {
				break
			}
			next := cg.Ops[readers[tail.Key][0]]
			if reread[int32(next.Key)] || next.Ranges != nil || next.Stored != 0 || next.Inputs[0] != tail.Key || count(next.Inputs, tail.Key) != 1 ||
				slicesAny(next.Inputs[1:], func(in int) bool { return len(cg.Ops[in].Inputs) != 0 }) {
				// Its other inputs must be leaves (to_zarr's create, a
				// constant): a combine's are other chains' partials.
				break
			}
			tail = next
		}
		out.Ops[tail.Key] = &chunk.Op{Key: tail.Key, Kind: chunk.KindFuse, Inputs: inputs,
			Shape: tail.Shape, DType: tail.DType, Node: tail.Node, Args: chunk.FuseArgs{Members: members}}
	}
	return compact(out), notes
}

// compact drops the nil ops of g (the readers folded into a later op)
// and renumbers the keys.
func compact(g *chunk.Graph) *chunk.Graph {
	newKey := make([]int32, len(g.Ops))
	ops := g.Ops[:0:0]
	for k, op := range g.Ops {
		newKey[k] = -1
		if op == nil {
			continue
		}
		newKey[k] = int32(len(ops))
		if op.Key != len(ops) || slicesAny(op.Inputs, func(in int) bool { return int(newKey[in]) != in }) {
			c := *op
			c.Key = len(ops)
			c.Inputs = make([]int, len(op.Inputs))
			for i, in := range op.Inputs {
				c.Inputs[i] = int(newKey[in])
			}
			op = &c
		}
		ops = append(ops, op)
	}
	return &chunk.Graph{Ops: ops, Outputs: remapOutputs(g.Outputs, newKey), Notes: g.Notes}
}

func slicesAny(s []int, f func(int) bool) bool {
	for _, v := range s {
		if f(v) {
			return true
		}
	}
	return false
}

// fileRead reports whether op reads a chunk of a file, and names the file
// and its codec.
func fileRead(op *chunk.Op) (name, codec string, ok bool) {
	if len(op.Inputs) != 0 || op.Stored != 0 {
		return "", "", false
	}
	switch a := op.Args.(type) {
	case chunk.ZarrArgs:
		if op.Kind != "from_zarr" {
			return "", "", false
		}
		var ids []string
		for _, c := range a.Array.Codecs {
			ids = append(ids, strings.ToLower(c.ID))
		}
		if len(ids) == 0 {
			ids = []string{"none"}
		}
		return a.Path, strings.Join(ids, "+"), true
	case chunk.NPYArgs:
		if op.Kind != "from_npy" {
			return "", "", false
		}
		return a.Path, "none", true
	}
	return "", "", false
}

// storeRate is the rate at which a worker stores chunks it keeps, in
// bytes a second: fresh shared-memory pages, faulted in as they are
// written (0.4-2 GB/s measured here), when many chunks are kept at once.
const storeRate = 1e9

// decodeRate is the rate at which a chunk of a file of the codec is read
// and decoded again, in bytes of chunk a second, on one core: an
// uncompressed file from the page cache is read straight into a buffer
// already mapped (a copy, several GB/s); blosc's lz4 with its shuffle and
// zstd at about the C libraries' rates (1.5 and 0.5 GB/s of chunk), which
// marsfs' decoders are to reach (its blosc was measured at 170 MB/s in
// issue 35). So a blosc or lz4 file is read again, as Dask does (its
// from_zarr reads are inlined into every reader: a peak of 66 MB against
// the 1.2 GB x kept for CLIM-ANOM), and a zstd one is kept.
func decodeRate(codec string) float64 {
	switch {
	case codec == "none":
		return 4e9
	case strings.Contains(codec, "zstd"), strings.Contains(codec, "zlib"), strings.Contains(codec, "gzip"):
		return 0.5e9
	}
	return 1.5e9 // blosc (lz4, blosclz), lz4
}

func count(s []int, v int) int {
	c := 0
	for _, x := range s {
		if x == v {
			c++
		}
	}
	return c
}

// dependsOn reports whether op k depends on op x, by a search back along
// inputs that stops at keys below x's (keys are in topological order).
func dependsOn(cg *chunk.Graph, k, x int, seen []int32, stamp int32) bool {
	if k == x {
		return true
	}
	if k < x || seen[k] == stamp {
		return false
	}
	seen[k] = stamp
	for _, in := range cg.Ops[k].Inputs {
		if dependsOn(cg, in, x, seen, stamp) {
			return true
		}
	}
	return false
}

func slicesClone(ops []*chunk.Op) []*chunk.Op { return append([]*chunk.Op(nil), ops...) }
