package kernel

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// shapeFits reports whether a chunk of shape is what op makes: its shape,
// or, for an op whose length the data decides, one no longer along the
// first axis.
func shapeFits(op *chunk.Op, shape []int) bool {
	if slices.Equal(shape, op.Shape) {
		return true
	}
	_, ok := op.Args.(chunk.LengthBound)
	return ok && len(shape) == len(op.Shape) && len(shape) > 0 && shape[0] <= op.Shape[0] && slices.Equal(shape[1:], op.Shape[1:])
}

// keyValue is the inverse of sortKey: the value of dtype dt whose key is k
// (+0 for the key of ±0, NaN for that of every NaN), written to dst.
func keyValue(dst []byte, dt tensor.DType, k uint64) {
	switch dt {
	case tensor.Bool:
		dst[0] = byte(k)
		return
	case tensor.Int32:
		binary.LittleEndian.PutUint32(dst, uint32(int32(int64(k^1<<63))))
		return
	case tensor.Int64:
		binary.LittleEndian.PutUint64(dst, k^1<<63)
		return
	case tensor.Uint64:
		binary.LittleEndian.PutUint64(dst, k)
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
	if dt == tensor.Float32 {
		binary.LittleEndian.PutUint32(dst, math.Float32bits(float32(v)))
		return
	}
	binary.LittleEndian.PutUint64(dst, math.Float64bits(v))
}

// keyCounts views a pairs chunk of the unique kernels: int64 (n, 2) of
// (sort key, count).
func keyCounts(a *tensor.Array) ([]keyCount, error) {
	if a.DType != tensor.Int64 || len(a.Shape) != 2 || a.Shape[1] != 2 {
		return nil, fmt.Errorf("input %v%v is not (key, count) pairs", a.DType, a.Shape)
	}
	return tensor.View[keyCount](a.Data), nil
}

// keyCount is a unique value, by its sort key, and how often it occurs.
type keyCount struct {
	key   uint64
	count int64
}

// pairsArray makes the pairs chunk of kcs.
func pairsArray(kcs []keyCount) *tensor.Array {
	out := tensor.NewArray(tensor.Int64, []int{len(kcs), 2})
	copy(tensor.View[keyCount](out.Data), kcs)
	return out
}

// uniqueMapKernel sorts the keys of a chunk and counts each distinct one.
func uniqueMapKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
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
func uniqueMergeKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
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
func uniqueValuesKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	kcs, err := keyCounts(in[0])
	if err != nil {
		return nil, err
	}
	out := tensor.NewArray(op.DType, []int{len(kcs)})
	size := op.DType.Size()
	for i, kc := range kcs {
		keyValue(out.Data[i*size:(i+1)*size], op.DType, kc.key)
	}
	return out, nil
}

// uniqueCountsKernel writes the counts of a pairs chunk.
func uniqueCountsKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	kcs, err := keyCounts(in[0])
	if err != nil {
		return nil, err
	}
	out := tensor.NewArray(tensor.Int64, []int{len(kcs)})
	for i, kc := range kcs {
		out.Int64s()[i] = kc.count
	}
	return out, nil
}

func uniqueLenKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	out := tensor.NewArray(tensor.Int64, []int{})
	out.Int64s()[0] = int64(in[0].Shape[0])
	return out, nil
}

// bincountLenKernel finds max(minlength, max(x)+1) of a chunk, or the
// largest of such lengths.
func bincountLenKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.BincountLenArgs)
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
	if l > tensor.MaxOneChunk {
		return nil, fmt.Errorf("the counts would be %d long, more than the %d of one chunk", l, tensor.MaxOneChunk)
	}
	out := tensor.NewArray(tensor.Int64, []int{})
	out.Int64s()[0] = l
	return out, nil
}
