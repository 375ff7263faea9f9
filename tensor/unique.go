package tensor

import (
	"cmp"
	"context"
	"encoding/gob"
	"fmt"
	"slices"
)

// Unique and bincount make results whose length the data decides, so they
// tile in two stages (see stage.go).
//
// Unique sorts and deduplicates each chunk on its own ("unique.map") and
// merges the sorted unique values of up to statsCombine chunks at a time in a
// tree ("unique.merge"), so that no op reads more than a few partial results
// and none gathers the input. With counts, a second tree of the same shape
// carries each partial result's counts, which a merge adds where values meet.
// The root's length is the probe; the next stage reads the root as a stored
// chunk of that length. Values compare by sortKey: -0 equals +0, and all NaNs
// are one value, sorted last, as NumPy's unique (equal_nan=True) does.
//
// Bincount's length is max(minlength, max(x)+1): a tree of "bincount.len"
// ops finds it, and the next stage counts each chunk with that length and
// adds the counts, as a bincount with minlength does.

// UniqueArgs are the arguments of the unique kernels. Their chunks' lengths
// depend on the data: the op's shape bounds them.
type UniqueArgs struct {
	Counts bool // the op makes counts: "unique.map" of the chunk, "unique.merge" of its inputs' (values..., counts...)
}

func (UniqueArgs) boundsLen() {}

// lengthBound marks the arguments of ops whose chunk length the data
// decides, up to the op's shape.
type lengthBound interface{ boundsLen() }

// shapeFits reports whether a chunk of shape is what op makes: its shape,
// or, for an op whose length the data decides, a 1-D shape no longer.
func shapeFits(op *ChunkOp, shape []int) bool {
	if slices.Equal(shape, op.Shape) {
		return true
	}
	_, ok := op.Args.(lengthBound)
	return ok && len(shape) == 1 && len(op.Shape) == 1 && shape[0] <= op.Shape[0]
}

// BincountLenArgs are the arguments of "bincount.len".
type BincountLenArgs struct {
	Minlength int
	Combine   bool // the inputs are partial lengths
}

// Ops whose length the data decides.
const (
	OpUnique       = "unique"        // the sorted unique values of the flattened input: (?,)
	OpUniqueCounts = "unique.counts" // how often each of them occurs: int64 (?,)
)

func init() {
	gob.Register(UniqueArgs{})
	gob.Register(BincountLenArgs{})
	kernels["unique.map"] = uniqueMapKernel
	kernels["unique.merge"] = uniqueMergeKernel
	kernels["unique.len"] = uniqueLenKernel
	kernels["bincount.len"] = bincountLenKernel
	for _, op := range []string{OpUnique, OpUniqueCounts} {
		catalogueOps[op] = 1
		opArity[op] = 1
		stagedRules[op] = stagedRule{measure: measureUnique, finish: finishUnique}
	}
	stagedRules[OpBincount] = stagedRule{measure: measureBincount, finish: finishBincount}
}

// uniqueTree is the tree of unique ops over one input, shared by its values
// and counts nodes: nodes [0, leaves) are the chunks', the rest merges.
type uniqueTree struct {
	x        *TiledTensor
	vals     []uint64 // each node's values
	caps     []int    // the bound of each node's length
	children [][]int  // a merge's children
	leaves   int
	probe    uint64
}

