package sched

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"marsfs/exec/engine"
	"marsfs/exec/wire"
	"marsfs/tensor"
)

// localResult computes spec's output name with the local scheduler.
func localResult(t *testing.T, spec, name string) []byte {
	t.Helper()
	lr := NewLocal(2)
	defer lr.Close()
	e := engine.New(lr)
	defer e.Close()
	s, err := e.NewSession("test")
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.Submit(spec)
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, g)
	return fetchNamed(t, s, name).Data
}

// TestKilledWhileSending kills a worker process in the middle of sending a
// chunk to another worker: the fetching side sees the frame cut short, the
// scheduler recomputes what the dead worker held on the survivor, and the
// result is the local scheduler's, bit for bit.
func TestKilledWhileSending(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	// Pieces of 2 MiB: x.T's chunks are read by ranges (a quarter of
	// each), and a sender pauses only in a chunk of 1 MiB or more.
	const spec = "x = rand(2048, 2048, chunks=(512, 2048), seed=3)\ny = (x + x.T).sum(axis=0)"
	want := localResult(t, spec, "y")

	// Either worker may be the one that sends (which ops go where depends
	// on who asks for work first): both pause halfway through their first
	// large chunk, and the first to get there is killed.
	tc := newTestCluster(t, 0, true)
	names := []string{"w1", "w2"}
	sending := make(chan int, len(names))
	for i, name := range names {
		out := tc.spawn(nil, name, "MARSFS_TEST_SENDPAUSE=1")
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if sc.Text() == "sending" {
					sending <- i
					break
				}
			}
			io.Copy(io.Discard, out)
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := tc.s.WaitWorkers(ctx, 2); err != nil {
		t.Fatal(err)
	}

	e := engine.New(tc.s)
	defer e.Close()
	s, err := e.NewSession("test")
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.Submit(spec)
	if err != nil {
		t.Fatal(err)
	}
	var victim int
	select {
	case victim = <-sending:
	case <-time.After(30 * time.Second):
		t.Fatalf("no worker sent a large chunk; graph %v", g.Status().State)
	}
	// The victim is blocked halfway through a frame; a peer is reading it.
	name := names[victim]
	text, ok := tc.s.WorkerStatus(name)
	if !ok || statusField(t, text, "sending") < 1 {
		t.Fatalf("%s status while sending:\n%s", name, text)
	}
	tc.killed[victim] = true
	if err := tc.procs[victim].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	st := g.Wait(ctx)
	if st.State != engine.Succeeded {
		t.Fatalf("graph %v after the kill: %s", st.State, g.Err())
	}
	if got := fetchNamed(t, s, "y").Data; !bytes.Equal(got, want) {
		t.Error("result differs from the local scheduler's")
	}
	// The survivor may have paused too, sending to the victim before it
	// died: it would not exit in time.
	select {
	case other := <-sending:
		tc.killed[other] = true
		tc.procs[other].Process.Kill()
	case <-time.After(100 * time.Millisecond):
	}
	evs, _, _ := g.Events(0)
	recomputed := false
	for _, ev := range evs {
		if ev.Err != "" {
			t.Logf("op %d %v on %q: %s", ev.Key, ev.State, ev.Worker, ev.Err)
		}
		if strings.HasPrefix(ev.Err, "chunk lost") || strings.Contains(ev.Err, name+" left") {
			recomputed = true
		}
	}
	if !recomputed {
		t.Error("no event tells of the loss")
	}
}

// TestFetchFromKilledWorker reads a chunk from a worker process killed
// halfway through sending it: the reader gets an error, not a short chunk,
// and does not hang.
func TestFetchFromKilledWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	tc := newTestCluster(t, 0, true)
	out := tc.spawn(nil, "w1", "MARSFS_TEST_SENDPAUSE=1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tc.s.WaitWorkers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := tc.s.Put(ctx, 1, ramp(tensor.Float64, []int{1 << 18}, 1)); err != nil { // 2 MiB
		t.Fatal(err)
	}
	_, addr := tc.s.conn("w1")
	pool := wire.NewPool(1<<30, nil)
	defer pool.Close()
	type result struct {
		a   *tensor.Array
		err error
	}
	res := make(chan result, 1)
	go func() {
		a, err := pool.Fetch(ctx, addr, 1)
		res <- result{a, err}
	}()
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "sending" {
		t.Fatalf("worker printed %q", sc.Text())
	}
	tc.killed[0] = true
	if err := tc.procs[0].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-res:
		if r.err == nil {
			t.Fatalf("fetch from a killed sender returned a %d-byte chunk", len(r.a.Data))
		}
		t.Logf("fetch: %v", r.err)
	case <-time.After(5 * time.Second):
		t.Fatal("fetch from a killed sender hangs")
	}
}
