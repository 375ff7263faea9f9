package sched

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/wire"
	"marsfs/exec/worker"
	"marsfs/shm"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// copyCounter is a shared-memory store that counts the chunks stored by a
// copy.
type copyCounter struct {
	*shm.Arrays
	puts atomic.Int64
}

func (c *copyCounter) Put(id uint64, a *tensor.Array) error {
	c.puts.Add(1)
	return c.Arrays.Put(id, a)
}

// TestKernelWritesStore runs ops on a worker with a shared-memory store:
// the kernels write their outputs into the store's segments, which the
// worker seals, so that no output is copied; a kernel whose output is an
// array of its own is stored by a copy.
func TestKernelWritesStore(t *testing.T) {
	st, err := shm.Open(shm.Options{Dir: t.TempDir(), SpillDir: t.TempDir(), Limit: 1 << 20, Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	store := &copyCounter{Arrays: smallInShm(shm.NewArrays(st))}
	w, err := worker.Start(context.Background(), worker.Config{Name: "w", Slots: 2, Fast: true, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	in := ramp(tensor.Float64, []int{1000}, 1)
	if err := st.Put(1, in); err != nil {
		t.Fatal(err)
	}
	cc, recv := dialControl(t, w)
	defer cc.Close()
	run := func(key int, op *chunk.Op, id uint64, inputs ...uint64) {
		t.Helper()
		m := &wire.Msg{Kind: wire.MsgSubmit, Job: 1, Key: key, Attempt: 1, Op: op, ID: id, Inputs: []core.Location{}, Addrs: []string{}}
		for _, in := range inputs {
			m.Inputs = append(m.Inputs, core.Location{ID: in, Worker: "w", NBytes: 8000})
			m.Addrs = append(m.Addrs, w.Addr())
		}
		cc.Send(m)
		for {
			r := recv()
			if r.Kind == wire.MsgDone {
				return
			}
			if r.Kind != wire.MsgStarted {
				t.Fatalf("got %+v", r)
			}
		}
	}
	add := &chunk.Op{Kind: tensor.OpAdd, Inputs: []int{0, 1}, Shape: []int{1000}, DType: tensor.Float64,
		Args: chunk.ElemArgs{Compute: tensor.Float64}}
	run(0, add, 2, 1, 1)
	if n := store.puts.Load(); n != 0 {
		t.Errorf("%d chunks stored by a copy, want none", n)
	}
	v, err := st.Get(2)
	if err != nil {
		t.Fatal(err)
	}
	got, want := v.Array().Float64s(), in.Float64s()
	for i := range want {
		if got[i] != 2*want[i] {
			t.Fatalf("element %d is %v, want %v", i, got[i], 2*want[i])
		}
	}
	v.Release()
	// A reduction's combine makes its partial in the store too (it was
	// made in the heap and copied in).
	combine := &chunk.Op{Kind: "sum.combine", Inputs: []int{0, 1}, Shape: []int{1000}, DType: tensor.Float64,
		Args: chunk.ReduceArgs{Op: tensor.OpSum, In: tensor.Float64, Axes: []int{0}}}
	run(1, combine, 3, 1, 2)
	if n := store.puts.Load(); n != 0 {
		t.Errorf("%d chunks stored by a copy, want none", n)
	}
	if v, err = st.Get(3); err != nil {
		t.Fatal(err)
	}
	if got := v.Array().Float64s(); got[999] != 3*want[999] {
		t.Errorf("combined element 999 is %v, want %v", got[999], 3*want[999])
	}
	v.Release()
	if ents, _ := os.ReadDir(st.Dir()); len(ents) != 3 {
		t.Errorf("%d files in the store, want the 3 chunks: an unused output buffer was left", len(ents))
	}
	// The inputs the kernels read stay pinned until collected.
	if !waitUnpinned(st, 5*time.Second) {
		t.Errorf("chunks left pinned: %v", st.Stats())
	}
}
