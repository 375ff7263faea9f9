package sched

import (
	"testing"

	"marsfs/exec/engine"
	"marsfs/tensor/tile"
)

// TestWorkerProcessCrashShuffle kills a worker process in the middle of a
// graph of masks and integer-array indexing, tiled in stages, whose take
// shuffles pieces between the blocks of x and those of the indices: the
// pieces are chunks like any other, so the lost ones are made again from
// lineage on the survivors, and the result is bit-identical to the local
// scheduler's (workerProcessCrash checks it, the re-runs, and that the
// survivors keep only the result).
func TestWorkerProcessCrashShuffle(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	workerProcessCrash(t, "x = rand(2000000, chunks=100000, seed=3)\ni = randint(-2000000, 2000000, 400000, chunks=40000, seed=4)\n"+
		"m = x[x > 0.7]\ny = x[i].sum() + (m + 0).sum() + m.max() + sort(m[:1000]).sum()", "y")
}

// TestWorkerProcessCrashSampleSort kills a worker process in the middle of
// sample sorts, whose merges read their pieces as ranges of the sorted
// blocks (chunk.Range): a lost block is made again from lineage, its
// pieces with it, and the result is bit-identical to the local scheduler's.
// It kills once in the first stage (local sorts, counts) and once in the
// second, once a few merges have read their ranges.
func TestWorkerProcessCrashSampleSort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	defer func(old int) { tile.SampleSortMin = old }(tile.SampleSortMin)
	tile.SampleSortMin = 4
	const src = "x = rand(1500000, chunks=50000, seed=3)\ny = sort(x) + argsort(x)"
	// One local run for both kills: under -race it takes as long as the
	// cluster's.
	want := localResult(t, src, "y")
	t.Run("first stage", func(t *testing.T) { workerProcessCrashAt(t, src, "y", want, crashAtThird) })
	t.Run("merges", func(t *testing.T) {
		workerProcessCrashAt(t, src, "y", want, func(g *engine.Graph, first int) bool {
			st := g.Status()
			return st.Operands > first && st.Finished >= first+4
		})
	})
}

// TestWorkerProcessCrashRechunk kills a worker process in the middle of
// rechunks between strips: row strips split by rechunk.split map ops and
// read as runs of the splits, column strips read as runs of themselves.
// The lost splits and strips are made again from lineage; the result is
// bit-identical to the local scheduler's.
func TestWorkerProcessCrashRechunk(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	workerProcessCrash(t, "x = rand(1200, 1200, chunks=(40, 1200), seed=3) * 2\n"+
		"y = x.rechunk((1200, 40)) + x.rechunk((1200, 40)).rechunk((30, 1200)).T", "y")
}
