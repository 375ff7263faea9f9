package tensor

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Unique and bincount make results whose length the data decides, so they
// tile in two stages (see stage.go).
//
// Unique sorts and deduplicates each chunk on its own ("unique.map") into
// (key, count) pairs, the key the value's sort key (see sortKey), and merges
// the sorted pairs of up to statsCombine chunks at a time in a tree
// ("unique.merge"), adding the counts where keys meet, so that no op reads
// more than a few partial results and none gathers the input. The root's
// length is the probe; "unique.values" and "unique.counts" read the root
// into the values and the counts, which the next stage reads as stored
// chunks of that length. Values come back from their keys: -0 equals +0
// (and comes out +0), and all NaNs are one value, sorted last, as NumPy's
// unique (equal_nan=True) does.
//
// Bincount's length is max(minlength, max(x)+1): a tree of "bincount.len"
// ops finds it, and the next stage counts each chunk with that length and
// adds the counts, as a bincount with minlength does.

// UniqueArgs are the arguments of the unique kernels, whose chunks' lengths
// depend on the data: the op's shape bounds them.
type UniqueArgs struct{}

func (UniqueArgs) boundsLen() {}

// lengthBound marks the arguments of ops whose chunk length (along the
// first axis) the data decides, up to the op's shape.
type lengthBound interface{ boundsLen() }

// shapeFits reports whether a chunk of shape is what op makes: its shape,
// or, for an op whose length the data decides, one no longer along the
// first axis.
func shapeFits(op *ChunkOp, shape []int) bool {
	if slices.Equal(shape, op.Shape) {
		return true
	}
	_, ok := op.Args.(lengthBound)
	return ok && len(shape) == len(op.Shape) && len(shape) > 0 && shape[0] <= op.Shape[0] && slices.Equal(shape[1:], op.Shape[1:])
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

// uniqueTree is the root of the tree of unique ops over one input, shared
// by its values and counts nodes, with the bound of its length and the
// probe of its length.
type uniqueTree struct {
	root, probe uint64
	bound       int
}

func (t *tiler) uniqueTree(n *Node) *uniqueTree {
	v, _ := t.sharedFor("unique", n, func() (any, error) {
		x := t.input(n, 0)
		grid := GridShape(x.Chunks)
		parts := make([]uint64, len(x.Keys))
		bound := map[uint64]int{}
		for i, k := range x.Keys {
			c := chunkShape(x.Chunks, grid, i)[0]
			parts[i] = t.emit(&ChunkOp{Kind: "unique.map", Inputs: []int{int(k)}, Shape: []int{c, 2}, DType: Int64, Args: UniqueArgs{}})
			bound[parts[i]] = c
		}
		root := t.tree(parts, func(inputs []int) uint64 {
			c := 0
			for _, in := range inputs {
				c += bound[uint64(in)]
			}
			key := t.emit(&ChunkOp{Kind: "unique.merge", Inputs: inputs, Shape: []int{c, 2}, DType: Int64, Args: UniqueArgs{}})
			bound[key] = c
			return key
		})
		probe := t.emit(&ChunkOp{Kind: "unique.len", Inputs: []int{int(root)}, Shape: []int{}, DType: Int64})
		return &uniqueTree{root: root, probe: probe, bound: bound[root]}, nil
	})
	return v.(*uniqueTree)
}

func measureUnique(t *tiler, n *Node) ([]uint64, uint64, error) {
	x := t.input(n, 0)
	if len(x.Shape) != 1 {
		return nil, 0, fmt.Errorf("input of shape %v is not 1-D", x.Shape)
	}
	u := t.uniqueTree(n)
	kind := "unique.values"
	if n.Op == OpUniqueCounts {
		kind = "unique.counts"
	}
	key := t.emit(&ChunkOp{Kind: kind, Inputs: []int{int(u.root)}, Shape: []int{u.bound}, DType: n.DType, Args: UniqueArgs{}})
	return []uint64{key}, u.probe, nil
}

// finishUnique reads the values or counts, now of a known length, and cuts
// them into the default chunks.
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

// keyValue is the inverse of sortKey: the value of dtype dt whose key is k
// (+0 for the key of ±0, NaN for that of every NaN), written to dst.
func keyValue(dst []byte, dt DType, k uint64) {
	switch dt {
	case Bool:
		dst[0] = byte(k)
		return
	case Int32:
		binary.LittleEndian.PutUint32(dst, uint32(int32(int64(k^1<<63))))
		return
	case Int64:
		binary.LittleEndian.PutUint64(dst, k^1<<63)
		return
	}
	v := math.NaN()
	switch {
	case k == math.MaxUint64:
	case k>>63 == 1:
		v = math.Float64frombits(k &^ (1 << 63))
	default:
		v = math.Float64frombits(^k)
	}
	if dt == Float32 {
		binary.LittleEndian.PutUint32(dst, math.Float32bits(float32(v)))
		return
	}
	binary.LittleEndian.PutUint64(dst, math.Float64bits(v))
}

// keyCounts views a pairs chunk of the unique kernels: int64 (n, 2) of
// (sort key, count).
func keyCounts(a *Array) ([]keyCount, error) {
	if a.DType != Int64 || len(a.Shape) != 2 || a.Shape[1] != 2 {
		return nil, fmt.Errorf("input %v%v is not (key, count) pairs", a.DType, a.Shape)
	}
	return view[keyCount](a.Data), nil
}

// keyCount is a unique value, by its sort key, and how often it occurs.
type keyCount struct {
	key   uint64
	count int64
}

// pairsArray makes the pairs chunk of kcs.
func pairsArray(kcs []keyCount) *Array {
	out := NewArray(Int64, []int{len(kcs), 2})
	copy(view[keyCount](out.Data), kcs)
	return out
}

// uniqueMapKernel sorts the keys of a chunk and counts each distinct one.
func uniqueMapKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	a := in[0]
	if len(a.Shape) != 1 {
		return nil, fmt.Errorf("input of shape %v is not 1-D", a.Shape)
	}
	keys := make([]uint64, a.Len())
	for i := range keys {
		keys[i] = sortKey(a, i)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	keys = radixSort(keys)
	var out []keyCount
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j] == keys[i] {
			j++
		}
		out = append(out, keyCount{keys[i], int64(j - i)})
		i = j
	}
	return pairsArray(out), nil
}

