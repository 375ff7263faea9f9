package tile

import (
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// The sample sort (PSRS, as Mars sorts) of a 1-D array of p blocks, in two
// stages (stage.go), on the shuffle of chunk.Range. Every element is a
// (key, index) pair (sort.local's argsort form), ordered by key, then
// index: a total order, so that equal values split between destinations
// like any others.
//
//	first stage
//	sort.local      p   each block sorted on its own: the shuffle's map
//	                    op, whose chunk is its pairs laid out destination
//	                    by destination (sorted, they already are)
//	ssort.sample    p   min(p, n) pairs of each, evenly spaced
//	ssort.splitters 1   the p-1 p-quantiles of all the samples (p² pairs)
//	ssort.counts    p   how many pairs of block c go to each destination:
//	                    the index of block c's pieces
//	ssort.table     1   the counts of every block, p² numbers: the probe
//	second stage
//	ssort.merge     p   destination d's pieces merged, each piece read as
//	                    a Range of a sorted block (its offset the sum of
//	                    the block's counts before d): the d-th block of
//	                    the result
//	ssort.values    p   the merged pairs as values ("argsort.indices":
//	                    as indices), fused with the merge into one op
//
// A piece is no op and no chunk: it is the part of a sorted block that a
// merge reads, and only its bytes travel (a worker's chunk service sends
// a range; a worker on the block's host maps the block and slices it).
// So the shuffle is 3p+2 ops in its first stage and p merges (each fused
// with its values op) in its second, each element crosses between
// workers at most once, and a lost block is made again from lineage like
// any chunk, its pieces with it. The merge-split network
// of sortBlocks moves each element O(log² p) times but needs no stage.
//
// Sort and argsort of 1-D arrays take the sample sort from SampleSortMin
// blocks on, and keep the network for 2-D arrays (one sort a row) and for
// the percentiles, which need blocks of known offsets (a sort of an array
// whose percentiles are taken too shares their network, sorting once).
//
// The crossover, measured (TestSortCrossover: sort and argsort of 4·10⁶
// float64 on 2 and 3 worker processes, medians of three, a 2-core host
// at load 7-11): the sample sort moved 64-87 MB between workers whatever
// the blocks, the network 96 MB at 2 blocks and 0.8-1.2 GB at 64. With
// the blocks sorted by comparison, the network won at 2 and 4 blocks on 3
// workers and the sample sort from 8 on; with the radix sort of pairs
// (sort.local, which the sample sort uses for every block and the network
// only for argsort), the sample sort won at every count from 2 to 64, on
// both (0.29-0.93 s against 0.44-1.84 s). So it takes every 1-D array of
// 2 blocks or more. Not measured: small arrays, where the stage's round
// trip to the scheduler (which the network does without) may cost more
// than the sort. math.MaxInt turns it off.
var SampleSortMin = 2

// sampleSorts says whether n's sort is a sample sort.
func sampleSorts(t *tiler, n *spec.Node) bool {
	x := t.input(n, 0)
	if len(x.Shape) != 1 || x.Shape[0] == 0 || len(x.Keys) < SampleSortMin {
		return false
	}
	for _, r := range t.readers[n.Inputs[0].ID] {
		if op := t.nodes[r].Op; op == tensor.OpPercentile || op == tensor.OpMedian {
			return false
		}
	}
	return true
}

func measureSampleSort(t *tiler, n *spec.Node) ([]uint64, uint64, error) {
	x := t.input(n, 0)
	if len(x.Shape) != 1 {
		return nil, 0, fmt.Errorf("sample sort of a %d-D array", len(x.Shape))
	}
	p := len(x.Keys)
	sizes := x.Chunks[0]
	offs := tensor.ChunkOffsets(x.Chunks)[0]
	local := make([]uint64, p)
	samples := make([]int, p)
	for c, k := range x.Keys {
		local[c] = t.emit(&chunk.Op{Kind: chunk.KindSortLocal, Inputs: []int{int(k)}, Shape: []int{sizes[c], 2}, DType: tensor.Int64,
			Args: chunk.SortArgs{Pairs: true, Offset: offs[c]}})
		samples[c] = int(t.emit(&chunk.Op{Kind: chunk.KindSsortSample, Inputs: []int{int(local[c])}, Shape: []int{min(p, sizes[c]), 2}, DType: tensor.Int64,
			Args: chunk.SampleSortArgs{P: p}}))
	}
	spl := int(t.emit(&chunk.Op{Kind: chunk.KindSsortSplitters, Inputs: samples, Shape: []int{p - 1, 2}, DType: tensor.Int64, Args: chunk.SampleSortArgs{P: p}}))
	counts := make([]int, p)
	for c := range p {
		counts[c] = int(t.emit(&chunk.Op{Kind: chunk.KindSsortCounts, Inputs: []int{int(local[c]), spl}, Shape: []int{p}, DType: tensor.Int64, Args: chunk.SampleSortArgs{P: p}}))
	}
	probe := t.emit(&chunk.Op{Kind: chunk.KindSsortTable, Inputs: counts, Shape: []int{p * p}, DType: tensor.Int64})
	return local, probe, nil
}

// finishSampleSort merges each destination's pieces, ranges of the sorted
// blocks ids, and makes the result of the destinations that received
// anything, as values or indices. counts[c*p+d] is the length of block
// c's piece for destination d.
func finishSampleSort(t *tiler, n *spec.Node, ids []uint64, counts []int) (*tensor.TiledTensor, error) {
	p := len(ids)
	if len(counts) != p*p {
		return nil, fmt.Errorf("%d counts for %d sorted blocks", len(counts), p)
	}
	blocks := make([]int, p)
	at := make([]int, p) // where block c's next piece begins
	for c, id := range ids {
		l := 0
		for d := range p {
			l += counts[c*p+d]
		}
		blocks[c] = int(t.emit(&chunk.Op{Kind: chunk.KindStored, Stored: id, Shape: []int{l, 2}, DType: tensor.Int64}))
	}
	kind := chunk.KindSsortValues
	if n.Op == tensor.OpArgsort {
		kind = chunk.KindArgsortIndices
	}
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{nil}}
	total := 0
	for d := range p {
		var inputs []int
		var ranges []chunk.Range
		l := 0
		for c := range p {
			k := counts[c*p+d]
			if k > 0 {
				inputs = append(inputs, blocks[c])
				ranges = append(ranges, chunk.Range{Off: 2 * at[c], Shape: []int{k, 2}, DType: tensor.Int64})
			}
			at[c] += k
			l += k
		}
		if l == 0 {
			continue
		}
		total += l
		merged := t.emit(&chunk.Op{Kind: chunk.KindSsortMerge, Inputs: inputs, Ranges: chunk.RangesOf(ranges), Shape: []int{l, 2}, DType: tensor.Int64, Args: chunk.SampleSortArgs{P: p, Dest: d}})
		out.Keys = append(out.Keys, t.emit(&chunk.Op{Kind: kind, Inputs: []int{int(merged)}, Shape: []int{l}, DType: n.DType}))
		out.Chunks[0] = append(out.Chunks[0], l)
	}
	if total != n.Shape[0] {
		return nil, fmt.Errorf("the merged blocks hold %d elements of %d", total, n.Shape[0])
	}
	return out, nil
}
