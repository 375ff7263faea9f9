package sched

import (
	"context"
	"strings"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/wire"
	"marsfs/exec/worker"
	"marsfs/shm"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// TestSpillFollowsQueuedUses checks that the worker tells its store which
// chunks its queued ops read: when the store must spill, a chunk an op
// waits for stays in memory and one nobody reads goes, though it was used
// more recently.
func TestSpillFollowsQueuedUses(t *testing.T) {
	const n = 1 << 16 // 512 KiB chunks
	st, err := shm.Open(shm.Options{Dir: t.TempDir(), SpillDir: t.TempDir(), Limit: 2*n*8 + 2*4096, KeepFree: -1, Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w, err := worker.Start(context.Background(), worker.Config{Name: "w", Slots: 1, Fast: true, Store: shm.NewArrays(st)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	mute := newMutePeer(t)
	defer mute.Close()
	for id := uint64(1); id <= 2; id++ {
		if err := st.Put(id, ramp(tensor.Float64, []int{n}, float64(id))); err != nil {
			t.Fatal(err)
		}
	}
	cc, _ := dialControl(t, w)
	defer cc.Close()
	op := func(inputs ...int) *chunk.Op {
		return &chunk.Op{Kind: "assemble", Inputs: inputs, Shape: []int{1}, DType: tensor.Float64, Args: chunk.AssembleArgs{}}
	}
	// The one slot is taken by an op blocked on a peer; the op reading
	// chunk 1 waits in the queue.
	cc.Send(&wire.Msg{Kind: wire.MsgSubmit, Job: 1, Key: 0, Attempt: 1, Priority: 0, Op: op(0), ID: 10,
		Inputs: []core.Location{{ID: 5, Worker: "peer", NBytes: 8}}, Addrs: []string{mute.Addr()}})
	cc.Send(&wire.Msg{Kind: wire.MsgSubmit, Job: 1, Key: 1, Attempt: 1, Priority: 1, Op: op(0), ID: 11,
		Inputs: []core.Location{{ID: 1, Worker: "w", NBytes: n * 8}}, Addrs: []string{w.Addr()}})
	if !waitWorkers([]*worker.Worker{w}, 5*time.Second, func() bool { return strings.Contains(w.Status(), "queued 1\n") }) {
		t.Fatalf("status:\n%s", w.Status())
	}
	// Chunk 2 is the more recently used.
	v, err := st.Get(2)
	if err != nil {
		t.Fatal(err)
	}
	v.Release()
	if err := st.Put(3, ramp(tensor.Float64, []int{n}, 3)); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[uint64]bool{1: true, 2: false} {
		p, _ := st.Path(id)
		if resident := strings.HasPrefix(p, st.Dir()); resident != want {
			t.Errorf("chunk %d resident %v, want %v (%s)", id, resident, want, p)
		}
	}
}
