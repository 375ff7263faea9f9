package worker

import (
	"context"
	"slices"
	"sync"
	"time"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// small reports whether the worker's store keeps chunks of nbytes in the
// heap.
func (w *Worker) small(nbytes int64) bool {
	ss, ok := w.store.(SmallStore)
	return ok && ss.Small(nbytes)
}

// localInput returns chunk id of the worker's store for task t's kernel to
// read, adding to t.pins what releases it. When t is the last op queued
// here to read it, a spilled chunk is not brought back into shared memory,
// where it would evict chunks still to be read, but read from its spill
// file (the seeds' loading into private memory).
//
// A task reading only part of the chunk (part, a shuffle's piece) never
// brings a spilled chunk back either: it reads the pages of its part.
func (w *Worker) localInput(t *Task, id uint64, nbytes int64, part bool) (*tensor.Array, bool) {
	ps, ok := w.store.(PinStore)
	if !ok || w.small(nbytes) {
		return w.store.Get(id) // a chunk in the heap has no pin
	}
	pin := ps.Pin
	w.mu.Lock()
	if part || w.st.LastUse(t, id) {
		pin = ps.PinPrivate
	}
	w.mu.Unlock()
	x, release, ok := pin(id)
	if ok {
		t.pins = append(t.pins, release)
	}
	return x, ok
}

// outBuf is the array a task's kernel writes its output into, when the
// worker's store gives one.
type outBuf struct {
	mu    sync.Mutex
	took  time.Duration // how long taking x from the store took: the run's allocating phase
	x     *tensor.Array
	seal  func(id uint64) error
	abort func()
}

// withOutBuf returns ctx under which op's kernel makes its output in st, and
// the buffer that records it. Only one array of op's dtype and shape is
// taken from the store: the kernel's other arrays are scratch.
func withOutBuf(ctx context.Context, st Store, op *chunk.Op) (context.Context, *outBuf) {
	as, ok := st.(AllocStore)
	if !ok {
		return ctx, nil
	}
	if ss, ok := st.(SmallStore); ok && ss.Small(int64(op.NBytes())) {
		return ctx, nil
	}
	b := &outBuf{}
	return tensor.WithAlloc(ctx, func(dt tensor.DType, shape []int, zero bool) *tensor.Array {
		if dt != op.DType || !slices.Equal(shape, op.Shape) {
			return nil
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.x != nil {
			return nil
		}
		start := time.Now()
		b.x, b.seal, b.abort = as.Alloc(dt, shape, zero)
		b.took = time.Since(start)
		return b.x
	}), b
}

// store puts out, the kernel's output, into st as chunk id: by sealing the
// buffer when out is it, else by a copy (the buffer, unused, is dropped).
func (b *outBuf) store(st Store, id uint64, out *tensor.Array) error {
	if b != nil && b.holds(out) {
		b.x = nil
		return b.seal(id)
	}
	b.drop()
	return st.Put(id, out)
}

// holds reports whether out is the buffer's array.
func (b *outBuf) holds(out *tensor.Array) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.x == nil || out == nil || len(out.Data) != len(b.x.Data) {
		return false
	}
	return len(out.Data) == 0 && out == b.x || len(out.Data) > 0 && &out.Data[0] == &b.x.Data[0]
}

// drop releases the buffer unless it was stored; b may be nil.
func (b *outBuf) drop() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.x != nil {
		b.x = nil
		b.abort()
	}
}

// newSpill returns the bytes the worker's store spilled since the last
// call, for the scheduler to count against the job whose op just ended.
func (w *Worker) newSpill() int64 {
	st, ok := w.store.(interface{ SpilledBytes() int64 })
	if !ok {
		return 0
	}
	cur := st.SpilledBytes()
	for {
		old := w.spilled.Load()
		if cur <= old {
			return 0
		}
		if w.spilled.CompareAndSwap(old, cur) {
			return cur - old
		}
	}
}
