package sched

import (
	"context"
	"testing"
	"time"

	"marsfs/exec/worker"
)

// TestSchedulerGoneFreesChunks keeps a graph's result and an upload on two
// workers, then takes the scheduler away without a word (Close sends no
// frees, as a crash would not): once their orphan grace has passed, the
// workers must drop every chunk they held for it, since no scheduler can
// name them any more.
func TestSchedulerGoneFreesChunks(t *testing.T) {
	tc := startTestCluster(t, worker.Config{Name: "w1", Slots: 2, OrphanGrace: 300 * time.Millisecond},
		worker.Config{Name: "w2", Slots: 2, OrphanGrace: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ks := keepAndUpload(ctx, t, tc.s, 5_000)
	held := func() int {
		n := 0
		for _, w := range tc.workers {
			n += w.Store().Len()
		}
		return n
	}
	// The frees of the intermediates travel after Run returns: wait for
	// them.
	want := len(ks.kept) + 2 // the upload on two workers
	if !waitWorkers(tc.workers, 5*time.Second, func() bool { return held() == want }) {
		n := held()
		t.Fatalf("workers hold %d chunks before the scheduler goes, want %d (the kept outputs and the upload's two copies)", n, want)
	}
	tc.s.Close()
	if !waitWorkers(tc.workers, 5*time.Second, func() bool { return held() == 0 }) {
		t.Fatalf("workers still hold %d chunks 5 s after their scheduler went", held())
	}
}
