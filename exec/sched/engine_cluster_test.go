package sched

import (
	"bytes"
	"context"
	"testing"
	"time"

	"marsfs/exec/engine"
	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/tensortest"
	"marsfs/tensor/tile"
)

// waitHeld waits, at most 2 s, for the in-process workers to hold want
// chunks, looking at each change of their states.
func (tc *testCluster) waitHeld(want int) {
	tc.t.Helper()
	n := 0
	if !waitWorkers(tc.workers, 2*time.Second, func() bool { n, _ = tc.held(); return n == want }) {
		tc.t.Fatalf("workers hold %d chunks, want %d", n, want)
	}
}

// TestEngineOnScheduler runs session graphs through the Engine on the
// cluster: outputs become session tensors read back from the workers,
// inputs are freed once no tensor holds them, and closing the session frees
// the rest.
func TestEngineOnScheduler(t *testing.T) {
	tc := newTestCluster(t, 2, false)
	stored := map[uint64]*tensor.Array{}
	// IDs far above the engine's own, which count from 1.
	a := putTensor(t, tc.s, ramp(tensor.Float64, []int{9, 4}, 0.5), [][]int{{3, 3, 3}, {2, 2}}, 1<<40, stored)
	b := putTensor(t, tc.s, ramp(tensor.Float64, []int{4, 5}, 2), [][]int{{2, 2}, {5}}, 1<<41, stored)
	na := &spec.Node{ID: 0, Op: tensor.OpInput, Shape: a.Shape, DType: a.DType, Chunks: a.Chunks, Attrs: spec.Attrs{Name: "a"}}
	nb := &spec.Node{ID: 1, Op: tensor.OpInput, Shape: b.Shape, DType: b.DType, Chunks: b.Chunks, Attrs: spec.Attrs{Name: "b"}}
	mm := &spec.Node{ID: 2, Op: tensor.OpMatmul, Inputs: []*spec.Node{na, nb}, Shape: []int{9, 5}, DType: tensor.Float64}
	g := &spec.Graph{Nodes: []*spec.Node{na, nb, mm}, Outputs: []spec.Output{{Name: "c", Node: mm}}}
	cg, err := tile.Graph(g, envMap{"a": a, "b": b})
	if err != nil {
		t.Fatal(err)
	}
	want, err := tensortest.Compute(context.Background(), cg, func(id uint64) (*tensor.Array, error) { return stored[id], nil })
	if err != nil {
		t.Fatal(err)
	}

	e := engine.New(tc.s)
	sess, err := e.NewSession("test")
	if err != nil {
		t.Fatal(err)
	}
	gr, err := sess.Start("# c = a @ b", nil, cg, engine.Stages{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st := gr.Wait(ctx)
	if st.State != engine.Succeeded {
		t.Fatalf("graph %v: %s", st.State, gr.Err())
	}
	if st.Finished != len(cg.Ops) || st.PeakChunks == 0 || st.TransferBytes == 0 {
		t.Errorf("status %+v", st)
	}
	c, ok := sess.Tensor("c")
	if !ok {
		t.Fatal("no tensor c")
	}
	got, err := c.Fetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Data, want[0].Data) {
		t.Fatalf("c = %v, want %v", got.Float64s(), want[0].Float64s())
	}
	// The inputs were held by the graph only: freed with it.
	tc.waitHeld(len(cg.Outputs[0].Keys))

	// A long graph cancelled through the session layer.
	long := chainsJob(4, 30000, 0) // long enough to be cancelled while small ops go out in units
	long.Graph.Outputs = []tensor.TiledTensor{{Name: "long", Shape: []int{4}, DType: tensor.Float64, Chunks: [][]int{{4}}, Keys: []uint64{uint64(len(long.Graph.Ops) - 1)}}}
	gl, err := sess.Start("# long", nil, long.Graph, engine.Stages{})
	if err != nil {
		t.Fatal(err)
	}
	// Cancelled once it runs, with ops out on the workers.
	if !waitGraph(gl, 10*time.Second, func() bool { st := gl.Status(); return st.Running+st.Finished > 0 }) {
		t.Fatalf("long graph %v before any op ran", gl.Status().State)
	}
	begin := time.Now()
	gl.Cancel()
	if st := gl.Wait(ctx); st.State != engine.CancelledGraph {
		t.Fatalf("cancelled graph is %v", st.State)
	}
	took := time.Since(begin)
	t.Logf("session graph cancelled in %v", took)
	if took > 2*time.Second {
		t.Errorf("cancel took %v, want at most 2 s", took)
	}
	tc.waitHeld(len(cg.Outputs[0].Keys))

	sess.Close()
	tc.waitHeld(0)
	e.Close()
}
