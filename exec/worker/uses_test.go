package worker

import (
	"testing"

	"marsfs/shm"
	"marsfs/tensor"
)

// TestQuotaCountsHeapChunks checks what the memory quota counts beside
// the running operands: a heap store's chunks, and the chunks a
// shared-memory store keeps in the heap (small ones), not those in shared
// memory.
func TestQuotaCountsHeapChunks(t *testing.T) {
	mem := NewMemStore()
	mem.Put(1, tensor.NewArray(tensor.Float64, []int{100}))
	if cfg := stateConfig("w", 1, 1<<20, mem); cfg.HeapChunks == nil || cfg.HeapChunks() != 800 {
		t.Error("heap store: HeapChunks does not count its 800 B")
	}
	st, err := shm.Open(shm.Options{Dir: t.TempDir(), SpillDir: t.TempDir(), Limit: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	arrays := shm.NewArrays(st)
	arrays.Put(1, tensor.NewArray(tensor.Float64, []int{100}))     // 800 B: heap
	arrays.Put(2, tensor.NewArray(tensor.Float64, []int{1 << 16})) // 512 KiB: shared memory
	cfg := stateConfig("w", 1, 1<<20, arrays)
	if cfg.HeapChunks == nil {
		t.Fatal("shared-memory store: its heap chunks are not counted")
	}
	if n := cfg.HeapChunks(); n != 800 {
		t.Errorf("shared-memory store: HeapChunks counts %d, want the 800 B in the heap", n)
	}
}
