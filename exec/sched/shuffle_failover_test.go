package sched

import "testing"

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
