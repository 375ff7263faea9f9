package worker

import (
	"container/heap"
	"math/rand"
	"testing"

	"marsfs/exec/wire"
)

// TestTaskQueue checks the worker's queue: priority order, removal of a
// connection's tasks keeping the heap sound.
func TestTaskQueue(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	a, b := &wire.Conn{}, &wire.Conn{}
	for iter := 0; iter < 200; iter++ {
		w := &Worker{running: map[wire.RunKey]*task{}, owner: map[uint64]wire.RunKey{}, store: NewMemStore()}
		n := rng.Intn(40)
		for i := 0; i < n; i++ {
			cc := a
			if rng.Intn(2) == 0 {
				cc = b
			}
			heap.Push(&w.queue, &task{RunKey: wire.RunKey{Key: i}, prio: rng.Intn(10), seq: uint64(i), ctl: cc})
		}
		w.dropConn(a)
		for i, tk := range w.queue {
			if tk.ctl != b || tk.index != i {
				t.Fatalf("iter %d: task %d (index %d) of the dropped connection or misplaced", iter, i, tk.index)
			}
		}
		prev := &task{prio: -1}
		for w.queue.Len() > 0 {
			tk := heap.Pop(&w.queue).(*task)
			if tk.prio < prev.prio || tk.prio == prev.prio && tk.seq < prev.seq {
				t.Fatalf("iter %d: popped (%d, %d) after (%d, %d)", iter, tk.prio, tk.seq, prev.prio, prev.seq)
			}
			prev = tk
		}
	}
}
