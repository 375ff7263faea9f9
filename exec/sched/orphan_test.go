package sched

import (
	"context"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/worker"
	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/tile"
)

// TestSchedulerGoneFreesChunks keeps a graph's result and an upload on two
// workers, then takes the scheduler away without a word (Close sends no
// frees, as a crash would not): once their orphan grace has passed, the
// workers must drop every chunk they held for it, since no scheduler can
// name them any more.
func TestSchedulerGoneFreesChunks(t *testing.T) {
	tc := startTestCluster(t, worker.Config{Name: "w1", Slots: 2, OrphanGrace: 300 * time.Millisecond},
		worker.Config{Name: "w2", Slots: 2, OrphanGrace: 300 * time.Millisecond})
	g, err := spec.Parse("x = ones((400, 400), chunks=100)\ny = x * 3\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	cg, err := tile.Graph(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]uint64, len(cg.Ops))
	keep := map[uint64]bool{}
	for k := range ids {
		ids[k] = uint64(5_000 + k)
	}
	for _, k := range cg.Outputs[0].Keys {
		keep[ids[k]] = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tc.s.Run(ctx, &core.Job{Graph: cg, IDs: ids, Keep: keep}); err != nil {
		t.Fatal(err)
	}
	up := tensor.NewArray(tensor.Float64, []int{1000})
	if err := tc.s.Put(ctx, 99_999, up); err != nil {
		t.Fatal(err)
	}
	held := func() int {
		n := 0
		for _, w := range tc.workers {
			n += w.Store().Len()
		}
		return n
	}
	// The frees of the intermediates travel after Run returns: wait for
	// them.
	want := len(keep) + 2 // the upload on two workers
	for deadline := time.Now().Add(5 * time.Second); held() != want && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if n := held(); n != want {
		t.Fatalf("workers hold %d chunks before the scheduler goes, want %d (the kept outputs and the upload's two copies)", n, want)
	}
	tc.s.Close()
	deadline := time.Now().Add(5 * time.Second)
	for held() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("workers still hold %d chunks 5 s after their scheduler went", held())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
