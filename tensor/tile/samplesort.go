package tile

import (
	"fmt"
	"math"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// The sample sort (PSRS, as Mars sorts) of a 1-D array of p blocks, in two
// stages (stage.go). Every element is a (key, index) pair (sort.local's
// argsort form), ordered by key, then index: a total order, so that equal
// values split between destinations like any others.
//
//	sort.local     p   each block sorted on its own
//	ssort.sample   p   min(p, n) pairs of each, evenly spaced
//	ssort.splitters 1  the p-1 p-quantiles of all the samples (p² pairs)
//	ssort.piece    p²  block c's pairs between splitters d-1 and d
//	ssort.merge    p   destination d's pieces merged: the d-th block of
//	                   the result, of a length the data decides, at most
//	                   (2p+2)·⌈m/p⌉ for blocks of at most m (PSRS' bound)
//	ssort.counts   p   how many pairs of block c go to each destination
//	ssort.lens     1   their sums: the probe, the result's chunks
//
// Each piece is an ordinary chunk, cut where its block is (it reads the
// block and the splitters), so only the pairs themselves travel to the
// merges: every element moves once, where the merge-split network of
// sortBlocks moves each O(log² p) times. The next stage turns each merged
// block into values ("ssort.values") or indices ("argsort.indices"); its
// blocks are the destinations that received anything.
//
// Sort and argsort of 1-D arrays take the sample sort from SampleSortMin
// blocks on, and keep the network for 2-D arrays (one sort a row) and for
// the percentiles, which need blocks of known offsets (a sort of an array
// whose percentiles are taken too shares their network, sorting once).
//
// It is off by default, as measured (TestSortOnCluster, 4·10⁶ float64,
// sort and argsort, three workers in one process, a loaded 2-core host):
// at 16 blocks the sample sort moved 1.05 GB and 0.56 GB between workers
// in two runs, against the network's 0.54 GB and 0.44 GB (4.1 s against
// 3.6 s in the second); at 64 blocks 5.7 GB in 7.6 s against 1.1 GB in
// 4.3 s. Single runs each: the host's load moves them by tens of percent.
// The scheduler places many of the p pieces of a block away from it (each
// op queued on a worker costs waitCost, and p of them become ready at
// once), and each such piece fetches the whole block. In one process
// (BenchmarkSortBlocks) neither wins beyond the noise. The sample sort
// pays once a map op cuts all of a block's pieces where the block is, the
// shuffle of issue 21 that the runtime does not have yet.
var SampleSortMin = math.MaxInt

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
	m := slices.Max(sizes)
	local := make([]int, p)
	samples := make([]int, p)
	for c, k := range x.Keys {
		local[c] = int(t.emit(&chunk.Op{Kind: "sort.local", Inputs: []int{int(k)}, Shape: []int{sizes[c], 2}, DType: tensor.Int64,
			Args: chunk.SortArgs{Pairs: true, Offset: offs[c]}}))
		samples[c] = int(t.emit(&chunk.Op{Kind: "ssort.sample", Inputs: []int{local[c]}, Shape: []int{min(p, sizes[c]), 2}, DType: tensor.Int64,
			Args: chunk.SampleSortArgs{P: p}}))
	}
	spl := int(t.emit(&chunk.Op{Kind: "ssort.splitters", Inputs: samples, Shape: []int{p - 1, 2}, DType: tensor.Int64, Args: chunk.SampleSortArgs{P: p}}))
	counts := make([]int, p)
	for c := range p {
		counts[c] = int(t.emit(&chunk.Op{Kind: "ssort.counts", Inputs: []int{local[c], spl}, Shape: []int{p}, DType: tensor.Int64, Args: chunk.SampleSortArgs{P: p}}))
	}
	probe := t.emit(&chunk.Op{Kind: "ssort.lens", Inputs: counts, Shape: []int{p}, DType: tensor.Int64})
	bound := min(x.Shape[0], (2*p+2)*((m+p-1)/p))
	merges := make([]uint64, p)
	for d := range p {
		pieces := make([]int, p)
		for c := range p {
			pieces[c] = int(t.emit(&chunk.Op{Kind: "ssort.piece", Inputs: []int{local[c], spl}, Shape: []int{sizes[c], 2}, DType: tensor.Int64,
				Args: chunk.SampleSortArgs{P: p, Dest: d}}))
		}
		merges[d] = t.emit(&chunk.Op{Kind: "ssort.merge", Inputs: pieces, Shape: []int{bound, 2}, DType: tensor.Int64, Args: chunk.SampleSortArgs{P: p, Dest: d}})
	}
	return merges, probe, nil
}

// finishSampleSort makes the result of the merged blocks that received
// anything, as values or indices.
func finishSampleSort(t *tiler, n *spec.Node, ids []uint64, lens []int) (*tensor.TiledTensor, error) {
	if len(ids) != len(lens) {
		return nil, fmt.Errorf("%d merged blocks for %d lengths", len(ids), len(lens))
	}
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: [][]int{nil}}
	total := 0
	for d, l := range lens {
		if l == 0 {
			continue
		}
		total += l
		in := t.emit(&chunk.Op{Kind: "stored", Stored: ids[d], Shape: []int{l, 2}, DType: tensor.Int64})
		kind := "ssort.values"
		if n.Op == tensor.OpArgsort {
			kind = "argsort.indices"
		}
		out.Keys = append(out.Keys, t.emit(&chunk.Op{Kind: kind, Inputs: []int{int(in)}, Shape: []int{l}, DType: n.DType}))
		out.Chunks[0] = append(out.Chunks[0], l)
	}
	if total != n.Shape[0] {
		return nil, fmt.Errorf("the merged blocks hold %d elements of %d", total, n.Shape[0])
	}
	return out, nil
}
