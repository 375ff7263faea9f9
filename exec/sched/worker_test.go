package sched

import (
	"bufio"
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/wire"
	"marsfs/exec/worker"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// TestChunkOwnership runs two attempts of one op on a worker: the first
// blocks on a peer that never answers, the second makes the chunk. The
// first, cancelled afterwards, must leave the second's chunk alone.
func TestChunkOwnership(t *testing.T) {
	g0 := runtime.NumGoroutine()
	w, err := worker.Start(context.Background(), worker.Config{Name: "w", Slots: 2, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	mute := newMutePeer(t) // accepts connections, never answers
	cc, recv := dialControl(t, w)
	blocked := &chunk.Op{Kind: "assemble", Inputs: []int{0}, Shape: []int{3}, DType: tensor.Int64, Args: chunk.AssembleArgs{}}
	cc.Send(&wire.Msg{Kind: wire.MsgSubmit, Job: 1, Key: 0, Attempt: 1, Op: blocked, ID: 42,
		Inputs: []core.Location{{ID: 5, Worker: "peer", NBytes: 8}}, Addrs: []string{mute.Addr()}})
	if m := recv(); m.Kind != wire.MsgStarted || m.Attempt != 1 {
		t.Fatalf("got %+v", m)
	}
	free := &chunk.Op{Kind: "assemble", Shape: []int{3}, DType: tensor.Int64, Args: chunk.AssembleArgs{}}
	cc.Send(&wire.Msg{Kind: wire.MsgSubmit, Job: 1, Key: 0, Attempt: 2, Op: free, ID: 42, Inputs: []core.Location{}, Addrs: []string{}})
	for m := recv(); m.Kind != wire.MsgDone; m = recv() {
		if m.Kind != wire.MsgStarted {
			t.Fatalf("got %+v", m)
		}
	}
	cc.Send(&wire.Msg{Kind: wire.MsgCancel, Job: 1, Key: 0, Attempt: 1})
	if m := recv(); m.Kind != wire.MsgCancelled || m.Attempt != 1 {
		t.Fatalf("got %+v", m)
	}
	if _, ok := w.Store().Get(42); !ok {
		t.Error("the cancelled first attempt dropped the second's chunk")
	}
	cc.Close()
	mute.Close()
	w.Close()
	checkGoroutines(t, g0)
}

// TestFetchesBounded submits more ops than a worker has slots, every one
// reading an input from a peer that never answers: the worker opens one
// fetch per slot, no more, so that a slow peer cannot make it buffer more
// than its slots' inputs.
func TestFetchesBounded(t *testing.T) {
	g0 := runtime.NumGoroutine()
	w, err := worker.Start(context.Background(), worker.Config{Name: "w", Slots: 2, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	mute := newMutePeer(t) // accepts connections, never answers
	cc, _ := dialControl(t, w)
	op := &chunk.Op{Kind: "assemble", Inputs: []int{0}, Shape: []int{1}, DType: tensor.Float64, Args: chunk.AssembleArgs{}}
	for k := 0; k < 6; k++ {
		cc.Send(&wire.Msg{Kind: wire.MsgSubmit, Job: 1, Key: k, Attempt: 1, Op: op, ID: uint64(100 + k),
			Inputs: []core.Location{{ID: uint64(k), Worker: "peer", NBytes: 8}}, Addrs: []string{mute.Addr()}})
	}
	// Both slots' ops reach the peer, and the four others stay queued:
	// only a running op fetches, so no fetch more is opened after this.
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for {
		changed := mute.Changed()
		if mute.Accepted() >= 2 {
			break
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("%d fetches open for 2 slots after 5 s", mute.Accepted())
		}
	}
	if !waitWorkers([]*worker.Worker{w}, 5*time.Second, func() bool { return strings.Contains(w.Status(), "running 2\nqueued 4\n") }) {
		t.Errorf("status:\n%s", w.Status())
	}
	if n := mute.Accepted(); n != 2 {
		t.Errorf("%d fetches open for 2 slots", n)
	}
	cc.Close() // the worker cancels what the connection submitted
	mute.Close()
	w.Close()
	checkGoroutines(t, g0)
}

// TestFetchFailureNamesPeer submits ops whose inputs live on a worker that
// is gone (nothing listens at its address): the failure the worker reports
// names that peer, so that the scheduler does not count it against the op.
// Two inputs from one peer are fetched together, and fail alike.
func TestFetchFailureNamesPeer(t *testing.T) {
	for _, ids := range [][]uint64{{7}, {7, 8}} {
		g0 := runtime.NumGoroutine()
		w, err := worker.Start(context.Background(), worker.Config{Name: "w", Slots: 1, Fast: true})
		if err != nil {
			t.Fatal(err)
		}
		gone := newMutePeer(t)
		addr := gone.Addr()
		gone.Close() // its address now refuses connections
		cc, recv := dialControl(t, w)
		op := &chunk.Op{Kind: "assemble", Inputs: make([]int, len(ids)), Shape: []int{len(ids)}, DType: tensor.Float64, Args: chunk.AssembleArgs{}}
		sub := &wire.Msg{Kind: wire.MsgSubmit, Job: 1, Key: 3, Attempt: 1, Op: op, ID: 103}
		for _, id := range ids {
			sub.Inputs = append(sub.Inputs, core.Location{ID: id, Worker: "w-gone", NBytes: 8})
			sub.Addrs = append(sub.Addrs, addr)
		}
		cc.Send(sub)
		var m wire.Msg
		for m.Kind != wire.MsgFailed {
			if m = recv(); m.Kind != wire.MsgStarted && m.Kind != wire.MsgFailed {
				t.Fatalf("got %+v", m)
			}
		}
		want := "fetch chunk 7 from w-gone"
		if len(ids) > 1 {
			want = "fetch chunks [7 8] from w-gone"
		}
		if m.Peer != "w-gone" || m.Final || !strings.Contains(m.Err, want) {
			t.Errorf("failure %+v: want a retryable fetch failure saying %q", m, want)
		}
		cc.Close()
		w.Close()
		checkGoroutines(t, g0)
	}
}

// dialControl opens a control connection to w, as a scheduler does, and
// reads the worker's first message (what it holds for nobody). recv reads
// the next message the worker sends, failing the test on an error or
// after 10 s without one.
func dialControl(t testing.TB, w *worker.Worker) (cc *wire.Conn, recv func() wire.Msg) {
	t.Helper()
	c, err := wire.Dial(context.Background(), w.Addr(), wire.ConnControl, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	dec := wire.NewDecoder(bufio.NewReader(c))
	var held wire.Msg
	if err := dec.Next(&held); err != nil || held.Kind != wire.MsgHeld {
		t.Fatalf("first message %+v, %v; want what the worker holds", held, err)
	}
	return wire.NewConn(c), func() wire.Msg {
		t.Helper()
		var m wire.Msg
		if err := dec.Next(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
}

// TestFetchAll reads several chunks from one worker in one exchange, in
// the order asked, twice on one pooled connection; a chunk it does not hold
// fails the exchange with an error naming it.
func TestFetchAll(t *testing.T) {
	w, err := worker.Start(context.Background(), worker.Config{Name: "w", Slots: 1, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	want := map[uint64]*tensor.Array{}
	for id := uint64(1); id <= 3; id++ {
		want[id] = ramp(tensor.Float64, []int{int(id)}, float64(id))
		w.Store().Put(id, want[id])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p := wire.NewPool(1<<20, nil)
	defer p.Close()
	for _, ids := range [][]uint64{{3, 1, 2}, {2, 2}} {
		got := make([]*tensor.Array, len(ids))
		if err := p.FetchAll(ctx, w.Addr(), ids, got); err != nil {
			t.Fatalf("fetchAll %v: %v", ids, err)
		}
		for i, id := range ids {
			if got[i] == nil || string(got[i].Data) != string(want[id].Data) {
				t.Errorf("fetchAll %v: chunk %d wrong", ids, id)
			}
		}
	}
	got := make([]*tensor.Array, 2)
	if err := p.FetchAll(ctx, w.Addr(), []uint64{1, 9}, got); err == nil || !strings.Contains(err.Error(), "chunk 9") {
		t.Errorf("fetchAll of a missing chunk: %v", err)
	}
	if a, err := p.Fetch(ctx, w.Addr(), 3); err != nil || string(a.Data) != string(want[3].Data) {
		t.Errorf("fetch after a failed fetchAll: %v", err)
	}
}

// TestFetchRange reads parts of a chunk from a worker's chunk service (a
// shuffle's pieces, chunk.Range): only the part's bytes come, shaped as
// asked; between them whole fetches on the same pooled connection; a
// range past the chunk's end fails with a message saying so, and a chunk
// the worker does not hold names its ID.
func TestFetchRange(t *testing.T) {
	w, err := worker.Start(context.Background(), worker.Config{Name: "w", Slots: 1, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	a := ramp(tensor.Float64, []int{6, 4}, 0)
	w.Store().Put(5, a)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p := wire.NewPool(1<<20, nil)
	defer p.Close()
	for _, r := range []chunk.Range{{Off: 4, Shape: []int{2, 4}}, {Off: 23, Shape: []int{}}, {Off: 0, Shape: []int{24}}, {Off: 24, Shape: []int{0, 4}}} {
		r.DType = tensor.Float64
		got, err := p.FetchRange(ctx, w.Addr(), 5, r)
		if err != nil {
			t.Fatalf("range %v: %v", r, err)
		}
		want, _ := chunk.View(a, r)
		if !slices.Equal(got.Shape, r.Shape) || string(got.Data) != string(want.Data) {
			t.Errorf("range %v: got %v %v", r, got.Shape, got.Float64s())
		}
		if whole, err := p.Fetch(ctx, w.Addr(), 5); err != nil || string(whole.Data) != string(a.Data) {
			t.Errorf("whole fetch after range %v: %v", r, err)
		}
	}
	if _, err := p.FetchRange(ctx, w.Addr(), 5, chunk.Range{Off: 20, Shape: []int{5}, DType: tensor.Float64}); err == nil || !strings.Contains(err.Error(), "range of 5 elements at 20") {
		t.Errorf("a range past the end: %v", err)
	}
	if _, err := p.FetchRange(ctx, w.Addr(), 7, chunk.Range{Off: 0, Shape: []int{1}, DType: tensor.Float64}); err == nil || !strings.Contains(err.Error(), "chunk 7") {
		t.Errorf("a range of a chunk not held: %v", err)
	}
	if a2, err := p.Fetch(ctx, w.Addr(), 5); err != nil || string(a2.Data) != string(a.Data) {
		t.Errorf("fetch after the failed ranges: %v", err)
	}
}
