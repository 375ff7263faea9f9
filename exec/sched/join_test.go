package sched

import (
	"context"
	"sync"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/worker"
)

// TestWorkerJoinsMidJob starts a long job on one worker and a second worker
// in the middle of it: the newcomer runs some of the job's ops.
func TestWorkerJoinsMidJob(t *testing.T) {
	tc := newTestCluster(t, 1, false)
	job := chainsJob(40, 600, 0) // long enough (about 0.7 s) for the join to land mid-job
	var mu sync.Mutex
	finished := map[string]int{}
	job.Observe = func(ev core.Event) {
		if ev.State == core.Finished {
			mu.Lock()
			finished[ev.Worker]++
			mu.Unlock()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- tc.s.Run(ctx, job) }()
	for {
		mu.Lock()
		n := finished["w1"]
		mu.Unlock()
		if n >= 100 {
			break
		}
		select {
		case err := <-errc:
			t.Fatalf("job ended before the second worker joined: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	w2, err := worker.Start(ctx, worker.Config{Name: "w2", Join: []string{tc.s.GossipAddr()}, Slots: 2, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	tc.workers = append(tc.workers, w2)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("ops finished per worker: %v of %d", finished, len(job.Graph.Ops))
	if finished["w2"] == 0 {
		t.Error("the worker that joined mid-job ran nothing")
	}
	if finished["w1"]+finished["w2"] != len(job.Graph.Ops) {
		t.Errorf("%v finished, want %d", finished, len(job.Graph.Ops))
	}
	// Only the chains' ends are kept.
	if n, _ := tc.held(); n != 40 {
		t.Errorf("workers hold %d chunks, want 40", n)
	}
}
