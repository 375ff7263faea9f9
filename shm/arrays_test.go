package shm

import (
	"bytes"
	"runtime"
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
