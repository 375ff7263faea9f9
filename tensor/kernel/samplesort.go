package kernel

import (
	"context"
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// The kernels of the sample sort (tile/samplesort.go). Every chunk but
// the counts and the final values holds (key, index) pairs, keyIndex, in
// lessPair order.

func pairsOf(a *tensor.Array) ([]keyIndex, error) {
	if a.DType != tensor.Int64 || len(a.Shape) != 2 || a.Shape[1] != 2 {
		return nil, fmt.Errorf("a pairs chunk is int64 (n, 2), not %v%v", a.DType, a.Shape)
	}
	return tensor.View[keyIndex](a.Data), nil
}

func keyIndexArray(p []keyIndex) *tensor.Array {
	out := tensor.NewArray(tensor.Int64, []int{len(p), 2})
	copy(tensor.View[keyIndex](out.Data), p)
	return out
}

func sampleArgs(op *chunk.Op) (chunk.SampleSortArgs, error) {
	a, ok := op.Args.(chunk.SampleSortArgs)
	if !ok || a.P < 1 || a.Dest < 0 || a.Dest >= a.P {
		return a, fmt.Errorf("bad args %v", op.Args)
	}
	return a, nil
}

// ssortSampleKernel takes min(P, n) pairs of its sorted block, evenly
// spaced from the first: the regular sample of PSRS.
func ssortSampleKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, err := sampleArgs(op)
	if err != nil {
		return nil, err
	}
	p, err := pairsOf(in[0])
	if err != nil {
		return nil, err
	}
	s := min(args.P, len(p))
	out := make([]keyIndex, s)
	for j := range s {
		out[j] = p[j*len(p)/s]
	}
	return keyIndexArray(out), nil
}

// ssortSplittersKernel sorts every block's sample and picks the P-1
// splitters at its P-quantiles.
func ssortSplittersKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, err := sampleArgs(op)
	if err != nil {
		return nil, err
	}
	var all []keyIndex
	for _, a := range in {
		p, err := pairsOf(a)
		if err != nil {
			return nil, err
		}
		all = append(all, p...)
	}
	slices.SortFunc(all, comparePair)
	out := make([]keyIndex, args.P-1)
	if len(all) == 0 {
		return nil, fmt.Errorf("no samples")
	}
	for d := 1; d < args.P; d++ {
		out[d-1] = all[min(d*len(all)/args.P, len(all)-1)]
	}
	return keyIndexArray(out), nil
}

func comparePair(a, b keyIndex) int {
	switch {
	case lessPair(a, b):
		return -1
	case lessPair(b, a):
		return 1
	}
	return 0
}

// destRange is the part [lo, hi) of the sorted block p that destination d
// takes: from the first pair not below splitter d-1 to the first not below
// splitter d.
func destRange(p, spl []keyIndex, d int) (int, int) {
	bound := func(k int) int {
		if k < 0 {
			return 0
		}
		if k >= len(spl) {
			return len(p)
		}
		i, _ := slices.BinarySearchFunc(p, spl[k], comparePair)
		return i
	}
	return bound(d - 1), bound(d)
}

// ssortCountsKernel counts the pairs of its sorted block that go to each
// destination: an int64 vector of P.
func ssortCountsKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, err := sampleArgs(op)
	if err != nil || len(in) != 2 {
		return nil, fmt.Errorf("ssort.counts takes a block and the splitters (%v)", err)
	}
	p, err := pairsOf(in[0])
	if err != nil {
		return nil, err
	}
	spl, err := pairsOf(in[1])
	if err != nil || len(spl) != args.P-1 {
		return nil, fmt.Errorf("%d splitters for %d destinations (%v)", len(spl), args.P, err)
	}
	out := tensor.NewArray(tensor.Int64, []int{args.P})
	for d := range args.P {
		lo, hi := destRange(p, spl, d)
		out.Int64s()[d] = int64(hi - lo)
	}
	return out, nil
}

// ssortTableKernel lays the blocks' counts out one after the other: the
// probe from which the next stage places every piece.
func ssortTableKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	out := tensor.NewArray(tensor.Int64, op.Shape)
	table := out.Int64s()
	at := 0
	for _, a := range in {
		if a.DType != tensor.Int64 || at+a.Len() > len(table) {
			return nil, fmt.Errorf("counts %v%v past a table of %d", a.DType, a.Shape, len(table))
		}
		at += copy(table[at:], a.Int64s())
	}
	if at != len(table) {
		return nil, fmt.Errorf("counts of %d for a table of %d", at, len(table))
	}
	return out, nil
}

// ssortMergeKernel merges one destination's sorted pieces (each a range
// of a sorted block, chunk.Range), pairwise in rounds (a tree of merges: O(m log p) comparisons for m pairs of p
// pieces).
func ssortMergeKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	runs := make([][]keyIndex, 0, len(in))
	total := 0
	for _, a := range in {
		p, err := pairsOf(a)
		if err != nil {
			return nil, err
		}
		if len(p) > 0 {
			runs = append(runs, p)
			total += len(p)
		}
	}
	out := tensor.NewArray(tensor.Int64, []int{total, 2})
	if len(runs) == 0 {
		return out, nil
	}
	buf, spare := make([]keyIndex, total), tensor.View[keyIndex](out.Data)
	for len(runs) > 1 {
		next := runs[:0:0]
		o := 0
		for i := 0; i < len(runs); i += 2 {
			if i+1 == len(runs) {
				next = append(next, spare[o:o+copy(spare[o:], runs[i])])
				o += len(runs[i])
				continue
			}
			a, b := runs[i], runs[i+1]
			dst := spare[o : o+len(a)+len(b)]
			mergePairs(dst, a, b)
			next = append(next, dst)
			o += len(dst)
		}
		runs = next
		buf, spare = spare, buf
	}
	if res := tensor.View[keyIndex](out.Data); &runs[0][0] != &res[0] {
		copy(res, runs[0])
	}
	return out, nil
}

// mergePairs merges the sorted a and b into dst (len(a)+len(b)).
func mergePairs(dst, a, b []keyIndex) {
	i, j := 0, 0
	for k := range dst {
		if j == len(b) || i < len(a) && !lessPair(b[j], a[i]) {
			dst[k] = a[i]
			i++
		} else {
			dst[k] = b[j]
			j++
		}
	}
}

// ssortValuesKernel turns sorted pairs back into values of the op's dtype.
func ssortValuesKernel(_ context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	p, err := pairsOf(in[0])
	if err != nil {
		return nil, err
	}
	out := tensor.NewArray(op.DType, []int{len(p)})
	sz := op.DType.Size()
	for i, k := range p {
		keyValue(out.Data[i*sz:(i+1)*sz], op.DType, k.key)
	}
	return out, nil
}