func (t *tiler) uniqueTree(n *Node) *uniqueTree {
	v, _ := t.sharedFor("unique", n, func() (any, error) {
		x := t.input(n, 0)
		u := &uniqueTree{x: x, leaves: len(x.Keys)}
		grid := GridShape(x.Chunks)
		level := make([]int, 0, len(x.Keys))
		for i, k := range x.Keys {
			c := chunkShape(x.Chunks, grid, i)[0]
			level = append(level, len(u.vals))
			u.vals = append(u.vals, t.emit(&ChunkOp{Kind: "unique.map", Inputs: []int{int(k)}, Shape: []int{c}, DType: x.DType, Args: UniqueArgs{}}))
			u.caps = append(u.caps, c)
			u.children = append(u.children, nil)
		}
		for len(level) > 1 {
			var next []int
			for s := 0; s < len(level); s += statsCombine {
				group := level[s:min(s+statsCombine, len(level))]
				if len(group) == 1 {
					next = append(next, group[0])
					continue
				}
				inputs, c := make([]int, len(group)), 0
				for i, g := range group {
					inputs[i] = int(u.vals[g])
					c += u.caps[g]
				}
				next = append(next, len(u.vals))
				u.vals = append(u.vals, t.emit(&ChunkOp{Kind: "unique.merge", Inputs: inputs, Shape: []int{c}, DType: x.DType, Args: UniqueArgs{}}))
				u.caps = append(u.caps, c)
				u.children = append(u.children, slices.Clone(group))
			}
			level = next
		}
		root := len(u.vals) - 1
		u.probe = t.emit(&ChunkOp{Kind: "unique.len", Inputs: []int{int(u.vals[root])}, Shape: []int{}, DType: Int64})
		return u, nil
	})
	return v.(*uniqueTree)
}

func measureUnique(t *tiler, n *Node) ([]uint64, uint64, error) {
	x := t.input(n, 0)
	if len(x.Shape) != 1 {
		return nil, 0, fmt.Errorf("input of shape %v is not 1-D", x.Shape)
	}
	u := t.uniqueTree(n)
	root := len(u.vals) - 1
	if n.Op == OpUnique {
		return []uint64{u.vals[root]}, u.probe, nil
	}
	counts := make([]uint64, len(u.vals))
	for i := range u.vals {
		if i < u.leaves {
			counts[i] = t.emit(&ChunkOp{Kind: "unique.map", Inputs: []int{int(x.Keys[i])}, Shape: []int{u.caps[i]}, DType: Int64, Args: UniqueArgs{Counts: true}})
			continue
		}
		ch := u.children[i]
		inputs := make([]int, 0, 2*len(ch))
		for _, c := range ch {
			inputs = append(inputs, int(u.vals[c]))
		}
		for _, c := range ch {
			inputs = append(inputs, int(counts[c]))
		}
		counts[i] = t.emit(&ChunkOp{Kind: "unique.merge", Inputs: inputs, Shape: []int{u.caps[i]}, DType: Int64, Args: UniqueArgs{Counts: true}})
	}
	return []uint64{counts[root]}, u.probe, nil
}

// finishUnique reads the root of the unique tree, now of a known length, and
// cuts it into the default chunks.
func finishUnique(t *tiler, n *Node, ids []uint64, length int) (*TiledTensor, error) {
	if len(ids) != 1 {
		return nil, fmt.Errorf("%d carried chunks, want 1", len(ids))
	}
	key := t.emit(&ChunkOp{Kind: "stored", Stored: ids[0], Shape: []int{length}, DType: n.DType})
	tt := &TiledTensor{Shape: []int{length}, DType: n.DType, Chunks: [][]int{{length}}, Keys: []uint64{key}}
	return t.rechunk(tt, DefaultChunks(tt.Shape, n.DType)), nil
}

func measureBincount(t *tiler, n *Node) ([]uint64, uint64, error) {
	x := t.input(n, 0)
	if len(x.Shape) != 1 || !(x.DType.IsInt() || x.DType == Bool) {
		return nil, 0, fmt.Errorf("bincount needs a 1-D array of non-negative integers, not %v%v", x.DType, x.Shape)
	}
	m := n.Attrs.Minlength
	var parts []uint64
	for _, k := range x.Keys {
		parts = append(parts, t.emit(&ChunkOp{Kind: "bincount.len", Inputs: []int{int(k)}, Shape: []int{}, DType: Int64, Args: BincountLenArgs{Minlength: m}}))
	}
	probe := t.tree(parts, func(inputs []int) uint64 {
		return t.emit(&ChunkOp{Kind: "bincount.len", Inputs: inputs, Shape: []int{}, DType: Int64, Args: BincountLenArgs{Minlength: m, Combine: true}})
	})
	return nil, probe, nil
}

func finishBincount(t *tiler, n *Node, _ []uint64, length int) (*TiledTensor, error) {
	return tileBincount(t, n)
}

// uniqueEntry is one element of the chunks a unique kernel reads: its sort
// key, and where it is (input part, index).
type uniqueEntry struct {
	key       uint64
	part, idx int32
}

