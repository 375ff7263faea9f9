package sched

import (
	"context"
	"slices"
	"testing"
	"time"

	"marsfs/exec/engine"
	"marsfs/exec/worker"
	"marsfs/shm"
	"marsfs/tensor"
)

// TestGraphStatusSpill runs a graph whose chunks outgrow a worker's shared
// memory: the bytes the worker spills reach the graph's status, and the
// result read back is right.
func TestGraphStatusSpill(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := shm.Open(shm.Options{Dir: t.TempDir(), SpillDir: t.TempDir(), Limit: 2 << 20, Name: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() }) // after the worker's close, registered later
	tc := startTestCluster(t, worker.Config{Name: "w1", Slots: 2, Store: shm.NewArrays(st)})
	e := engine.New(tc.s)
	defer e.Close()
	sess, err := e.NewSession("test")
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	// 8 chains of 512 KiB chunks whose ends, 4 MiB, are kept: twice the
	// store's shared memory.
	const chains, n = 8, 1 << 16
	job := addChainsJob(chains, n, 1<<30)
	out := tensor.TiledTensor{Name: "r", Shape: []int{chains * n}, DType: tensor.Float64, Chunks: [][]int{slices.Repeat([]int{n}, chains)}}
	for k := range job.Graph.Ops {
		if job.Keep[job.IDs[k]] {
			out.Keys = append(out.Keys, uint64(k))
		}
	}
	job.Graph.Outputs = []tensor.TiledTensor{out}
	gr, err := sess.Start("# spills", nil, job.Graph, engine.Stages{})
	if err != nil {
		t.Fatal(err)
	}
	status := gr.Wait(ctx)
	if status.State != engine.Succeeded {
		t.Fatalf("graph %v: %s", status.State, gr.Err())
	}
	if status.SpilledBytes == 0 || status.SpilledBytes > st.Stats().Spilled {
		t.Errorf("graph status spilled_bytes %d; the store spilled %d", status.SpilledBytes, st.Stats().Spilled)
	}
	r, ok := sess.Tensor("r")
	if !ok {
		t.Fatal("no tensor r")
	}
	got, err := r.Fetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got.Float64s() {
		if v != 4 {
			t.Fatalf("r[%d] = %v, want 4", i, v)
		}
	}
}
