package exec

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestCoreDepth checks the bound on the ops outstanding at a worker: with
// two slots and depth 1 a worker gets two of four independent ops, the rest
// wait at the core, and a worker that comes up takes them.
func TestCoreDepth(t *testing.T) {
	h := newHarness(t, graph([][]int{nil, nil, nil, nil, {0, 1, 2, 3}}), []int{4}, CoreOptions{Depth: 1}, "w1")
	h.apply(h.c.Start())
	if len(h.runs) != 2 {
		t.Fatalf("two-slot worker got %d ops at depth 1", len(h.runs))
	}
	h.apply(h.c.WorkerUp("w2", 2))
	if len(h.runs) != 4 {
		t.Fatalf("after w2 came up %d ops are out", len(h.runs))
	}
	on := map[string]int{}
	for _, r := range h.runs {
		on[r.Worker]++
	}
	if on["w1"] != 2 || on["w2"] != 2 {
		t.Errorf("ops per worker %v", on)
	}
	h.finishAll()
	if !h.done || h.err != nil {
		t.Errorf("job done %v, %v", h.done, h.err)
	}
}

// TestWorkerJoinsMidJob starts a long job on one worker and a second worker
// in the middle of it: the newcomer runs some of the job's ops.
func TestWorkerJoinsMidJob(t *testing.T) {
	tc := newTestCluster(t, 1, false)
	job := chainsJob(40, 150, 0)
	var mu sync.Mutex
	finished := map[string]int{}
	job.Observe = func(ev Event) {
		if ev.State == Finished {
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
	w2, err := StartWorker(ctx, WorkerConfig{Name: "w2", Join: []string{tc.s.GossipAddr()}, Slots: 2, Fast: true})
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