// uniqueRuns sorts entries by key (then position, so that each run starts
// with its first element) and calls run for each run of equal keys.
func uniqueRuns(entries []uniqueEntry, run func(first uniqueEntry, members []uniqueEntry)) {
	slices.SortFunc(entries, func(a, b uniqueEntry) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		if c := cmp.Compare(a.part, b.part); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && entries[j].key == entries[i].key {
			j++
		}
		run(entries[i], entries[i:j])
		i = j
	}
}

// uniqueOut writes the unique values or their counts of the runs of parts.
// counts, when not nil, holds each part's counts (a merge); otherwise every
// element counts once.
func uniqueOut(ctx context.Context, op *ChunkOp, parts []*Array, counts []*Array, wantCounts bool) (*Array, error) {
	total := 0
	for _, p := range parts {
		if len(p.Shape) != 1 {
			return nil, fmt.Errorf("input of shape %v is not 1-D", p.Shape)
		}
		total += p.Len()
	}
	if total > op.Shape[0] {
		return nil, fmt.Errorf("inputs of %d elements for a bound of %d", total, op.Shape[0])
	}
	entries := make([]uniqueEntry, 0, total)
	for pi, p := range parts {
		for i := range p.Len() {
			entries = append(entries, uniqueEntry{sortKey(p, i), int32(pi), int32(i)})
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var vals []byte
	var cnts []int64
	size := op.DType.Size()
	uniqueRuns(entries, func(first uniqueEntry, members []uniqueEntry) {
		if !wantCounts {
			p := parts[first.part]
			vals = append(vals, p.Data[int(first.idx)*size:int(first.idx+1)*size]...)
			return
		}
		c := int64(len(members))
		if counts != nil {
			c = 0
			for _, m := range members {
				c += counts[m.part].Int64s()[m.idx]
			}
		}
		cnts = append(cnts, c)
	})
	if wantCounts {
		out := NewArray(Int64, []int{len(cnts)})
		copy(out.Int64s(), cnts)
		return out, nil
	}
	out := NewArray(op.DType, []int{len(vals) / size})
	copy(out.Data, vals)
	return out, nil
}

func uniqueMapKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(UniqueArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	if !args.Counts && in[0].DType != op.DType {
		return nil, fmt.Errorf("input of dtype %v for values of %v", in[0].DType, op.DType)
	}
	return uniqueOut(ctx, op, in[:1], nil, args.Counts)
}

func uniqueMergeKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(UniqueArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	if !args.Counts {
		return uniqueOut(ctx, op, in, nil, false)
	}
	if len(in)%2 != 0 {
		return nil, fmt.Errorf("%d inputs: want values and counts alike", len(in))
	}
	k := len(in) / 2
	for i := range k {
		if in[k+i].DType != Int64 || in[k+i].Len() != in[i].Len() {
			return nil, fmt.Errorf("counts %d do not match their values", i)
		}
	}
	return uniqueOut(ctx, op, in[:k], in[k:], true)
}

func uniqueLenKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	out := NewArray(Int64, []int{})
	out.Int64s()[0] = int64(in[0].Len())
	return out, nil
}

// bincountLenKernel finds max(minlength, max(x)+1) of a chunk, or the
// largest of such lengths.
func bincountLenKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(BincountLenArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	l := int64(args.Minlength)
	for _, a := range in {
		if args.Combine {
			l = max(l, a.Int64s()[0])
			continue
		}
		for i := range a.Len() {
			var v int64
			switch a.DType {
			case Bool:
				v = int64(a.Data[i])
			case Int32:
				v = int64(a.Int32s()[i])
			case Int64:
				v = a.Int64s()[i]
			default:
				return nil, fmt.Errorf("input of dtype %v is not integer", a.DType)
			}
			if v < 0 {
				return nil, fmt.Errorf("the input has a negative value (%d)", v)
			}
			l = max(l, v+1)
		}
	}
	if l > maxOneChunk {
		return nil, fmt.Errorf("the counts would be %d long, more than the %d of one chunk", l, maxOneChunk)
	}
	out := NewArray(Int64, []int{})
	out.Int64s()[0] = l
	return out, nil
}
