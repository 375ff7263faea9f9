package shm

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	"marsfs/tensor"
)

// chunkStore is the method set of the runtime's chunk store, which Arrays
// provides.
type chunkStore interface {
	Put(id uint64, a *tensor.Array) error
	Get(id uint64) (*tensor.Array, bool)
	Delete(id uint64) bool
	Len() int
	Bytes() int64
}

var _ chunkStore = (*Arrays)(nil)

func TestArrays(t *testing.T) {
	s := openTest(t, 4*8192, -1)
	a := NewArrays(s)
	a.SetSmall(0) // small chunks too in segments
	x := pattern(1, 1000)
	if err := a.Put(1, x); err != nil {
		t.Fatal(err)
	}
	got, ok := a.Get(1)
	if !ok || !bytes.Equal(got.Data, x.Data) || got.DType != x.DType || a.Len() != 1 || a.Bytes() != 8000 || a.Stats().Used != 8192 {
		t.Fatalf("Get: %v %v, len %d bytes %d", got, ok, a.Len(), a.Bytes())
	}
	if _, ok := a.Get(2); ok {
		t.Fatal("Get of a missing chunk")
	}
	if st := s.Stats(); st.Pinned != 1 {
		t.Fatalf("pinned = %d", st.Pinned)
	}
	runtime.KeepAlive(got)
	got = nil
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().Pinned != 0 {
		if time.Now().After(deadline) {
			t.Fatal("pin not released after the array became unreachable")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if !a.Delete(1) || a.Len() != 0 {
		t.Fatal("Delete")
	}
}

// TestArraysZombieRoom fills the store with chunks deleted while arrays of
// them are still reachable; once those arrays are dropped, Put reclaims the
// room instead of failing.
func TestArraysZombieRoom(t *testing.T) {
	s := openTest(t, 4*8192, -1)
	a := NewArrays(s)
	a.SetSmall(0) // small chunks too in segments
	held := make([]*tensor.Array, 4)
	for id := range uint64(4) {
		if err := a.Put(id, pattern(id, 1000)); err != nil {
			t.Fatal(err)
		}
		held[id], _ = a.Get(id)
		a.Delete(id)
	}
	if st := s.Stats(); st.Pinned != 4 || st.Used != 4*8192 {
		t.Fatalf("stats: %+v", st)
	}
	for id, h := range held {
		if !bytes.Equal(h.Data, pattern(uint64(id), 1000).Data) {
			t.Fatal("deleted chunk changed while read")
		}
	}
	held = nil
	if err := a.Put(9, pattern(9, 1000)); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(held)
}

// TestArraysSmallInHeap checks that chunks under the small size stay in the
// heap, beside the large ones in segments, and that storing an ID again
// moves it between the two.
func TestArraysSmallInHeap(t *testing.T) {
	s := openTest(t, 8*8192, -1)
	a := NewArrays(s)
	a.SetSmall(4096)
	small, large := pattern(1, 10), pattern(2, 1000)
	if err := a.Put(1, small); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(2, large); err != nil {
		t.Fatal(err)
	}
	if a.Len() != 2 || a.Bytes() != 8080 || s.Len() != 1 {
		t.Fatalf("len %d bytes %d, store holds %d", a.Len(), a.Bytes(), s.Len())
	}
	if _, ok := a.Path(1); ok {
		t.Error("a small chunk has a file")
	}
	x, release, ok := a.Pin(1)
	if !ok || !bytes.Equal(x.Data, small.Data) {
		t.Fatal("Pin of a small chunk")
	}
	release()
	if x, _, _ := a.Alloc(tensor.Float64, []int{10}, true); x != nil {
		t.Error("Alloc gave a segment to a small chunk")
	}
	if !a.Small(80) || !a.Small(4095) || a.Small(4096) {
		t.Error("Small does not say which chunks stay in the heap")
	}
	var status bytes.Buffer
	a.WriteStatus(&status)
	if !strings.Contains(status.String(), "heap_chunks 1\nheap_bytes 80\n") {
		t.Errorf("status:\n%s", status.String())
	}
	// Chunk 1 grows into a segment, chunk 2 shrinks into the heap.
	if err := a.Put(1, large); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(2, small); err != nil {
		t.Fatal(err)
	}
	if a.Len() != 2 || a.Bytes() != 8080 || s.Len() != 1 || !s.Has(1) {
		t.Fatalf("after moves: len %d bytes %d, store holds %d", a.Len(), a.Bytes(), s.Len())
	}
	for id, want := range map[uint64]*tensor.Array{1: large, 2: small} {
		if got, ok := a.Get(id); !ok || !bytes.Equal(got.Data, want.Data) {
			t.Errorf("chunk %d wrong after moving", id)
		}
	}
	if !a.Delete(2) || !a.Delete(1) || a.Delete(1) || a.Len() != 0 || a.Bytes() != 0 {
		t.Errorf("after deletes: len %d bytes %d", a.Len(), a.Bytes())
	}
}

// TestArraysPinPrivate checks that PinPrivate reads a spilled chunk from its
// spill file, leaving it on disk, where Pin brings it back.
func TestArraysPinPrivate(t *testing.T) {
	s := openTest(t, 4*8192, -1)
	a := NewArrays(s)
	a.SetSmall(0)
	x := pattern(1, 1000)
	if err := a.Put(1, x); err != nil {
		t.Fatal(err)
	}
	if err := s.Spill(1); err != nil {
		t.Fatal(err)
	}
	got, release, ok := a.PinPrivate(1)
	if !ok || !bytes.Equal(got.Data, x.Data) {
		t.Fatal("PinPrivate of a spilled chunk")
	}
	release()
	if st := s.Stats(); st.OnDisk != 1 || st.Reloaded != 0 || st.Pinned != 0 {
		t.Fatalf("after PinPrivate: %v", st)
	}
	got, release, ok = a.Pin(1)
	if !ok || !bytes.Equal(got.Data, x.Data) {
		t.Fatal("Pin of a spilled chunk")
	}
	release()
	if st := s.Stats(); st.InMemory != 1 || st.Reloaded != 8000 {
		t.Fatalf("after Pin: %v", st)
	}
}