// radixSort sorts keys, by bytes from the least significant, skipping the
// bytes all keys share (the high bytes of small integers, of floats of one
// sign and range); it returns the sorted keys, keys or a buffer of their
// length. Short runs go to slices.Sort.
func radixSort(keys []uint64) []uint64 {
	if len(keys) < 256 {
		slices.Sort(keys)
		return keys
	}
	var counts [8][256]int
	for _, k := range keys {
		for b := range 8 {
			counts[b][byte(k>>(8*b))]++
		}
	}
	buf := make([]uint64, len(keys))
	src, dst := keys, buf
	for b := range 8 {
		c := &counts[b]
		if c[byte(keys[0]>>(8*b))] == len(keys) {
			continue // every key has this byte
		}
		var offs [256]int
		sum := 0
		for i, n := range c {
			offs[i] = sum
			sum += n
		}
		shift := 8 * b
		for _, k := range src {
			d := byte(k >> shift)
			dst[offs[d]] = k
			offs[d]++
		}
		src, dst = dst, src
	}
	return src
}

// uniqueMergeKernel merges sorted pairs chunks, adding the counts of equal
// keys.
func uniqueMergeKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	parts := make([][]keyCount, len(in))
	total := 0
	for i, a := range in {
		p, err := keyCounts(a)
		if err != nil {
			return nil, err
		}
		parts[i] = p
		total += len(p)
	}
	out := make([]keyCount, 0, total)
	for {
		// Few parts (statsCombine): a scan for the least head is enough.
		best := -1
		for i, p := range parts {
			if len(p) > 0 && (best < 0 || p[0].key < parts[best][0].key) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		kc := parts[best][0]
		parts[best] = parts[best][1:]
		switch n := len(out); {
		case n > 0 && out[n-1].key == kc.key:
			out[n-1].count += kc.count
		case n > 0 && out[n-1].key > kc.key:
			return nil, fmt.Errorf("input %d is not sorted", best)
		default:
			out = append(out, kc)
		}
	}
	return pairsArray(out), nil
}

// uniqueValuesKernel writes the values of a pairs chunk back from their keys.
func uniqueValuesKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	kcs, err := keyCounts(in[0])
	if err != nil {
		return nil, err
	}
	out := NewArray(op.DType, []int{len(kcs)})
	size := op.DType.Size()
	for i, kc := range kcs {
		keyValue(out.Data[i*size:(i+1)*size], op.DType, kc.key)
	}
	return out, nil
}

// uniqueCountsKernel writes the counts of a pairs chunk.
func uniqueCountsKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	kcs, err := keyCounts(in[0])
	if err != nil {
		return nil, err
	}
	out := NewArray(Int64, []int{len(kcs)})
	for i, kc := range kcs {
		out.Int64s()[i] = kc.count
	}
	return out, nil
}

func uniqueLenKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	out := NewArray(Int64, []int{})
	out.Int64s()[0] = int64(in[0].Shape[0])
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
			v, err := binAt(a, i)
			if err != nil {
				return nil, err
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
