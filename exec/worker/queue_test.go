package worker

import (
	"container/heap"
	"math/rand"
	"testing"

	"marsfs/exec/wire"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// TestTaskQueue checks the worker's queue: priority order, removal of a
// connection's tasks keeping the heap sound.
func TestTaskQueue(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	a, b := &wire.Conn{}, &wire.Conn{}
	op := &chunk.Op{Kind: "full", Shape: []int{1}, DType: tensor.Float64}
	for iter := 0; iter < 200; iter++ {
		// No slot: every task stays queued.
		st := NewState(StateConfig{Name: "w", Slots: 0})
		st.ConnOpened()
		st.ConnOpened()
		n := rng.Intn(40)
		for i := 0; i < n; i++ {
			cc := a
			if rng.Intn(2) == 0 {
				cc = b
			}
			st.Submit([]*Task{{RunKey: wire.RunKey{Key: i}, Prio: rng.Intn(10), Op: op, ID: uint64(i + 1), Conn: cc}})
		}
		st.ConnClosed(a)
		for i, tk := range st.queue {
			if tk.Conn != b || tk.index != i {
				t.Fatalf("iter %d: task %d (index %d) of the dropped connection or misplaced", iter, i, tk.index)
			}
		}
		prev := &Task{Prio: -1}
		for st.queue.Len() > 0 {
			tk := heap.Pop(&st.queue).(*Task)
			if tk.Prio < prev.Prio || tk.Prio == prev.Prio && tk.Seq < prev.Seq {
				t.Fatalf("iter %d: popped (%d, %d) after (%d, %d)", iter, tk.Prio, tk.Seq, prev.Prio, prev.Seq)
			}
			prev = tk
		}
	}
}
